/* The QEMU driver's network filters: defined, kept as libvirtd formats
 * them, listed and undefined; stored as config_dir/nwfilter/<name>.xml
 * (atomic, durable writes through qemu_store.c) and loaded again at
 * start-up.  They are never applied to guest traffic (remvirt has no
 * ebtables/iptables side), so there are no filter bindings either: their
 * list is empty and lookups answer "not found", as libvirtd with no guest
 * using a filter. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "common/util.h"
#include "server/drivers/qemu/qemu_driver.h"
#include "server/drivers/qemu/qemu_secret.h"
#include "server/drivers/conf/xml_read.h"
#include "server/drivers/conf/nwfilter_xml.h"

RV_LOG_CATEGORY("drivers.qemu.nwfilter");

#define fail(err, code, ...) rv_err_fail((err), RV_FROM_NWFILTER, (code), __VA_ARGS__)

enum {
    DEFINE_VALIDATE = 1,                /* virNWFilterDefineFlags */
};

typedef struct qfilter {
    char *name;
    unsigned char uuid[16];
    char *xml;                  /* as formatted, with the uuid */
    struct qfilter *next;
} qfilter;

static struct {
    char *dir;
    qfilter *list;
    int n;
} st;

static int oom(rv_err *err)
{
    return fail(err, RV_ERR_NO_MEMORY, "out of memory");
}

/* ---- the table ---- */

static qfilter *find_name(const char *name)
{
    for (qfilter *f = st.list; f; f = f->next)
        if (strcmp(f->name, name) == 0)
            return f;
    return NULL;
}

static qfilter *find_uuid(const unsigned char uuid[16])
{
    for (qfilter *f = st.list; f; f = f->next)
        if (memcmp(f->uuid, uuid, 16) == 0)
            return f;
    return NULL;
}

static qfilter *get_uuid(const unsigned char uuid[16], rv_err *err)
{
    qfilter *f = find_uuid(uuid);
    if (!f) {
        char text[RV_UUID_STRING_LEN];
        rv_uuid_format(uuid, text);
        fail(err, RV_ERR_NO_NWFILTER,
             "Network filter not found: no nwfilter with matching uuid '%s'", text);
    }
    return f;
}

static int to_wire(rv_nonnull_nwfilter *wire, const qfilter *f, rv_err *err)
{
    if (!(wire->name = strdup(f->name)))
        return oom(err);
    memcpy(wire->uuid, f->uuid, 16);
    return 0;
}

static void filter_free(qfilter *f)
{
    free(f->name);
    free(f->xml);
    free(f);
}

/* config_dir/nwfilter/<name>.xml, or NULL for a name that cannot be a
 * file name (it would leave the directory). */
static char *file_of(const char *name)
{
    if (!st.dir || !*name || strchr(name, '/') || name[0] == '.')
        return NULL;
    return rv_qemu_path(st.dir, name, ".xml");
}

/* The checks libvirtd makes before it defines name with uuid. */
static int check_define(const char *name, const unsigned char uuid[16], rv_err *err)
{
    const qfilter *by_uuid = find_uuid(uuid), *by_name = find_name(name);
    char text[RV_UUID_STRING_LEN];
    if (by_uuid && strcmp(by_uuid->name, name) != 0)
        return fail(err, RV_ERR_OPERATION_FAILED,
                    "operation failed: filter with same UUID but different name ('%s') already "
                    "exists", by_uuid->name);
    if (by_name && memcmp(by_name->uuid, uuid, 16) != 0) {
        rv_uuid_format(by_name->uuid, text);
        return fail(err, RV_ERR_OPERATION_FAILED,
                    "operation failed: filter '%s' already exists with uuid %s", name, text);
    }
    if (!by_name && st.n >= RV_NWFILTER_LIST_MAX)
        return fail(err, RV_ERR_OPERATION_FAILED,
                    "operation failed: there are already %d filters, the most remvirt keeps",
                    st.n);
    return 0;
}

/* Add or replace; takes name and xml. */
static qfilter *put(char *name, const unsigned char uuid[16], char *xml, rv_err *err)
{
    qfilter *f = find_name(name);
    if (f) {
        free(name);
        free(f->xml);
        f->xml = xml;
        return f;
    }
    if (!(f = calloc(1, sizeof(*f)))) {
        free(name);
        free(xml);
        oom(err);
        return NULL;
    }
    f->name = name;
    memcpy(f->uuid, uuid, 16);
    f->xml = xml;
    f->next = st.list;
    st.list = f;
    st.n++;
    return f;
}

/* ---- the slots ---- */

int rv_qemu_connect_num_of_nwfilters(rv_driver_conn *c, rv_connect_num_of_nwfilters_ret *ret,
                                     rv_err *err)
{
    (void)c, (void)err;
    ret->num = st.n;
    return 0;
}

int rv_qemu_connect_list_nwfilters(rv_driver_conn *c, const rv_connect_list_nwfilters_args *args,
                                   rv_connect_list_nwfilters_ret *ret, rv_err *err)
{
    (void)c;
    if (args->maxnames < 0 || args->maxnames > RV_NWFILTER_LIST_MAX)
        return rv_err_fail(err, RV_FROM_RPC, RV_ERR_RPC, "maximum %d is outside 0..%d",
                           args->maxnames, RV_NWFILTER_LIST_MAX);
    int n = st.n < args->maxnames ? st.n : args->maxnames;
    if (n == 0)
        return 0;
    if (!(ret->names.names_val = calloc((size_t)n, sizeof(char *))))
        return oom(err);
    qfilter *f = st.list;
    for (int i = 0; i < n; i++, f = f->next) {
        if (!(ret->names.names_val[i] = strdup(f->name)))
            return oom(err);    /* the dispatcher frees what was filled */
        ret->names.names_len++;
    }
    return 0;
}

int rv_qemu_connect_list_all_nwfilters(rv_driver_conn *c,
                                       const rv_connect_list_all_nwfilters_args *args,
                                       rv_connect_list_all_nwfilters_ret *ret, rv_err *err)
{
    (void)c;
    if (rv_qemu_check_flags(RV_FROM_NWFILTER, args->flags, 0, "nwfilterConnectListAllNWFilters", err) < 0)
        return -1;
    ret->ret = (u_int)st.n;
    if (!args->need_results || st.n == 0)
        return 0;
    if (!(ret->filters.filters_val = calloc((size_t)st.n, sizeof(rv_nonnull_nwfilter))))
        return oom(err);
    for (qfilter *f = st.list; f; f = f->next) {
        if (to_wire(&ret->filters.filters_val[ret->filters.filters_len], f, err) < 0)
            return -1;
        ret->filters.filters_len++;
    }
    return 0;
}

int rv_qemu_nwfilter_lookup_by_name(rv_driver_conn *c, const rv_nwfilter_lookup_by_name_args *args,
                                    rv_nwfilter_lookup_by_name_ret *ret, rv_err *err)
{
    (void)c;
    qfilter *f = find_name(args->name);
    if (!f)
        return fail(err, RV_ERR_NO_NWFILTER,
                    "Network filter not found: no nwfilter with matching name '%s'", args->name);
    return to_wire(&ret->nwfilter, f, err);
}

int rv_qemu_nwfilter_lookup_by_uuid(rv_driver_conn *c, const rv_nwfilter_lookup_by_uuid_args *args,
                                    rv_nwfilter_lookup_by_uuid_ret *ret, rv_err *err)
{
    (void)c;
    qfilter *f = get_uuid((const unsigned char *)args->uuid, err);
    return f ? to_wire(&ret->nwfilter, f, err) : -1;
}

int rv_qemu_nwfilter_get_xml_desc(rv_driver_conn *c, const rv_nwfilter_get_xml_desc_args *args,
                                  rv_nwfilter_get_xml_desc_ret *ret, rv_err *err)
{
    (void)c;
    qfilter *f;
    if (rv_qemu_check_flags(RV_FROM_NWFILTER, args->flags, 0, "nwfilterGetXMLDesc", err) < 0 ||
        !(f = get_uuid((const unsigned char *)args->nwfilter.uuid, err)))
        return -1;
    if (!(ret->xml = strdup(f->xml)))
        return oom(err);
    return 0;
}

static int define(const char *text, rv_nonnull_nwfilter *out, rv_err *err)
{
    char *name, *xml;
    unsigned char uuid[16];
    if (rv_nwfilter_parse(text, &name, uuid, &xml, err) < 0)
        return -1;
    char *path = file_of(name);
    if (rv_lx_check_name(name, "\n", err) < 0 || check_define(name, uuid, err) < 0 ||
        (!path && fail(err, RV_ERR_INVALID_ARG, "invalid argument: filter name '%s' cannot be "
                                                "a file name", name)) ||
        rv_qemu_mkdirs(st.dir, err) < 0 || rv_qemu_write_file(path, xml, true, err) < 0) {
        free(name);
        free(xml);
        free(path);
        return -1;
    }
    free(path);
    qfilter *f = put(name, uuid, xml, err);
    return f ? to_wire(out, f, err) : -1;
}

int rv_qemu_nwfilter_define_xml(rv_driver_conn *c, const rv_nwfilter_define_xml_args *args,
                                rv_nwfilter_define_xml_ret *ret, rv_err *err)
{
    (void)c;
    return define(args->xml, &ret->nwfilter, err);
}

int rv_qemu_nwfilter_define_xml_flags(rv_driver_conn *c,
                                      const rv_nwfilter_define_xml_flags_args *args,
                                      rv_nwfilter_define_xml_flags_ret *ret, rv_err *err)
{
    (void)c;
    /* VALIDATE: the parser checks what it reads (no RNG schema). */
    if (rv_qemu_check_flags(RV_FROM_NWFILTER, args->flags, DEFINE_VALIDATE, "nwfilterDefineXMLFlags", err) < 0)
        return -1;
    return define(args->xml, &ret->nwfilter, err);
}

int rv_qemu_nwfilter_undefine(rv_driver_conn *c, const rv_nwfilter_undefine_args *args,
                              rv_err *err)
{
    (void)c;
    qfilter *f = get_uuid((const unsigned char *)args->nwfilter.uuid, err);
    if (!f)
        return -1;
    char *path = file_of(f->name);
    if (path && unlink(path) < 0 && errno != ENOENT) {
        rv_err_set_errno(err, RV_FROM_NWFILTER, errno, "cannot remove '%s'", path);
        free(path);
        return -1;
    }
    free(path);
    for (qfilter **p = &st.list; *p; p = &(*p)->next) {
        if (*p == f) {
            *p = f->next;
            break;
        }
    }
    st.n--;
    filter_free(f);
    return 0;
}

int rv_qemu_connect_list_all_nwfilter_bindings(
    rv_driver_conn *c, const rv_connect_list_all_nwfilter_bindings_args *args,
    rv_connect_list_all_nwfilter_bindings_ret *ret, rv_err *err)
{
    (void)c;
    ret->ret = 0;
    return rv_qemu_check_flags(RV_FROM_NWFILTER, args->flags, 0, "nwfilterConnectListAllNWFilterBindings", err);
}

int rv_qemu_nwfilter_binding_lookup_by_port_dev(
    rv_driver_conn *c, const rv_nwfilter_binding_lookup_by_port_dev_args *args,
    rv_nwfilter_binding_lookup_by_port_dev_ret *ret, rv_err *err)
{
    (void)c, (void)ret;
    return fail(err, RV_ERR_NO_NWFILTER_BINDING,
                "Network filter binding not found: no nwfilter binding for port dev '%s'",
                args->name);
}

int rv_qemu_nwfilter_binding_get_xml_desc(rv_driver_conn *c,
                                          const rv_nwfilter_binding_get_xml_desc_args *args,
                                          rv_nwfilter_binding_get_xml_desc_ret *ret, rv_err *err)
{
    (void)c, (void)ret;
    return fail(err, RV_ERR_NO_NWFILTER_BINDING,
                "Network filter binding not found: no nwfilter binding for port dev '%s'",
                args->nwfilter.portdev);
}

/* ---- start-up and exit ---- */

/* A filter read from its file. */
typedef struct filter_file {
    char *name, *xml;
    unsigned char uuid[16];
} filter_file;

static void free_file(void *f_)
{
    filter_file *f = f_;
    free(f->name);
    free(f->xml);
    free(f);
}

static void *parse_file(const char *text, const char **name, const unsigned char **uuid,
                        const char **unique, rv_err *err)
{
    (void)unique;
    filter_file *f = calloc(1, sizeof(*f));
    if (!f) {
        oom(err);
        return NULL;
    }
    if (rv_nwfilter_parse(text, &f->name, f->uuid, &f->xml, err) < 0) {
        free_file(f);
        return NULL;
    }
    *name = f->name;
    *uuid = f->uuid;
    return f;
}

static void add_file(void *f_, const char *path, void *opaque)
{
    (void)opaque;
    filter_file *f = f_;
    rv_err err = { 0 };
    if (check_define(f->name, f->uuid, &err) < 0) {
        RV_WARN("nwfilter file '%s' is not used: %s", path, err.message);
        free_file(f);
    } else {
        put(f->name, f->uuid, f->xml, &err);
        free(f);
    }
    rv_err_clear(&err);
}

static const rv_qemu_def_family filter_files = {
    "nwfilter", NULL, RV_NWFILTER_XML_MAX, parse_file, add_file, free_file,
};

void rv_qemu_nwfilter_init(void)
{
    if (!(st.dir = rv_qemu_path(rv_qemu.config_dir, "nwfilter", ""))) {
        RV_ERROR("QEMU driver: out of memory; no network filters");
        return;
    }
    rv_qemu_load_defs(st.dir, &filter_files, NULL);
}

void rv_qemu_nwfilter_cleanup(void)
{
    while (st.list) {
        qfilter *f = st.list;
        st.list = f->next;
        filter_free(f);
    }
    free(st.dir);
    memset(&st, 0, sizeof(st));
}
