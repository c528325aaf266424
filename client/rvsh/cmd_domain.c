/* rvsh: the domain commands: list, look up, define, lifecycle, console. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "console.h"
#include "rvsh.h"

/* A number is an id, 36 characters a UUID, anything else a name; each
 * way is tried in that order when the command allows it. */
rv_dom *lookup_domain(shell *sh, const char *text, unsigned int how)
{
    int id;
    rv_dom *dom = NULL;
    if ((how & BY_ID) && parse_int(text, &id) == 0 && id >= 0)
        dom = rv_domain_lookup_by_id(sh->conn, id);
    if (!dom && (how & BY_UUID) && strlen(text) == RV_UUID_STRING_BUFLEN - 1)
        dom = rv_domain_lookup_by_uuid_string(sh->conn, text);
    if (!dom && (how & BY_NAME))
        dom = rv_domain_lookup_by_name(sh->conn, text);
    if (!dom) {
        const rv_error_info *e = rv_last_error();
        error_line("failed to get domain '%s'", text);
        /* "not found" says nothing more; a broken connection does. */
        if (e && e->code != RV_ERROR_NO_DOMAIN && e->code != RV_ERROR_INVALID_ARG)
            lib_error();
    }
    return dom;
}

/* list: active domains by id, then inactive ones by name, as virsh. */
static int compare_doms(const void *pa, const void *pb)
{
    rv_dom *a = *(rv_dom *const *)pa, *b = *(rv_dom *const *)pb;
    int ia = rv_domain_get_id(a), ib = rv_domain_get_id(b);
    if (ia >= 0 && ib >= 0)
        return (ia > ib) - (ia < ib);
    if (ia < 0 && ib < 0)
        return strcasecmp(rv_domain_get_name(a), rv_domain_get_name(b));
    return ia >= 0 ? -1 : 1;
}

static int cmd_list(shell *sh, const command *cmd, const cmd_args *a)
{
    unsigned int flags = RV_CONNECT_LIST_DOMAINS_ACTIVE;
    if (has_opt(cmd, a, "all"))
        flags = 0;
    else if (has_opt(cmd, a, "inactive"))
        flags = RV_CONNECT_LIST_DOMAINS_INACTIVE;

    rv_dom **doms = NULL;
    int n = rv_connect_list_all_domains(sh->conn, &doms, flags);
    if (n < 0) {
        error_line("Failed to list domains");
        lib_error();
        return -1;
    }
    qsort(doms, (size_t)n, sizeof(*doms), compare_doms);

    /* One row per domain: id text, name, state text. */
    char (*ids)[16] = calloc((size_t)n + 1, sizeof(*ids));
    const char **states = calloc((size_t)n + 1, sizeof(*states));
    int rc = ids && states ? 0 : -1;
    if (rc < 0)
        error_line("out of memory");
    for (int i = 0; rc == 0 && i < n; i++) {
        int id = rv_domain_get_id(doms[i]), state;
        if (id >= 0)
            snprintf(ids[i], sizeof(ids[i]), "%d", id);
        else
            strcpy(ids[i], "-");
        if (rv_domain_get_state(doms[i], &state, NULL, 0) < 0) {
            error_line("Failed to get the state of domain '%s'", rv_domain_get_name(doms[i]));
            lib_error();
            rc = -1;
            break;
        }
        states[i] = state_name(state);
    }

    if (rc == 0 && (sh->json || has_opt(cmd, a, "json"))) {
        putchar('[');
        for (int i = 0; i < n; i++) {
            char uuid[RV_UUID_STRING_BUFLEN];
            int first = 1;
            rv_domain_get_uuid_string(doms[i], uuid);
            printf("%s{", i ? ", " : "");
            int id = rv_domain_get_id(doms[i]);
            json_num_field("id", (unsigned long long)id, id >= 0, &first);
            json_str_field("name", rv_domain_get_name(doms[i]), &first);
            json_str_field("uuid", uuid, &first);
            json_str_field("state", states[i], &first);
            putchar('}');
        }
        puts("]");
    } else if (rc == 0) {
        size_t w[3] = { strlen("Id"), strlen("Name"), strlen("State") };
        for (int i = 0; i < n; i++) {
            size_t c[3] = { strlen(ids[i]), text_width(rv_domain_get_name(doms[i])),
                            strlen(states[i]) };
            for (int k = 0; k < 3; k++)
                if (c[k] > w[k])
                    w[k] = c[k];
        }
        putchar(' ');
        print_cell("Id", w[0], 0);
        print_cell("Name", w[1], 0);
        print_cell("State", w[2], 1);
        putchar('\n');
        for (size_t k = 0; k < w[0] + w[1] + w[2] + 9; k++)
            putchar('-');
        putchar('\n');
        for (int i = 0; i < n; i++) {
            putchar(' ');
            print_cell(ids[i], w[0], 0);
            print_cell(rv_domain_get_name(doms[i]), w[1], 0);
            print_cell(states[i], w[2], 1);
            putchar('\n');
        }
    }
    for (int i = 0; i < n; i++)
        rv_domain_free(doms[i]);
    free(doms);
    free(ids);
    free(states);
    return rc;
}

static int cmd_dominfo(shell *sh, const command *cmd, const cmd_args *a)
{
    rv_dom *dom = lookup_domain(sh, a->value, cmd->lookup);
    if (!dom)
        return -1;
    int json = sh->json || has_opt(cmd, a, "json");
    int id = rv_domain_get_id(dom), rc = 0;
    char uuid[RV_UUID_STRING_BUFLEN];
    rv_domain_get_uuid_string(dom, uuid);

    /* Each query may fail alone; virsh then leaves its line out. */
    char *os_type = rv_domain_get_os_type(dom);
    rv_domain_info info;
    int have_info = rv_domain_get_info(dom, &info) == 0;
    int persistent = rv_domain_is_persistent(dom);
    int autostart = -1;
    if (rv_domain_get_autostart(dom, &autostart) < 0)
        autostart = -1;
    int managed_save = rv_domain_has_managed_save_image(dom, 0);
    rv_security_model model;
    rv_security_label label;
    int have_model = rv_node_get_security_model(sh->conn, &model) == 0;
    if (!have_model && rv_last_error() && rv_last_error()->code != RV_ERROR_NO_SUPPORT) {
        lib_error();
        rc = -1;
        goto out;
    }
    int show_security = have_model && model.model[0];
    int have_label = 0;
    if (show_security) {
        if (rv_domain_get_security_label(dom, &label) < 0) {
            lib_error();
            rc = -1;
            goto out;
        }
        have_label = label.label[0] != '\0';
    }
    char **messages = NULL;
    int nmessages = rv_domain_get_messages(dom, &messages, 0);

    if (json) {
        int first = 1;
        putchar('{');
        json_num_field("id", (unsigned long long)id, id >= 0, &first);
        json_str_field("name", rv_domain_get_name(dom), &first);
        json_str_field("uuid", uuid, &first);
        json_str_field("os_type", os_type, &first);
        json_str_field("state", have_info ? state_name(info.state) : NULL, &first);
        json_num_field("cpus", have_info ? info.nr_virt_cpu : 0, have_info, &first);
        json_num_field("cpu_time_ns", have_info ? info.cpu_time : 0, have_info, &first);
        json_num_field("max_memory_kib", have_info ? info.max_mem : 0, have_info, &first);
        json_num_field("used_memory_kib", have_info ? info.memory : 0, have_info, &first);
        json_bool_field("persistent", persistent, &first);
        json_bool_field("autostart", autostart, &first);
        json_bool_field("managed_save", managed_save, &first);
        json_str_field("security_model", show_security ? model.model : NULL, &first);
        json_str_field("security_doi", show_security ? model.doi : NULL, &first);
        json_str_field("security_label", have_label ? label.label : NULL, &first);
        json_bool_field("security_enforcing", have_label ? label.enforcing : -1, &first);
        puts("}");
    } else {
        if (id >= 0)
            printf("%-15s %d\n", "Id:", id);
        else
            printf("%-15s %s\n", "Id:", "-");
        printf("%-15s %s\n", "Name:", rv_domain_get_name(dom));
        printf("%-15s %s\n", "UUID:", uuid);
        if (os_type)
            printf("%-15s %s\n", "OS Type:", os_type);
        if (have_info) {
            printf("%-15s %s\n", "State:", state_name(info.state));
            printf("%-15s %u\n", "CPU(s):", info.nr_virt_cpu);
            if (info.cpu_time != 0)
                printf("%-15s %.1lfs\n", "CPU time:", (double)info.cpu_time / 1000000000.0);
            if (info.max_mem != UINT_MAX)
                printf("%-15s %llu KiB\n", "Max memory:", info.max_mem);
            else
                printf("%-15s %s\n", "Max memory:", "no limit");
            printf("%-15s %llu KiB\n", "Used memory:", info.memory);
        }
        printf("%-15s %s\n", "Persistent:", persistent < 0 ? "unknown" : persistent ? "yes" : "no");
        if (autostart >= 0)
            printf("%-15s %s\n", "Autostart:", autostart ? "enable" : "disable");
        printf("%-15s %s\n", "Managed save:",
               managed_save < 0 ? "unknown" : managed_save ? "yes" : "no");
        if (show_security) {
            printf("%-15s %s\n", "Security model:", model.model);
            printf("%-15s %s\n", "Security DOI:", model.doi);
            if (have_label)
                printf("%-15s %s (%s)\n", "Security label:", label.label,
                       label.enforcing ? "enforcing" : "permissive");
        }
        for (int i = 0; i < nmessages; i++)
            printf("%-15s %s\n", i == 0 ? "Messages:" : "", messages[i]);
    }
    for (int i = 0; i < nmessages; i++)
        free(messages[i]);
    free(messages);
out:
    free(os_type);
    rv_domain_free(dom);
    return rc;
}

static int cmd_domstate(shell *sh, const command *cmd, const cmd_args *a)
{
    rv_dom *dom = lookup_domain(sh, a->value, cmd->lookup);
    if (!dom)
        return -1;
    int state, reason, rc = rv_domain_get_state(dom, &state, &reason, 0);
    if (rc < 0)
        lib_error();
    else if (has_opt(cmd, a, "reason"))
        printf("%s (%s)\n", state_name(state), reason_name(state, reason));
    else
        printf("%s\n", state_name(state));
    rv_domain_free(dom);
    return rc;
}

static int cmd_dumpxml(shell *sh, const command *cmd, const cmd_args *a)
{
    rv_dom *dom = lookup_domain(sh, a->value, cmd->lookup);
    if (!dom)
        return -1;
    char *xml = rv_domain_get_xml_desc(dom, 0);
    if (xml)
        fputs(xml, stdout);
    else
        lib_error();
    free(xml);
    rv_domain_free(dom);
    return xml ? 0 : -1;
}

/* define and create: a domain from an XML file. */
static int from_file(shell *sh, const char *path, int create)
{
    char *xml;
    if (read_file(path, &xml) < 0)
        return -1;
    rv_dom *dom = create ? rv_domain_create_xml(sh->conn, xml, 0) : rv_domain_define_xml(sh->conn, xml);
    free(xml);
    if (!dom) {
        error_line("Failed to %s domain from %s", create ? "create" : "define", path);
        lib_error();
        return -1;
    }
    printf("Domain '%s' %s from %s\n", rv_domain_get_name(dom), create ? "created" : "defined", path);
    rv_domain_free(dom);
    return 0;
}

static int cmd_define(shell *sh, const command *cmd, const cmd_args *a)
{
    (void)cmd;
    return from_file(sh, a->value, 0);
}

static int cmd_create(shell *sh, const command *cmd, const cmd_args *a)
{
    (void)cmd;
    return from_file(sh, a->value, 1);
}

/* The lifecycle commands (shutdown, reboot and undefine, which take
 * options, are in cmd_dommanage.c) differ in the call and the words they print. */
typedef struct lifecycle {
    const char *name;
    int (*op)(rv_dom *dom);
    const char *done;           /* "Domain 'x' <done>" */
    const char *verb;           /* "Failed to <verb> domain 'x'" */
} lifecycle;

static int op_start(rv_dom *d) { return rv_domain_create(d, 0); }

static int op_destroy(rv_dom *d) { return rv_domain_destroy(d, 0); }

static const lifecycle lifecycles[] = {
    { "start", op_start, "started", "start" },
    { "destroy", op_destroy, "destroyed", "destroy" },
    { "suspend", rv_domain_suspend, "suspended", "suspend" },
    { "resume", rv_domain_resume, "resumed", "resume" },
};

static int cmd_lifecycle(shell *sh, const command *cmd, const cmd_args *a)
{
    const lifecycle *lc = NULL;
    for (size_t i = 0; i < sizeof(lifecycles) / sizeof(lifecycles[0]); i++)
        if (strcmp(lifecycles[i].name, cmd->name) == 0)
            lc = &lifecycles[i];
    rv_dom *dom = lookup_domain(sh, a->value, cmd->lookup);
    if (!dom)
        return -1;
    int rc = -1;
    const char *name = rv_domain_get_name(dom);
    if (lc->op == op_start && rv_domain_get_id(dom) >= 0) {
        error_line("Domain is already active");
    } else if (lc->op(dom) < 0) {
        error_line("Failed to %s domain '%s'", lc->verb, name);
        lib_error();
    } else {
        printf("Domain '%s' %s\n", name, lc->done);
        rc = 0;
    }
    rv_domain_free(dom);
    return rc;
}

static int cmd_domid(shell *sh, const command *cmd, const cmd_args *a)
{
    rv_dom *dom = lookup_domain(sh, a->value, cmd->lookup);
    if (!dom)
        return -1;
    int id = rv_domain_get_id(dom);
    if (id >= 0)
        printf("%d\n", id);
    else
        puts("-");
    rv_domain_free(dom);
    return 0;
}

static int cmd_domuuid(shell *sh, const command *cmd, const cmd_args *a)
{
    rv_dom *dom = lookup_domain(sh, a->value, cmd->lookup);
    if (!dom)
        return -1;
    char uuid[RV_UUID_STRING_BUFLEN];
    rv_domain_get_uuid_string(dom, uuid);
    puts(uuid);
    rv_domain_free(dom);
    return 0;
}

static int cmd_domname(shell *sh, const command *cmd, const cmd_args *a)
{
    rv_dom *dom = lookup_domain(sh, a->value, cmd->lookup);
    if (!dom)
        return -1;
    puts(rv_domain_get_name(dom));
    rv_domain_free(dom);
    return 0;
}

/* console <domain> [--devname NAME] [--force] [--safe]: the guest's
 * console on this terminal until ^], as virsh console. */
static int cmd_console(shell *sh, const command *cmd, const cmd_args *a)
{
    rv_dom *dom = lookup_domain(sh, a->value, cmd->lookup);
    if (!dom)
        return -1;
    unsigned int flags = (has_opt(cmd, a, "force") ? 1 : 0) | (has_opt(cmd, a, "safe") ? 2 : 0);
    /* As virsh: a domain that is not running is refused here. */
    int state = 0, reason = 0;
    if (rv_domain_get_state(dom, &state, &reason, 0) < 0) {
        lib_error();
        rv_domain_free(dom);
        return -1;
    }
    if (state != RV_DOMAIN_RUNNING && !(flags & 1)) {
        error_line("The domain is not running");
        rv_domain_free(dom);
        return -1;
    }
    printf("Connected to domain '%s'\nEscape character is ^] (Ctrl + ])\n",
           rv_domain_get_name(dom));
    fflush(stdout);
    rv_stream *st = rv_stream_new(sh->conn, RV_STREAM_NONBLOCK);
    int rc = -1;
    if (!st || rv_domain_open_console(dom, a->opt_values[0], st, flags) < 0) {
        lib_error();
    } else {
        rc = rvsh_console_run(st);
        if (rc < 0)
            lib_error();
        else
            rv_stream_finish(st);
        printf("\n");
    }
    rv_stream_free(st);
    rv_domain_free(dom);
    return rc;
}

/* Bit order matters: parse_span reads values 1 (offset) and 2 (length). */
static const char *const opts_console[] = { "devname=", "force", "safe", NULL };
static const char *const opts_reason[] = { "reason", NULL };

const command rvsh_domain_commands[] = {
    { .name = "list", .run = cmd_list,
      .options = opts_list,
      .summary = "list domains (running ones; --all: all; --inactive: shut off ones)" },
    { .name = "dominfo", .run = cmd_dominfo, .arg = "domain", .lookup = BY_ANY,
      .options = opts_json,
      .summary = "domain information" },
    { .name = "console", .run = cmd_console, .arg = "domain", .lookup = BY_ANY,
      .options = opts_console,
      .summary = "connect to the guest's console (^] leaves)" },
    { .name = "domstate", .run = cmd_domstate, .arg = "domain", .lookup = BY_ANY,
      .options = opts_reason,
      .summary = "domain state (--reason: and why)" },
    { .name = "dumpxml", .run = cmd_dumpxml, .arg = "domain", .lookup = BY_ANY,
      .summary = "domain information in XML" },
    { .name = "define", .run = cmd_define, .arg = "file",
      .summary = "define (but don't start) a domain from an XML file" },
    { .name = "create", .run = cmd_create, .arg = "file",
      .summary = "create and start a transient domain from an XML file" },
    { .name = "start", .run = cmd_lifecycle, .arg = "domain", .lookup = BY_ANY,
      .summary = "start a defined domain" },
    { .name = "destroy", .run = cmd_lifecycle, .arg = "domain", .lookup = BY_ANY,
      .summary = "stop a domain at once" },
    { .name = "suspend", .run = cmd_lifecycle, .arg = "domain", .lookup = BY_ANY,
      .summary = "suspend a domain" },
    { .name = "resume", .run = cmd_lifecycle, .arg = "domain", .lookup = BY_ANY,
      .summary = "resume a suspended domain" },
    { .name = "domid", .run = cmd_domid, .arg = "domain", .lookup = BY_NAME | BY_UUID,
      .summary = "convert a domain name or UUID to its id" },
    { .name = "domuuid", .run = cmd_domuuid, .arg = "domain", .lookup = BY_NAME | BY_ID,
      .summary = "convert a domain name or id to its UUID" },
    { .name = "domname", .run = cmd_domname, .arg = "domain", .lookup = BY_ID | BY_UUID,
      .summary = "convert a domain id or UUID to its name" },
    { .name = NULL },
};
