/* rvsh: the network filter commands: nwfilter-list, nwfilter-dumpxml,
 * nwfilter-define, nwfilter-undefine, nwfilter-binding-list. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rvsh.h"


static int compare_nwfilters(const void *pa, const void *pb)
{
    return strcmp(((const rv_nwfilter_ref *)pa)->name, ((const rv_nwfilter_ref *)pb)->name);
}

static int cmd_nwfilter_list(shell *sh, const command *cmd, const cmd_args *a)
{
    rv_nwfilter_ref *filters = NULL;
    int n = rv_connect_list_all_nwfilters(sh->conn, &filters, 0);
    if (n < 0) {
        list_failed(sh, rv_connect_num_of_nwfilters, "network filters");
        return -1;
    }
    qsort(filters, (size_t)n, sizeof(*filters), compare_nwfilters);
    const char **cells = calloc((size_t)n * 2 + 1, sizeof(*cells));
    int rc = cells ? 0 : -1;
    for (int i = 0; rc == 0 && i < n; i++) {
        cells[i * 2] = filters[i].uuid;
        cells[i * 2 + 1] = filters[i].name;
    }
    if (rc < 0) {
        error_line("out of memory");
    } else if (sh->json || has_opt(cmd, a, "json")) {
        putchar('[');
        for (int i = 0; i < n; i++) {
            int first = 1;
            printf("%s{", i ? ", " : "");
            json_str_field("uuid", filters[i].uuid, &first);
            json_str_field("name", filters[i].name, &first);
            putchar('}');
        }
        puts("]");
    } else {
        static const char *const heads[] = { "UUID", "Name" };
        print_table(heads, 2, cells, (size_t)n);
    }
    free(cells);
    rv_nwfilter_refs_free(filters, n);
    return rc;
}

/* The filter named by UUID or name (virsh's order: by UUID when the
 * text is one, then by name), with virsh's error lines. */
static int lookup_nwfilter(shell *sh, const char *text, rv_nwfilter_ref *filter)
{
    int rc = -1;
    if (strlen(text) == RV_UUID_STRING_BUFLEN - 1)
        rc = rv_nwfilter_lookup_by_uuid_string(sh->conn, text, filter);
    if (rc < 0)
        rc = rv_nwfilter_lookup_by_name(sh->conn, text, filter);
    if (rc < 0) {
        error_line("failed to get nwfilter '%s'", text);
        lib_error();
    }
    return rc;
}

static int cmd_nwfilter_dumpxml(shell *sh, const command *cmd, const cmd_args *a)
{
    (void)cmd;
    rv_nwfilter_ref filter = { .name = NULL };
    if (lookup_nwfilter(sh, a->value, &filter) < 0)
        return -1;
    char *xml = rv_nwfilter_get_xml_desc(sh->conn, &filter, 0);
    if (xml)
        fputs(xml, stdout);
    else
        lib_error();
    free(xml);
    free(filter.name);
    return xml ? 0 : -1;
}

static int cmd_nwfilter_define(shell *sh, const command *cmd, const cmd_args *a)
{
    char *xml;
    if (read_file(a->value, &xml) < 0)
        return -1;
    rv_nwfilter_ref filter = { .name = NULL };
    int rc = rv_nwfilter_define_xml(sh->conn, xml, has_opt(cmd, a, "validate") ? 1 : 0, &filter);
    free(xml);
    if (rc < 0) {
        error_line("Failed to define network filter from %s", a->value);
        lib_error();
        return -1;
    }
    printf("Network filter %s defined from %s\n", filter.name, a->value);
    free(filter.name);
    return 0;
}

/* virsh names the filter as it was typed. */
static int cmd_nwfilter_undefine(shell *sh, const command *cmd, const cmd_args *a)
{
    (void)cmd;
    rv_nwfilter_ref filter = { .name = NULL };
    if (lookup_nwfilter(sh, a->value, &filter) < 0)
        return -1;
    int rc = rv_nwfilter_undefine(sh->conn, &filter);
    if (rc < 0) {
        error_line("Failed to undefine network filter %s", a->value);
        lib_error();
    } else {
        printf("Network filter %s undefined\n", a->value);
    }
    free(filter.name);
    return rc;
}

static int compare_bindings(const void *pa, const void *pb)
{
    return strcmp(((const rv_nwfilter_binding_ref *)pa)->portdev,
                  ((const rv_nwfilter_binding_ref *)pb)->portdev);
}

static int cmd_nwfilter_binding_list(shell *sh, const command *cmd, const cmd_args *a)
{
    rv_nwfilter_binding_ref *bindings = NULL;
    int n = rv_connect_list_all_nwfilter_bindings(sh->conn, &bindings, 0);
    if (n < 0) {
        error_line("Failed to list network filter bindings");
        lib_error();
        return -1;
    }
    qsort(bindings, (size_t)n, sizeof(*bindings), compare_bindings);
    const char **cells = calloc((size_t)n * 2 + 1, sizeof(*cells));
    if (!cells) {
        error_line("out of memory");
        rv_nwfilter_binding_refs_free(bindings, n);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        cells[i * 2] = bindings[i].portdev;
        cells[i * 2 + 1] = bindings[i].filtername;
    }
    if (sh->json || has_opt(cmd, a, "json")) {
        putchar('[');
        for (int i = 0; i < n; i++) {
            int first = 1;
            printf("%s{", i ? ", " : "");
            json_str_field("port_dev", bindings[i].portdev, &first);
            json_str_field("filter", bindings[i].filtername, &first);
            putchar('}');
        }
        puts("]");
    } else {
        static const char *const heads[] = { "Port Dev", "Filter" };
        print_table(heads, 2, cells, (size_t)n);
    }
    free(cells);
    rv_nwfilter_binding_refs_free(bindings, n);
    return 0;
}

static const char *const opts_nwfilter_define[] = { "validate", NULL };

const command rvsh_nwfilter_commands[] = {
    { .name = "nwfilter-list", .run = cmd_nwfilter_list,
      .options = opts_json,
      .summary = "list network filters" },
    { .name = "nwfilter-dumpxml", .run = cmd_nwfilter_dumpxml, .arg = "nwfilter",
      .summary = "network filter information in XML (by UUID or name)" },
    { .name = "nwfilter-define", .run = cmd_nwfilter_define, .arg = "file",
      .options = opts_nwfilter_define,
      .summary = "define or update a network filter from an XML file" },
    { .name = "nwfilter-undefine", .run = cmd_nwfilter_undefine, .arg = "nwfilter",
      .summary = "undefine a network filter (by UUID or name)" },
    { .name = "nwfilter-binding-list", .run = cmd_nwfilter_binding_list,
      .options = opts_json,
      .summary = "list network filter bindings" },
    { .name = NULL },
};
