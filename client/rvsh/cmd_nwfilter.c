/* rvsh: the network filter commands that only read: nwfilter-list,
 * nwfilter-dumpxml, nwfilter-binding-list. */
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

/* virsh's order: by UUID when the text is one, then by name. */
static int cmd_nwfilter_dumpxml(shell *sh, const command *cmd, const cmd_args *a)
{
    (void)cmd;
    rv_nwfilter_ref filter = { .name = NULL };
    int rc = -1;
    if (strlen(a->value) == RV_UUID_STRING_BUFLEN - 1)
        rc = rv_nwfilter_lookup_by_uuid_string(sh->conn, a->value, &filter);
    if (rc < 0)
        rc = rv_nwfilter_lookup_by_name(sh->conn, a->value, &filter);
    if (rc < 0) {
        error_line("failed to get nwfilter '%s'", a->value);
        lib_error();
        return -1;
    }
    char *xml = rv_nwfilter_get_xml_desc(sh->conn, &filter, 0);
    if (xml)
        fputs(xml, stdout);
    else
        lib_error();
    free(xml);
    free(filter.name);
    return xml ? 0 : -1;
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

const command rvsh_nwfilter_commands[] = {
    { .name = "nwfilter-list", .run = cmd_nwfilter_list,
      .options = opts_json,
      .summary = "list network filters" },
    { .name = "nwfilter-dumpxml", .run = cmd_nwfilter_dumpxml, .arg = "nwfilter",
      .summary = "network filter information in XML (by UUID or name)" },
    { .name = "nwfilter-binding-list", .run = cmd_nwfilter_binding_list,
      .options = opts_json,
      .summary = "list network filter bindings" },
    { .name = NULL },
};
