/* The QEMU driver's secrets, as libvirtd's secret driver keeps them:
 *   config_dir/secrets/<uuid>.xml      a persistent secret's definition
 *   config_dir/secrets/<uuid>.base64   its value, base64
 * both mode 0600, written atomically and durably (qemu_store.c); an
 * ephemeral secret lives in memory only.  Loaded again when remvirtd
 * starts.  Defining, changing the value and undefining send the secret
 * events.  Errors and checks are libvirtd's (texts, codes, the order). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gnutls/gnutls.h>

#include "common/log.h"
#include "common/util.h"
#include "server/drivers/qemu/qemu_driver.h"
#include "server/drivers/qemu/qemu_secret.h"
#include "server/drivers/conf/objlist.h"
#include "server/drivers/conf/secret_xml.h"

RV_LOG_CATEGORY("drivers.qemu.secret");

#define fail(err, code, ...) rv_err_fail((err), RV_FROM_SECRET, (code), __VA_ARGS__)

enum {
    LIST_SECRETS_FILTERS = 0xf,     /* EPHEMERAL, NO_EPHEMERAL, PRIVATE, NO_PRIVATE */
    LIST_EPHEMERAL = 1, LIST_NO_EPHEMERAL = 2, LIST_PRIVATE = 4, LIST_NO_PRIVATE = 8,
    DEFINE_VALIDATE = 1,            /* virSecretDefineXMLFlags */
};

typedef struct qsecret {
    rv_secret_def def;
    char key[RV_UUID_STRING_LEN];       /* its UUID as text: its name on the list */
    unsigned char *value;       /* NULL: none set */
    size_t value_len;
} qsecret;

static const char *secret_key(const void *obj)
{
    return ((const qsecret *)obj)->key;
}

static const unsigned char *secret_uuid(const void *obj)
{
    return ((const qsecret *)obj)->def.uuid;
}

/* libvirt's secret list filters: EPHEMERAL/NO_EPHEMERAL, PRIVATE/NO_PRIVATE. */
static bool secret_match(const void *obj, unsigned int flags)
{
    const rv_secret_def *def = &((const qsecret *)obj)->def;
    return (!(flags & (LIST_EPHEMERAL | LIST_NO_EPHEMERAL)) ||
            (flags & (def->ephemeral ? LIST_EPHEMERAL : LIST_NO_EPHEMERAL))) &&
           (!(flags & (LIST_PRIVATE | LIST_NO_PRIVATE)) ||
            (flags & (def->is_private ? LIST_PRIVATE : LIST_NO_PRIVATE)));
}

static const rv_obj_kind secret_kind = {
    .what = "secret", .whats = "secrets", .not_found = "Secret not found",
    .lookup_what = "secret", .from = RV_FROM_SECRET, .no_object = RV_ERR_NO_SECRET,
    .name_of = secret_key, .uuid_of = secret_uuid, .match = secret_match,
};

static struct {
    char *dir;
    rv_obj_list list;           /* of qsecret, in UUID order */
} st = { .list = { .max = RV_SECRET_LIST_MAX, .kind = &secret_kind } };

static int oom(rv_err *err)
{
    return fail(err, RV_ERR_NO_MEMORY, "out of memory");
}

/* A list's maximum from the wire, refused outside 0..max. */
static int check_max(int n, int max, rv_err *err)
{
    if (n < 0 || n > max)
        return rv_err_fail(err, RV_FROM_RPC, RV_ERR_RPC, "maximum %d is outside 0..%d", n, max);
    return 0;
}

/* ---- the table and its files ---- */

static qsecret *find_uuid(const unsigned char uuid[16])
{
    return rv_obj_find_uuid(&st.list, uuid);
}

static qsecret *find_usage(int type, const char *id)
{
    for (size_t i = 0; i < st.list.n; i++) {
        qsecret *s = rv_obj_at(&st.list, i);
        if (type != RV_SECRET_USAGE_NONE && s->def.usage_type == type && strcmp(s->def.usage_id, id) == 0)
            return s;
    }
    return NULL;
}

static qsecret *get(const unsigned char uuid[16], rv_err *err)
{
    return rv_obj_get_uuid(&st.list, uuid, err);
}

/* config_dir/secrets/<uuid><suffix>, malloc'd. */
static char *file_of(const unsigned char uuid[16], const char *suffix)
{
    char text[RV_UUID_STRING_LEN];
    rv_uuid_format(uuid, text);
    return st.dir ? rv_qemu_path(st.dir, text, suffix) : NULL;
}

/* A value as its file holds it (base64; malloc'd, NULL: no memory). */
static char *value_text(const unsigned char *value, size_t len)
{
    gnutls_datum_t in = { (unsigned char *)value, (unsigned int)len }, out = { NULL, 0 };
    char *text = NULL;
    if (gnutls_base64_encode2(&in, &out) == 0 && (text = calloc(1, out.size + 1)))
        memcpy(text, out.data, out.size);
    gnutls_free(out.data);
    return text;
}

static void put_secret(rv_nonnull_secret *wire, const rv_secret_def *def, char *usage_id)
{
    memcpy(wire->uuid, def->uuid, 16);
    wire->usageType = def->usage_type;
    wire->usageID = usage_id;
}

static int to_wire(rv_nonnull_secret *wire, const rv_secret_def *def, rv_err *err)
{
    char *id = strdup(def->usage_id);
    if (!id)
        return oom(err);
    put_secret(wire, def, id);
    return 0;
}

static int put_wire(const void *obj, void *wire, rv_err *err)
{
    return to_wire(wire, &((const qsecret *)obj)->def, err);
}

static void event(const qsecret *s, int event_id, int what)
{
    rv_nonnull_secret wire;
    put_secret(&wire, &s->def, s->def.usage_id);
    rv_driver_secret_event(&rv_qemu_driver, &wire, event_id, what);
}

/* A new, empty secret of def's UUID on the list; NULL with err. */
static qsecret *secret_new(const rv_secret_def *def, rv_err *err)
{
    qsecret *s = calloc(1, sizeof(*s));
    if (!s) {
        oom(err);
        return NULL;
    }
    rv_uuid_format(def->uuid, s->key);
    memcpy(s->def.uuid, def->uuid, 16);
    if (rv_obj_add(&st.list, s, err) < 0) {
        free(s);
        return NULL;
    }
    return s;
}

static void secret_free(qsecret *s)
{
    rv_secret_def_clear(&s->def);
    if (s->value)
        memset(s->value, 0, s->value_len);     /* no copy of it left behind in the heap */
    free(s->value);
    free(s);
}

/* ---- the slots ---- */

int rv_qemu_connect_num_of_secrets(rv_driver_conn *c, rv_connect_num_of_secrets_ret *ret,
                                   rv_err *err)
{
    (void)c, (void)err;
    ret->num = (int)st.list.n;
    return 0;
}

int rv_qemu_connect_list_secrets(rv_driver_conn *c, const rv_connect_list_secrets_args *args,
                                 rv_connect_list_secrets_ret *ret, rv_err *err)
{
    (void)c;
    if (check_max(args->maxuuids, RV_SECRET_LIST_MAX, err) < 0)
        return -1;
    int n = (int)st.list.n < args->maxuuids ? (int)st.list.n : args->maxuuids;
    if (n == 0)
        return 0;
    if (!(ret->uuids.uuids_val = calloc((size_t)n, sizeof(char *))))
        return oom(err);
    for (int i = 0; i < n; i++) {
        const qsecret *s = rv_obj_at(&st.list, (size_t)i);
        if (!(ret->uuids.uuids_val[i] = strdup(s->key)))
            return oom(err);    /* the dispatcher frees what was filled */
        ret->uuids.uuids_len++;
    }
    return 0;
}

RV_OBJ_LIST_ALL_SLOT(rv_qemu_, secrets, &st.list, LIST_SECRETS_FILTERS,
                     "secretConnectListAllSecrets", put_wire, secrets)

int rv_qemu_secret_lookup_by_uuid(rv_driver_conn *c, const rv_secret_lookup_by_uuid_args *args,
                                  rv_secret_lookup_by_uuid_ret *ret, rv_err *err)
{
    (void)c;
    qsecret *s = get((const unsigned char *)args->uuid, err);
    return s ? to_wire(&ret->secret, &s->def, err) : -1;
}

int rv_qemu_secret_lookup_by_usage(rv_driver_conn *c, const rv_secret_lookup_by_usage_args *args,
                                   rv_secret_lookup_by_usage_ret *ret, rv_err *err)
{
    (void)c;
    qsecret *s = find_usage(args->usageType, args->usageID);
    if (!s)
        return fail(err, RV_ERR_NO_SECRET, "Secret not found: no secret with matching usage '%s'",
                    args->usageID);
    return to_wire(&ret->secret, &s->def, err);
}

int rv_qemu_secret_get_xml_desc(rv_driver_conn *c, const rv_secret_get_xml_desc_args *args,
                                rv_secret_get_xml_desc_ret *ret, rv_err *err)
{
    (void)c;
    qsecret *s;
    if (rv_qemu_check_flags(RV_FROM_SECRET, args->flags, 0, "secretGetXMLDesc", err) < 0 ||
        !(s = get((const unsigned char *)args->secret.uuid, err)))
        return -1;
    if (!(ret->xml = rv_secret_def_format(&s->def)))
        return oom(err);
    return 0;
}

/* The checks libvirtd makes before it replaces old (NULL: none) by def. */
static int check_define(const qsecret *old, const rv_secret_def *def, rv_err *err)
{
    char uuid[RV_UUID_STRING_LEN];
    if (old) {
        rv_uuid_format(old->def.uuid, uuid);
        if (old->def.usage_type != def->usage_type || strcmp(old->def.usage_id, def->usage_id))
            return fail(err, RV_ERR_INTERNAL_ERROR,
                        "internal error: a secret with UUID %s is already defined for use with %s",
                        uuid, old->def.usage_id);
        if (old->def.is_private && !def->is_private)
            return fail(err, RV_ERR_INTERNAL_ERROR,
                        "internal error: cannot change private flag on existing secret");
        return 0;
    }
    const qsecret *other = find_usage(def->usage_type, def->usage_id);
    if (other) {
        rv_uuid_format(other->def.uuid, uuid);
        return fail(err, RV_ERR_INTERNAL_ERROR,
                    "internal error: a secret with UUID %s already defined for use with %s", uuid,
                    def->usage_id);
    }
    if (st.list.n >= st.list.max)
        return fail(err, RV_ERR_OPERATION_FAILED,
                    "operation failed: there are already %zu secrets, the most remvirt keeps",
                    st.list.n);
    return 0;
}

/* A define, a new value or an undefine, through the family's queue
 * (qemu_fileq.c): checked at its turn, answered once its files are
 * durable, memory changed then.  A persistent secret's definition is the
 * commit point: its value file is written before it, removed after it. */
typedef struct secret_op {
    rv_qemu_fileop op;
    char *xml;                  /* define: the XML asked for */
    rv_secret_def def;             /* define: parsed at its turn */
    bool parsed;
    unsigned char uuid[16];
    unsigned char *value;       /* set-value */
    size_t value_len;
} secret_op;

static rv_qemu_fileq secret_queue = { .name = "secret", .from = RV_FROM_SECRET };

static void secret_op_destroy(rv_qemu_fileop *o)
{
    secret_op *op = (secret_op *)o;
    free(op->xml);
    if (op->parsed)
        rv_secret_def_clear(&op->def);
    if (op->value)
        memset(op->value, 0, op->value_len);
    free(op->value);
    free(op);
}

static secret_op *secret_op_new(rv_err *err)
{
    return rv_qemu_fileop_new(&secret_queue, sizeof(secret_op), secret_op_destroy, err);
}

/* Steps that remove a persistent secret's files: the definition first. */
static int remove_steps(rv_qemu_fileop *o, const unsigned char uuid[16], rv_err *err)
{
    if (rv_qemu_fileop_step(o, file_of(uuid, ".xml"), NULL, true) < 0 ||
        rv_qemu_fileop_step(o, file_of(uuid, ".base64"), NULL, false) < 0)
        return oom(err);
    return 0;
}

static int define_prepare(rv_qemu_fileop *o, rv_err *err)
{
    secret_op *op = (secret_op *)o;
    if (rv_secret_def_parse(op->xml, &op->def, err) < 0)
        return -1;
    op->parsed = true;
    const qsecret *s = find_uuid(op->def.uuid);
    if (check_define(s, &op->def, err) < 0)
        return -1;
    if (op->def.ephemeral)
        return s && !s->def.ephemeral ? remove_steps(o, op->def.uuid, err) : 0;
    char *xml = rv_secret_def_format(&op->def), *value = NULL;
    /* A new secret's value file, if one was left, goes before its
     * definition is written (nothing refers to it yet). */
    if (xml && !s && rv_qemu_fileop_step(o, file_of(op->def.uuid, ".base64"), NULL, false) < 0) {
        free(xml);
        return oom(err);
    }
    if (xml && s && s->def.ephemeral && s->value &&
        (!(value = value_text(s->value, s->value_len)) ||
         rv_qemu_fileop_step(o, file_of(op->def.uuid, ".base64"), value, false) < 0)) {
        free(xml);
        return oom(err);
    }
    if (!xml || rv_qemu_fileop_step(o, file_of(op->def.uuid, ".xml"), xml, true) < 0)
        return oom(err);
    return 0;
}

static void define_commit(rv_qemu_fileop *o)
{
    secret_op *op = (secret_op *)o;
    qsecret *s = find_uuid(op->def.uuid);
    rv_err err = { 0 };
    if (!s && !(s = secret_new(&op->def, &err))) {
        RV_ERROR("secret is on disk, but not in memory: %s", err.message);
        rv_err_clear(&err);
        return;
    }
    rv_secret_def_clear(&s->def);
    s->def = op->def;
    op->parsed = false;
    event(s, RV_SECRET_EVENT_ID_LIFECYCLE, RV_SECRET_EVENT_DEFINED);
    rv_secret_define_xml_ret *ret = rv_deferred_ret(o->reply);
    if (to_wire(&ret->secret, &s->def, &err) < 0)
        rv_err_clear(&err);
}

int rv_qemu_secret_define_xml(rv_driver_conn *c, const rv_secret_define_xml_args *args,
                              rv_secret_define_xml_ret *ret, rv_err *err)
{
    (void)c, (void)ret;
    rv_secret_def def;
    if (rv_qemu_check_flags(RV_FROM_SECRET, args->flags, DEFINE_VALIDATE, "secretDefineXML", err) < 0 ||
        rv_secret_def_parse(args->xml, &def, err) < 0)
        return -1;
    /* Refused at once when bad; checked again at its turn. */
    int rc = check_define(find_uuid(def.uuid), &def, err);
    rv_secret_def_clear(&def);
    if (rc < 0)
        return -1;
    secret_op *op = secret_op_new(err);
    if (!op || !(op->xml = strdup(args->xml))) {
        if (op)
            secret_op_destroy(&op->op);
        return op ? oom(err) : -1;
    }
    return rv_qemu_fileq_submit(&secret_queue, &op->op, define_prepare, define_commit, err);
}

static int value_prepare(rv_qemu_fileop *o, rv_err *err)
{
    secret_op *op = (secret_op *)o;
    const qsecret *s = get(op->uuid, err);
    if (!s)
        return -1;
    if (s->def.ephemeral)
        return 0;
    char *text = value_text(op->value, op->value_len);
    if (!text || rv_qemu_fileop_step(o, file_of(op->uuid, ".base64"), text, true) < 0)
        return oom(err);
    return 0;
}

static void value_commit(rv_qemu_fileop *o)
{
    secret_op *op = (secret_op *)o;
    qsecret *s = find_uuid(op->uuid);
    if (!s)
        return;
    if (s->value)
        memset(s->value, 0, s->value_len);
    free(s->value);
    s->value = op->value;
    s->value_len = op->value_len;
    op->value = NULL;
    event(s, RV_SECRET_EVENT_ID_VALUE_CHANGED, 0);
}

int rv_qemu_secret_set_value(rv_driver_conn *c, const rv_secret_set_value_args *args,
                             rv_err *err)
{
    (void)c;
    qsecret *s;
    if (rv_qemu_check_flags(RV_FROM_SECRET, args->flags, 0, "secretSetValue", err) < 0 ||
        !(s = get((const unsigned char *)args->secret.uuid, err)))
        return -1;
    size_t len = args->value.value_len;
    /* An empty value arrives as libvirt's NULL, which its API refuses. */
    if (len == 0)
        return fail(err, RV_ERR_INVALID_ARG, "value in virSecretSetValue must not be NULL");
    unsigned char *value = malloc(len);
    if (!value)
        return oom(err);
    memcpy(value, args->value.value_val, len);
    secret_op *op = secret_op_new(err);
    if (!op) {
        memset(value, 0, len);
        free(value);
        return -1;
    }
    memcpy(op->uuid, s->def.uuid, 16);
    op->value = value;
    op->value_len = len;
    return rv_qemu_fileq_submit(&secret_queue, &op->op, value_prepare, value_commit, err);
}

int rv_qemu_secret_get_value(rv_driver_conn *c, const rv_secret_get_value_args *args,
                             rv_secret_get_value_ret *ret, rv_err *err)
{
    (void)c;
    qsecret *s;
    char uuid[RV_UUID_STRING_LEN];
    if (rv_qemu_check_flags(RV_FROM_SECRET, args->flags, 0, "secretGetValue", err) < 0 ||
        !(s = get((const unsigned char *)args->secret.uuid, err)))
        return -1;
    if (s->def.is_private)
        return fail(err, RV_ERR_INVALID_SECRET, "Invalid secret: secret is private");
    if (!s->value) {
        rv_uuid_format(s->def.uuid, uuid);
        return fail(err, RV_ERR_NO_SECRET, "Secret not found: secret '%s' does not have a value",
                    uuid);
    }
    if (!(ret->value.value_val = malloc(s->value_len)))
        return oom(err);
    memcpy(ret->value.value_val, s->value, s->value_len);
    ret->value.value_len = (u_int)s->value_len;
    return 0;
}

static int undefine_prepare(rv_qemu_fileop *o, rv_err *err)
{
    secret_op *op = (secret_op *)o;
    const qsecret *s = get(op->uuid, err);
    if (!s)
        return -1;
    return s->def.ephemeral ? 0 : remove_steps(o, op->uuid, err);
}

static void undefine_commit(rv_qemu_fileop *o)
{
    secret_op *op = (secret_op *)o;
    qsecret *s = find_uuid(op->uuid);
    if (s) {
        event(s, RV_SECRET_EVENT_ID_LIFECYCLE, RV_SECRET_EVENT_UNDEFINED);
        rv_obj_remove(&st.list, s);
        secret_free(s);
    }
}

int rv_qemu_secret_undefine(rv_driver_conn *c, const rv_secret_undefine_args *args, rv_err *err)
{
    (void)c;
    qsecret *s = get((const unsigned char *)args->secret.uuid, err);
    secret_op *op = s ? secret_op_new(err) : NULL;
    if (!op)
        return -1;
    memcpy(op->uuid, s->def.uuid, 16);
    return rv_qemu_fileq_submit(&secret_queue, &op->op, undefine_prepare, undefine_commit, err);
}

static void secret_free_obj(void *obj)
{
    secret_free(obj);
}

/* ---- start-up and exit ---- */

/* The text of a file of at most max bytes, or NULL. */
static char *read_small_file(const char *path, size_t max)
{
    FILE *fp = fopen(path, "re");
    if (!fp)
        return NULL;
    char *text = calloc(1, max + 1);
    if (text && fread(text, 1, max + 1, fp) > max) {
        RV_WARN("'%s' is longer than %zu bytes: not used", path, max);
        free(text);
        text = NULL;
    }
    fclose(fp);
    return text;
}

static void load_value(qsecret *s)
{
    char *path = file_of(s->def.uuid, ".base64");
    /* base64 of the longest value, and a little room for a newline. */
    char *text = path ? read_small_file(path, RV_SECRET_VALUE_MAX / 3 * 4 + 8) : NULL;
    gnutls_datum_t in = { (unsigned char *)text, text ? (unsigned int)strcspn(text, "\n") : 0 };
    gnutls_datum_t out = { NULL, 0 };
    if (text && gnutls_base64_decode2(&in, &out) == 0 && out.size > 0 &&
        out.size <= RV_SECRET_VALUE_MAX && (s->value = malloc(out.size))) {
        memcpy(s->value, out.data, out.size);
        s->value_len = out.size;
    } else if (text) {
        RV_WARN("secret value file '%s' is not base64 of 1 to %d bytes: not used", path,
                RV_SECRET_VALUE_MAX);
    }
    if (out.data) {
        memset(out.data, 0, out.size);
        gnutls_free(out.data);
    }
    free(text);
    free(path);
}

/* A secret read from its file, with what must be unique besides its
 * UUID: its usage. */
typedef struct secret_file {
    rv_secret_def def;
    char *usage;                /* "TYPE ID"; NULL: none */
} secret_file;

static void free_file(void *f_)
{
    secret_file *f = f_;
    rv_secret_def_clear(&f->def);
    free(f->usage);
    free(f);
}

static void *parse_file(const char *text, const char **name, const unsigned char **uuid,
                        const char **unique, void *opaque, rv_err *err)
{
    (void)name, (void)opaque;   /* no name: the file is <uuid>.xml */
    secret_file *f = calloc(1, sizeof(*f));
    if (!f) {
        oom(err);
        return NULL;
    }
    if (rv_secret_def_parse(text, &f->def, err) < 0) {
        free(f);
        return NULL;
    }
    if (f->def.usage_type != RV_SECRET_USAGE_NONE &&
        asprintf(&f->usage, "%s %s", rv_secret_usage_word(f->def.usage_type), f->def.usage_id) < 0) {
        f->usage = NULL;
        free_file(f);
        oom(err);
        return NULL;
    }
    *uuid = f->def.uuid;
    *unique = f->usage;
    return f;
}

static void add_file(void *f_, const char *path, void *opaque)
{
    (void)opaque;
    secret_file *f = f_;
    rv_err err = { 0 };
    qsecret *s = NULL;
    if (check_define(NULL, &f->def, &err) < 0 || !(s = secret_new(&f->def, &err))) {
        RV_WARN("secret file '%s' is not used: %s", path, err.message ? err.message : "out of memory");
        free_file(f);
    } else {
        s->def = f->def;
        s->def.ephemeral = false;   /* on disk: persistent whatever the file says */
        free(f->usage);
        free(f);
        load_value(s);
    }
    rv_err_clear(&err);
}

static const rv_qemu_def_family secret_files = {
    "secret", "usage", RV_SECRET_XML_MAX, parse_file, add_file, free_file,
};

void rv_qemu_secret_init(void)
{
    if (!(st.dir = rv_qemu_path(rv_qemu.config_dir, "secrets", ""))) {
        RV_ERROR("QEMU driver: out of memory; no secrets");
        return;
    }
    rv_qemu_load_defs(st.dir, &secret_files, NULL);
    /* A value whose definition file is gone (an undefine killed between
     * the two removals) is removed: a later secret of that uuid must not
     * find it.  (One whose file was refused stays for the operator.) */
    DIR *d = opendir(st.dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        size_t len = strlen(e->d_name);
        unsigned char uuid[16];
        char name[RV_UUID_STRING_LEN + 8];
        if (len != RV_UUID_STRING_LEN - 1 + 7 || strcmp(e->d_name + len - 7, ".base64") != 0)
            continue;
        snprintf(name, sizeof(name), "%.*s", (int)(len - 7), e->d_name);
        if (rv_uuid_parse(name, uuid) < 0 || find_uuid(uuid))
            continue;
        strcat(name, ".xml");
        if (faccessat(dirfd(d), name, F_OK, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT) {
            RV_INFO("removing %s/%s: its secret is not defined", st.dir, e->d_name);
            unlinkat(dirfd(d), e->d_name, 0);
        }
    }
    if (d)
        closedir(d);
    RV_DEBUG("%zu secrets loaded from %s", st.list.n, st.dir);
}

void rv_qemu_secret_cleanup(void)
{
    rv_qemu_fileq_release(&secret_queue);
    rv_obj_clear(&st.list, secret_free_obj);
    free(st.dir);
    st.dir = NULL;
}
