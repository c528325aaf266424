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
#include "server/drivers/conf/objlist.h"

RV_LOG_CATEGORY("drivers.qemu.nwfilter");

#define fail(err, code, ...) rv_err_fail((err), RV_FROM_NWFILTER, (code), __VA_ARGS__)

enum {
    DEFINE_VALIDATE = 1,                /* virNWFilterDefineFlags */
};

typedef struct qfilter {
    char *name;
    unsigned char uuid[16];
    char *xml;                  /* as formatted, with the uuid */
} qfilter;

static const char *filter_name(const void *obj)
{
    return ((const qfilter *)obj)->name;
}

static const unsigned char *filter_uuid(const void *obj)
{
    return ((const qfilter *)obj)->uuid;
}

/* Every filter counts as active: the old calls list them all. */
static unsigned int filter_state(const void *obj)
{
    (void)obj;
    return RV_OBJ_ACTIVE;
}

static const rv_obj_kind filter_kind = {
    .what = "filter", .whats = "filters", .not_found = "Network filter not found",
    .lookup_what = "nwfilter", .from = RV_FROM_NWFILTER, .no_object = RV_ERR_NO_NWFILTER,
    .name_of = filter_name, .uuid_of = filter_uuid, .state_of = filter_state,
};

static struct {
    char *dir;
    rv_obj_list list;           /* of qfilter */
} st = { .list = { .max = RV_NWFILTER_LIST_MAX, .kind = &filter_kind } };

static int oom(rv_err *err)
{
    return fail(err, RV_ERR_NO_MEMORY, "out of memory");
}

/* ---- the table ---- */

static qfilter *find_name(const char *name)
{
    return rv_obj_find_name(&st.list, name);
}

static qfilter *find_uuid(const unsigned char uuid[16])
{
    return rv_obj_find_uuid(&st.list, uuid);
}

static qfilter *get_uuid(const unsigned char uuid[16], rv_err *err)
{
    return rv_obj_get_uuid(&st.list, uuid, err);
}

static int put_wire(const void *f, void *wire, rv_err *err)
{
    rv_nonnull_nwfilter *w = wire;
    return rv_obj_put_handle(&st.list, f, &w->name, w->uuid, err);
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
    if (!by_name && st.list.n >= st.list.max)
        return fail(err, RV_ERR_OPERATION_FAILED,
                    "operation failed: there are already %zu filters, the most remvirt keeps",
                    st.list.n);
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
    if (rv_obj_add(&st.list, f, err) < 0) {
        filter_free(f);
        return NULL;
    }
    return f;
}

/* ---- the slots ---- */

RV_OBJ_ACTIVE_SLOTS(rv_qemu_, nwfilters, &st.list, RV_NWFILTER_LIST_MAX)

RV_OBJ_LIST_ALL_SLOT(rv_qemu_, nwfilters, &st.list, 0, "nwfilterConnectListAllNWFilters", put_wire,
                     filters)

RV_OBJ_LOOKUP_SLOTS(rv_qemu_, nwfilter, &st.list, put_wire, nwfilter)

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

/* A define or an undefine, through the family's queue (qemu_fileq.c):
 * checked at its turn, answered once its file is durable (or gone),
 * memory changed then. */
typedef struct filter_op {
    rv_qemu_fileop op;
    char *text;                 /* define: the XML asked for */
    char *name, *xml;           /* define: parsed at its turn */
    unsigned char uuid[16];
    rv_nonnull_nwfilter *(*out)(void *ret);     /* define: where the reply's result has it */
} filter_op;

static rv_qemu_fileq filter_queue = { .name = "nwfilter", .from = RV_FROM_NWFILTER };

static void filter_op_destroy(rv_qemu_fileop *o)
{
    filter_op *op = (filter_op *)o;
    free(op->text);
    free(op->name);
    free(op->xml);
    free(op);
}

static int parse_checked(const char *text, char **name, unsigned char uuid[16], char **xml,
                         rv_err *err)
{
    if (rv_nwfilter_parse(text, name, uuid, xml, err) < 0)
        return -1;
    char *path = file_of(*name);
    int rc = rv_lx_check_name(*name, "\n", err) < 0 || check_define(*name, uuid, err) < 0 ||
             (!path && fail(err, RV_ERR_INVALID_ARG, "invalid argument: filter name '%s' cannot "
                                                     "be a file name", *name)) ? -1 : 0;
    free(path);
    if (rc < 0) {
        free(*name);
        free(*xml);
        *name = *xml = NULL;
    }
    return rc;
}

static int define_prepare(rv_qemu_fileop *o, rv_err *err)
{
    filter_op *op = (filter_op *)o;
    if (parse_checked(op->text, &op->name, op->uuid, &op->xml, err) < 0)
        return -1;
    char *xml = strdup(op->xml);
    if (!xml || rv_qemu_fileop_step(o, file_of(op->name), xml, true) < 0)
        return oom(err);
    return 0;
}

static void define_commit(rv_qemu_fileop *o)
{
    filter_op *op = (filter_op *)o;
    rv_err err = { 0 };
    qfilter *f = put(op->name, op->uuid, op->xml, &err);
    op->name = op->xml = NULL;
    if (!f || put_wire(f, op->out(rv_deferred_ret(o->reply)), &err) < 0)
        RV_WARN("%s", err.message);
    rv_err_clear(&err);
}

static int define(const char *text, rv_nonnull_nwfilter *(*out)(void *ret), rv_err *err)
{
    char *name, *xml;
    unsigned char uuid[16];
    /* Refused at once when bad; checked again at its turn. */
    if (parse_checked(text, &name, uuid, &xml, err) < 0)
        return -1;
    free(name);
    free(xml);
    filter_op *op = rv_qemu_fileop_new(&filter_queue, sizeof(*op), filter_op_destroy, err);
    if (!op)
        return -1;
    if (!(op->text = strdup(text))) {
        filter_op_destroy(&op->op);
        return oom(err);
    }
    op->out = out;
    return rv_qemu_fileq_submit(&filter_queue, &op->op, define_prepare, define_commit, err);
}

static rv_nonnull_nwfilter *define_xml_out(void *ret)
{
    return &((rv_nwfilter_define_xml_ret *)ret)->nwfilter;
}

static rv_nonnull_nwfilter *define_xml_flags_out(void *ret)
{
    return &((rv_nwfilter_define_xml_flags_ret *)ret)->nwfilter;
}

int rv_qemu_nwfilter_define_xml(rv_driver_conn *c, const rv_nwfilter_define_xml_args *args,
                                rv_nwfilter_define_xml_ret *ret, rv_err *err)
{
    (void)c, (void)ret;
    return define(args->xml, define_xml_out, err);
}

int rv_qemu_nwfilter_define_xml_flags(rv_driver_conn *c,
                                      const rv_nwfilter_define_xml_flags_args *args,
                                      rv_nwfilter_define_xml_flags_ret *ret, rv_err *err)
{
    (void)c;
    /* VALIDATE: the parser checks what it reads (no RNG schema). */
    if (rv_qemu_check_flags(RV_FROM_NWFILTER, args->flags, DEFINE_VALIDATE, "nwfilterDefineXMLFlags", err) < 0)
        return -1;
    (void)ret;
    return define(args->xml, define_xml_flags_out, err);
}

static int undefine_prepare(rv_qemu_fileop *o, rv_err *err)
{
    filter_op *op = (filter_op *)o;
    qfilter *f = get_uuid(op->uuid, err);
    if (!f)
        return -1;
    if (rv_qemu_fileop_step(o, file_of(f->name), NULL, true) < 0)
        return oom(err);
    return 0;
}

static void undefine_commit(rv_qemu_fileop *o)
{
    filter_op *op = (filter_op *)o;
    qfilter *f = find_uuid(op->uuid);
    if (f) {
        rv_obj_remove(&st.list, f);
        filter_free(f);
    }
}

int rv_qemu_nwfilter_undefine(rv_driver_conn *c, const rv_nwfilter_undefine_args *args,
                              rv_err *err)
{
    (void)c;
    qfilter *f = get_uuid((const unsigned char *)args->nwfilter.uuid, err);
    if (!f)
        return -1;
    filter_op *op = rv_qemu_fileop_new(&filter_queue, sizeof(*op), filter_op_destroy, err);
    if (!op)
        return -1;
    memcpy(op->uuid, f->uuid, 16);
    return rv_qemu_fileq_submit(&filter_queue, &op->op, undefine_prepare, undefine_commit, err);
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

static void filter_free_obj(void *obj)
{
    filter_free(obj);
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
                        const char **unique, void *opaque, rv_err *err)
{
    (void)unique, (void)opaque;
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
    rv_qemu_fileq_release(&filter_queue);
    rv_obj_clear(&st.list, filter_free_obj);
    free(st.dir);
    st.dir = NULL;
}
