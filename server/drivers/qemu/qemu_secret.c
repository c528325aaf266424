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
#include <libxml/entities.h>

#include "common/log.h"
#include "common/util.h"
#include "server/drivers/qemu/qemu_driver.h"
#include "server/drivers/qemu/qemu_secret.h"
#include "server/drivers/conf/xml_read.h"

RV_LOG_CATEGORY("drivers.qemu.secret");

#define fail(err, code, ...) rv_err_fail((err), RV_FROM_SECRET, (code), __VA_ARGS__)

enum {
    LIST_SECRETS_FILTERS = 0xf,     /* EPHEMERAL, NO_EPHEMERAL, PRIVATE, NO_PRIVATE */
    LIST_EPHEMERAL = 1, LIST_NO_EPHEMERAL = 2, LIST_PRIVATE = 4, LIST_NO_PRIVATE = 8,
    DEFINE_VALIDATE = 1,            /* virSecretDefineXMLFlags */
    SECRET_XML_MAX = 64 * 1024,     /* the longest secret XML read (libvirt's are tiny) */
    USAGE_NONE = 0, USAGE_VOLUME, USAGE_CEPH, USAGE_ISCSI, USAGE_TLS, USAGE_VTPM, USAGE_COUNT,
};

/* Per usage type: its word and the element that names what it is for. */
static const struct {
    const char *word, *element, *label;
} usages[USAGE_COUNT] = {
    [USAGE_NONE] = { "none", NULL, NULL },
    [USAGE_VOLUME] = { "volume", "volume", "volume usage specified, but volume path" },
    [USAGE_CEPH] = { "ceph", "name", "Ceph usage specified, but name" },
    [USAGE_ISCSI] = { "iscsi", "target", "iSCSI usage specified, but target" },
    [USAGE_TLS] = { "tls", "name", "TLS usage specified, but name" },
    [USAGE_VTPM] = { "vtpm", "name", "vTPM usage specified, but name" },
};

typedef struct secret_def {
    unsigned char uuid[16];
    bool ephemeral, is_private;
    int usage_type;             /* USAGE_* */
    char *usage_id;             /* "" for none */
    char *description;          /* NULL: none */
} secret_def;

typedef struct qsecret {
    secret_def def;
    unsigned char *value;       /* NULL: none set */
    size_t value_len;
    struct qsecret *next;
} qsecret;

static struct {
    char *dir;
    qsecret *list;
    int n;
} st;

static void def_clear(secret_def *def)
{
    free(def->usage_id);
    free(def->description);
    memset(def, 0, sizeof(*def));
}

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

/* ---- the XML ---- */

/* A yes/no attribute; absent is no. */
static int yes_no(xmlNode *root, const char *name, bool *out, rv_err *err)
{
    int failed = 0;
    char *v = rv_lx_attr(root, name, &failed);
    int rc = 0;
    if (failed)
        rc = oom(err);
    else if (!v || strcmp(v, "no") == 0)
        *out = false;
    else if (strcmp(v, "yes") == 0)
        *out = true;
    else
        rc = fail(err, RV_ERR_XML_ERROR, "XML error: invalid value of '%s'", name);
    free(v);
    return rc;
}

static int parse_usage(xmlNode *usage, secret_def *def, rv_err *err)
{
    int failed = 0, rc = -1;
    char *type = rv_lx_attr(usage, "type", &failed);
    if (failed) {
        oom(err);
        goto out;
    }
    int t = 1;
    while (t < USAGE_COUNT && (!type || strcmp(usages[t].word, type) != 0))
        t++;
    if (t == USAGE_COUNT) {
        fail(err, RV_ERR_CONFIG_UNSUPPORTED, "unsupported configuration: unknown secret usage type %s",
             type ? type : "(null)");
        goto out;
    }
    def->usage_type = t;
    free(def->usage_id);
    def->usage_id = rv_lx_text(rv_lx_child(usage, usages[t].element), &failed);
    if (!def->usage_id) {
        if (failed)
            oom(err);
        else
            fail(err, RV_ERR_INTERNAL_ERROR, "internal error: %s is missing", usages[t].label);
        goto out;
    }
    rc = 0;
out:
    free(type);
    return rc;
}

static int parse_def(const char *xml, secret_def *def, rv_err *err)
{
    xmlDoc *doc = NULL;
    int failed = 0, rc = -1;
    memset(def, 0, sizeof(*def));
    xmlNode *root = rv_lx_read(xml, SECRET_XML_MAX, "secret", "definition_of_secret",
                               RV_FROM_SECRET, &doc, err);
    if (!root || yes_no(root, "ephemeral", &def->ephemeral, err) < 0 ||
        yes_no(root, "private", &def->is_private, err) < 0)
        goto out;
    char *uuid = rv_lx_text(rv_lx_child(root, "uuid"), &failed);
    if (uuid && rv_uuid_parse(uuid, def->uuid) < 0) {
        fail(err, RV_ERR_INTERNAL_ERROR, "internal error: malformed uuid element");
        free(uuid);
        goto out;
    }
    if (!uuid && !failed)
        rv_uuid_generate(def->uuid);
    free(uuid);
    def->description = rv_lx_text(rv_lx_child(root, "description"), &failed);
    xmlNode *usage = rv_lx_child(root, "usage");
    if (failed) {
        oom(err);
        goto out;
    }
    if (usage ? parse_usage(usage, def, err) < 0 : !(def->usage_id = strdup("")) && oom(err))
        goto out;
    rc = 0;
out:
    xmlFreeDoc(doc);
    if (rc < 0)
        def_clear(def);
    return rc;
}

/* s's text escaped for XML (malloc'd through libxml2). */
static char *escaped(const char *s)
{
    return (char *)xmlEncodeSpecialChars(NULL, BAD_CAST s);
}

static char *format_def(const secret_def *def)
{
    char uuid[RV_UUID_STRING_LEN], *xml = NULL, *desc = NULL, *usage = NULL, *id = NULL;
    rv_uuid_format(def->uuid, uuid);
    if (def->description) {
        char *e = escaped(def->description);
        if (!e || asprintf(&desc, "  <description>%s</description>\n", e) < 0)
            desc = NULL;
        xmlFree(e);
        if (!desc)
            return NULL;
    }
    if (def->usage_type != USAGE_NONE) {
        const char *el = usages[def->usage_type].element;
        if (!(id = escaped(def->usage_id)) ||
            asprintf(&usage, "  <usage type='%s'>\n    <%s>%s</%s>\n  </usage>\n",
                     usages[def->usage_type].word, el, id, el) < 0)
            usage = NULL;
        xmlFree(id);
        if (!usage) {
            free(desc);
            return NULL;
        }
    }
    if (asprintf(&xml, "<secret ephemeral='%s' private='%s'>\n  <uuid>%s</uuid>\n%s%s</secret>\n",
                 def->ephemeral ? "yes" : "no", def->is_private ? "yes" : "no", uuid,
                 desc ? desc : "", usage ? usage : "") < 0)
        xml = NULL;
    free(desc);
    free(usage);
    return xml;
}

/* ---- the table and its files ---- */

static qsecret *find_uuid(const unsigned char uuid[16])
{
    for (qsecret *s = st.list; s; s = s->next)
        if (memcmp(s->def.uuid, uuid, 16) == 0)
            return s;
    return NULL;
}

static qsecret *find_usage(int type, const char *id)
{
    for (qsecret *s = st.list; s; s = s->next)
        if (type != USAGE_NONE && s->def.usage_type == type && strcmp(s->def.usage_id, id) == 0)
            return s;
    return NULL;
}

static qsecret *get(const unsigned char uuid[16], rv_err *err)
{
    qsecret *s = find_uuid(uuid);
    if (!s) {
        char text[RV_UUID_STRING_LEN];
        rv_uuid_format(uuid, text);
        fail(err, RV_ERR_NO_SECRET, "Secret not found: no secret with matching uuid '%s'", text);
    }
    return s;
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

static void put_secret(rv_nonnull_secret *wire, const secret_def *def, char *usage_id)
{
    memcpy(wire->uuid, def->uuid, 16);
    wire->usageType = def->usage_type;
    wire->usageID = usage_id;
}

static int to_wire(rv_nonnull_secret *wire, const secret_def *def, rv_err *err)
{
    char *id = strdup(def->usage_id);
    if (!id)
        return oom(err);
    put_secret(wire, def, id);
    return 0;
}

static void event(const qsecret *s, int event_id, int what)
{
    rv_nonnull_secret wire;
    put_secret(&wire, &s->def, s->def.usage_id);
    rv_driver_secret_event(&rv_qemu_driver, &wire, event_id, what);
}

static void secret_free(qsecret *s)
{
    def_clear(&s->def);
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
    ret->num = st.n;
    return 0;
}

int rv_qemu_connect_list_secrets(rv_driver_conn *c, const rv_connect_list_secrets_args *args,
                                 rv_connect_list_secrets_ret *ret, rv_err *err)
{
    (void)c;
    if (check_max(args->maxuuids, RV_SECRET_LIST_MAX, err) < 0)
        return -1;
    int n = st.n < args->maxuuids ? st.n : args->maxuuids;
    if (n == 0)
        return 0;
    if (!(ret->uuids.uuids_val = calloc((size_t)n, sizeof(char *))))
        return oom(err);
    qsecret *s = st.list;
    for (int i = 0; i < n; i++, s = s->next) {
        if (!(ret->uuids.uuids_val[i] = malloc(RV_UUID_STRING_LEN)))
            return oom(err);    /* the dispatcher frees what was filled */
        rv_uuid_format(s->def.uuid, ret->uuids.uuids_val[i]);
        ret->uuids.uuids_len++;
    }
    return 0;
}

static bool list_match(const secret_def *def, unsigned int flags)
{
    if ((flags & (LIST_EPHEMERAL | LIST_NO_EPHEMERAL)) == LIST_EPHEMERAL && !def->ephemeral)
        return false;
    if ((flags & (LIST_EPHEMERAL | LIST_NO_EPHEMERAL)) == LIST_NO_EPHEMERAL && def->ephemeral)
        return false;
    if ((flags & (LIST_PRIVATE | LIST_NO_PRIVATE)) == LIST_PRIVATE && !def->is_private)
        return false;
    if ((flags & (LIST_PRIVATE | LIST_NO_PRIVATE)) == LIST_NO_PRIVATE && def->is_private)
        return false;
    return true;
}

int rv_qemu_connect_list_all_secrets(rv_driver_conn *c,
                                     const rv_connect_list_all_secrets_args *args,
                                     rv_connect_list_all_secrets_ret *ret, rv_err *err)
{
    (void)c;
    if (rv_qemu_check_flags(RV_FROM_SECRET, args->flags, LIST_SECRETS_FILTERS,
                            "secretConnectListAllSecrets", err) < 0)
        return -1;
    u_int k = 0;
    for (qsecret *s = st.list; s; s = s->next)
        k += list_match(&s->def, args->flags);
    ret->ret = k;
    if (!args->need_results || k == 0)
        return 0;
    if (!(ret->secrets.secrets_val = calloc(k, sizeof(rv_nonnull_secret))))
        return oom(err);
    for (qsecret *s = st.list; s; s = s->next) {
        if (!list_match(&s->def, args->flags))
            continue;
        if (to_wire(&ret->secrets.secrets_val[ret->secrets.secrets_len], &s->def, err) < 0)
            return -1;
        ret->secrets.secrets_len++;
    }
    return 0;
}

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
    if (!(ret->xml = format_def(&s->def)))
        return oom(err);
    return 0;
}

/* The checks libvirtd makes before it replaces old (NULL: none) by def. */
static int check_define(const qsecret *old, const secret_def *def, rv_err *err)
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
    if (st.n >= RV_SECRET_LIST_MAX)
        return fail(err, RV_ERR_OPERATION_FAILED,
                    "operation failed: there are already %d secrets, the most remvirt keeps",
                    st.n);
    return 0;
}

/* A define, a new value or an undefine, through the family's queue
 * (qemu_fileq.c): checked at its turn, answered once its files are
 * durable, memory changed then.  A persistent secret's definition is the
 * commit point: its value file is written before it, removed after it. */
typedef struct secret_op {
    rv_qemu_fileop op;
    char *xml;                  /* define: the XML asked for */
    secret_def def;             /* define: parsed at its turn */
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
        def_clear(&op->def);
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
    if (parse_def(op->xml, &op->def, err) < 0)
        return -1;
    op->parsed = true;
    const qsecret *s = find_uuid(op->def.uuid);
    if (check_define(s, &op->def, err) < 0)
        return -1;
    if (op->def.ephemeral)
        return s && !s->def.ephemeral ? remove_steps(o, op->def.uuid, err) : 0;
    char *xml = format_def(&op->def), *value = NULL;
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
    if (!s) {
        if (!(s = calloc(1, sizeof(*s)))) {
            RV_ERROR("secret is on disk, but not in memory: out of memory");
            return;
        }
        s->next = st.list;
        st.list = s;
        st.n++;
    } else {
        def_clear(&s->def);
    }
    s->def = op->def;
    op->parsed = false;
    event(s, RV_SECRET_EVENT_ID_LIFECYCLE, RV_SECRET_EVENT_DEFINED);
    rv_secret_define_xml_ret *ret = rv_deferred_ret(o->reply);
    rv_err err = { 0 };
    if (to_wire(&ret->secret, &s->def, &err) < 0)
        rv_err_clear(&err);
}

int rv_qemu_secret_define_xml(rv_driver_conn *c, const rv_secret_define_xml_args *args,
                              rv_secret_define_xml_ret *ret, rv_err *err)
{
    (void)c, (void)ret;
    secret_def def;
    if (rv_qemu_check_flags(RV_FROM_SECRET, args->flags, DEFINE_VALIDATE, "secretDefineXML", err) < 0 ||
        parse_def(args->xml, &def, err) < 0)
        return -1;
    /* Refused at once when bad; checked again at its turn. */
    int rc = check_define(find_uuid(def.uuid), &def, err);
    def_clear(&def);
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
    for (qsecret **p = &st.list; *p; p = &(*p)->next) {
        if (memcmp((*p)->def.uuid, op->uuid, 16) == 0) {
            qsecret *s = *p;
            event(s, RV_SECRET_EVENT_ID_LIFECYCLE, RV_SECRET_EVENT_UNDEFINED);
            *p = s->next;
            st.n--;
            secret_free(s);
            return;
        }
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
    secret_def def;
    char *usage;                /* "TYPE ID"; NULL: none */
} secret_file;

static void free_file(void *f_)
{
    secret_file *f = f_;
    def_clear(&f->def);
    free(f->usage);
    free(f);
}

static void *parse_file(const char *text, const char **name, const unsigned char **uuid,
                        const char **unique, rv_err *err)
{
    (void)name;                 /* none: the file is <uuid>.xml */
    secret_file *f = calloc(1, sizeof(*f));
    if (!f) {
        oom(err);
        return NULL;
    }
    if (parse_def(text, &f->def, err) < 0) {
        free(f);
        return NULL;
    }
    if (f->def.usage_type != USAGE_NONE &&
        asprintf(&f->usage, "%s %s", usages[f->def.usage_type].word, f->def.usage_id) < 0) {
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
    if (check_define(NULL, &f->def, &err) < 0 || !(s = calloc(1, sizeof(*s)))) {
        RV_WARN("secret file '%s' is not used: %s", path, err.message ? err.message : "out of memory");
        free_file(f);
    } else {
        s->def = f->def;
        s->def.ephemeral = false;   /* on disk: persistent whatever the file says */
        free(f->usage);
        free(f);
        load_value(s);
        s->next = st.list;
        st.list = s;
        st.n++;
    }
    rv_err_clear(&err);
}

static const rv_qemu_def_family secret_files = {
    "secret", "usage", SECRET_XML_MAX, parse_file, add_file, free_file,
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
    RV_DEBUG("%d secrets loaded from %s", st.n, st.dir);
}

void rv_qemu_secret_cleanup(void)
{
    rv_qemu_fileq_release(&secret_queue);
    while (st.list) {
        qsecret *s = st.list;
        st.list = s->next;
        secret_free(s);
    }
    free(st.dir);
    memset(&st, 0, sizeof(st));
}
