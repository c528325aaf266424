/* rvsh: the secret commands that only read: secret-list and
 * secret-dumpxml. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rvsh.h"

/* What virsh prints for a secret's usage type. */
static const char *usage_name(int type)
{
    static const char *const names[] = { "none", "volume", "ceph", "iscsi", "tls", "vtpm" };
    return type >= 0 && type < (int)(sizeof(names) / sizeof(names[0])) ? names[type] : "unknown";
}

static int compare_secrets(const void *pa, const void *pb)
{
    return strcmp(((const rv_secret_ref *)pa)->uuid, ((const rv_secret_ref *)pb)->uuid);
}

static int cmd_secret_list(shell *sh, const command *cmd, const cmd_args *a)
{
    /* libvirt's EPHEMERAL 1, NO_EPHEMERAL 2, PRIVATE 4, NO_PRIVATE 8, in
     * the options' order. */
    unsigned int flags = 0;
    for (unsigned int k = 0; k < 4; k++)
        if (a->opts & (1u << k))
            flags |= 1u << k;
    rv_secret_ref *secrets = NULL;
    int n = rv_connect_list_all_secrets(sh->conn, &secrets, flags);
    if (n < 0) {
        list_failed(sh, rv_connect_num_of_secrets, "secrets");
        return -1;
    }
    qsort(secrets, (size_t)n, sizeof(*secrets), compare_secrets);
    char **usages = calloc((size_t)n + 1, sizeof(*usages));
    const char **cells = calloc((size_t)n * 2 + 1, sizeof(*cells));
    int rc = usages && cells ? 0 : -1;
    for (int i = 0; rc == 0 && i < n; i++) {
        if (secrets[i].usage_type == 0)
            usages[i] = strdup("Unused");
        else if (asprintf(&usages[i], "%s %s", usage_name(secrets[i].usage_type),
                          secrets[i].usage_id) < 0)
            usages[i] = NULL;
        rc = usages[i] ? 0 : -1;
        cells[i * 2] = secrets[i].uuid;
        cells[i * 2 + 1] = usages[i];
    }
    if (rc < 0) {
        error_line("out of memory");
    } else if (sh->json || has_opt(cmd, a, "json")) {
        putchar('[');
        for (int i = 0; i < n; i++) {
            int first = 1;
            printf("%s{", i ? ", " : "");
            json_str_field("uuid", secrets[i].uuid, &first);
            json_str_field("usage_type", usage_name(secrets[i].usage_type), &first);
            json_str_field("usage_id", secrets[i].usage_id, &first);
            putchar('}');
        }
        puts("]");
    } else {
        static const char *const heads[] = { "UUID", "Usage" };
        print_table(heads, 2, cells, (size_t)n);
    }
    for (int i = 0; usages && i < n; i++)
        free(usages[i]);
    free(usages);
    free(cells);
    rv_secret_refs_free(secrets, n);
    return rc;
}

static int cmd_secret_dumpxml(shell *sh, const command *cmd, const cmd_args *a)
{
    (void)cmd;
    rv_secret_ref secret = { .usage_id = NULL };
    if (rv_secret_lookup_by_uuid_string(sh->conn, a->value, &secret) < 0) {
        const rv_error_info *e = rv_last_error();
        error_line("failed to get secret '%s'", a->value);
        /* Not a UUID: virsh's library refuses it before asking the
         * server, in these words. */
        if (e && e->code == RV_ERROR_INVALID_ARG)
            error_line("uuidstr in virSecretLookupByUUIDString must be a valid UUID");
        else
            lib_error();
        return -1;
    }
    char *xml = rv_secret_get_xml_desc(sh->conn, &secret, 0);
    if (xml)
        fputs(xml, stdout);
    else
        lib_error();
    free(xml);
    free(secret.usage_id);
    return xml ? 0 : -1;
}

static const char *const opts_secret_list[] = {
    "ephemeral", "no-ephemeral", "private", "no-private", "json", NULL,
};

const command rvsh_secret_commands[] = {
    { .name = "secret-list", .run = cmd_secret_list,
      .options = opts_secret_list,
      .summary = "list secrets (--ephemeral, --no-ephemeral, --private, --no-private: only those)" },
    { .name = "secret-dumpxml", .run = cmd_secret_dumpxml, .arg = "secret",
      .summary = "secret attributes in XML (by UUID)" },
    { .name = NULL },
};
