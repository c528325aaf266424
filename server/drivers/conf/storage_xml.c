/* Storage pool and volume XML (see storage_xml.h).  libxml2's tree API;
 * the few paths the model reads are looked up child by child. */
#include "server/drivers/conf/storage_xml.h"
#include "server/drivers/conf/xml_read.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "common/util.h"
#include "server/drivers/conf/xml_write.h"

/* Word tables, indexed by the enum values they stand for. */
static const char *const pool_type_words[] = { "dir", "fs", "netfs", "logical", NULL };
/* Types libvirt knows that no driver here models. */
static const char *const pool_types_unmodelled[] = {
    "disk", "iscsi", "iscsi-direct", "scsi", "mpath", "rbd", "sheepdog", "gluster", "zfs",
    "vstorage", NULL,
};
static const char *const vol_type_words[] = { "file", "block", "dir", "network", "netdir",
                                              "ploop", NULL };
/* libvirt's file formats (virStorageFileFormat). */
static const char *const vol_format_words[] = {
    "none", "raw", "dir", "bochs", "cloop", "dmg", "iso", "vpc", "vdi", "fat", "vhd", "ploop",
    "cow", "qcow", "qcow2", "qed", "vmdk", NULL,
};

static int word_index(const char *word, const char *const *words)
{
    for (int i = 0; word && words[i]; i++)
        if (strcmp(word, words[i]) == 0)
            return i;
    return -1;
}

const char *rv_pool_type_name(int type)
{
    return pool_type_words[type];
}

unsigned int rv_pool_type_list_flag(int type)
{
    static const unsigned int flags[] = { RV_LIST_POOLS_DIR, RV_LIST_POOLS_FS,
                                          RV_LIST_POOLS_NETFS, RV_LIST_POOLS_LOGICAL };
    return flags[type];
}

const char *rv_vol_type_name(int type)
{
    return vol_type_words[type];
}

static int xml_error(rv_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int xml_error(rv_err *err, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    rv_err_set(err, RV_FROM_STORAGE, RV_ERR_XML_ERROR, "XML error: %s", msg);
    return -1;
}

static int oom(rv_err *err)
{
    rv_err_set(err, RV_FROM_STORAGE, RV_ERR_NO_MEMORY, "out of memory");
    return -1;
}

/* ---- reading ---- */

/* The document's root element called root (anything else refused as
 * libvirt refuses it); the document is the caller's to free. */
static xmlNode *read_doc(const char *xml, const char *root, const char *docname, xmlDoc **docp,
                         rv_err *err)
{
    return rv_lx_read(xml, RV_STORAGE_XML_MAX, root, docname, RV_FROM_STORAGE, docp, err);
}

static xmlNode *child(const xmlNode *n, const char *name)
{
    return rv_lx_child(n, name);
}

static char *attr(const xmlNode *n, const char *name, int *failed)
{
    return rv_lx_attr(n, name, failed);
}

static char *text(const xmlNode *n, int *failed)
{
    return rv_lx_text(n, failed);
}

/* libvirt's units: bytes by default, k/KiB/M/MiB... powers of 1024,
 * KB/MB... powers of 1000. */
static int scale(const char *unit, unsigned long long *factor, rv_err *err)
{
    static const char letters[] = "kmgtpe";
    *factor = 1;
    if (!unit || !*unit || strcmp(unit, "b") == 0 || strcmp(unit, "byte") == 0 ||
        strcmp(unit, "bytes") == 0 || strcmp(unit, "B") == 0)
        return 0;
    char c = unit[0] >= 'A' && unit[0] <= 'Z' ? (char)(unit[0] - 'A' + 'a') : unit[0];
    const char *at = strchr(letters, c);
    unsigned long long base = 1024;
    if (!at || !c)
        goto bad;
    if (strcmp(unit + 1, "B") == 0 || strcmp(unit + 1, "b") == 0)
        base = 1000;
    else if (unit[1] && strcmp(unit + 1, "iB") != 0 && strcmp(unit + 1, "ib") != 0)
        goto bad;
    for (long i = 0; i <= at - letters; i++)
        *factor *= base;
    return 0;
bad:
    rv_err_set(err, RV_FROM_NONE, RV_ERR_INVALID_ARG, "invalid argument: unknown suffix '%s'",
               unit);
    return -1;
}

/* A size element (<capacity unit='G'>10</capacity>): *present 0 when absent. */
static int parse_size(const xmlNode *parent, const char *name, unsigned long long *out,
                      int *present, rv_err *err)
{
    int failed = 0;
    xmlNode *n = child(parent, name);
    char *value = text(n, &failed), *unit = attr(n, "unit", &failed);
    unsigned long long factor;
    int rc = -1;
    *present = value != NULL;
    if (failed)
        oom(err);
    else if (!value)
        rc = 0;
    else if (scale(unit, &factor, err) == 0) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(value, &end, 10);
        if (errno || *end || value[0] == '-' || value[0] == '+' || (factor && v > ~0ULL / factor))
            xml_error(err, "malformed %s element", name);
        else {
            *out = v * factor;
            rc = 0;
        }
    }
    free(value);
    free(unit);
    return rc;
}

/* <permissions> under n, if any. */
static int parse_perms(const xmlNode *n, rv_storage_perms *perms, rv_err *err)
{
    perms->mode = perms->owner = perms->group = -1;
    xmlNode *p = child(n, "permissions");
    if (!p)
        return 0;
    int failed = 0;
    char *mode = text(child(p, "mode"), &failed), *owner = text(child(p, "owner"), &failed);
    char *group = text(child(p, "group"), &failed);
    perms->label = text(child(p, "label"), &failed);
    int rc = failed ? oom(err) : 0;
    struct { char *s; long *out; int base; long max; const char *what; } fields[] = {
        { mode, &perms->mode, 8, 07777, "malformed octal mode" },
        { owner, &perms->owner, 10, 0x7fffffff, "malformed owner element" },
        { group, &perms->group, 10, 0x7fffffff, "malformed group element" },
    };
    for (size_t i = 0; rc == 0 && i < 3; i++) {
        if (!fields[i].s)
            continue;
        char *end;
        errno = 0;
        long v = strtol(fields[i].s, &end, fields[i].base);
        if (errno || *end || v < (i ? -1 : 0) || v > fields[i].max)
            rc = xml_error(err, "%s", fields[i].what);
        else
            *fields[i].out = v;
    }
    free(mode);
    free(owner);
    free(group);
    return rc;
}

/* libvirt drops a path's trailing slashes and doubled ones. */
static void sanitize_path(char *path)
{
    char *w = path;
    for (char *r = path; *r; r++)
        if (!(*r == '/' && w > path && w[-1] == '/'))
            *w++ = *r;
    *w = '\0';
    while (w - path > 1 && w[-1] == '/')
        *--w = '\0';
}

static int parse_pool_source(const xmlNode *src, rv_pool_def *def, rv_err *err)
{
    int failed = 0;
    for (xmlNode *c = src ? src->children : NULL; c; c = c->next) {
        if (c->type != XML_ELEMENT_NODE || strcmp((const char *)c->name, "device") != 0)
            continue;
        if (def->ndevices == RV_POOL_MAX_DEVICES)
            return xml_error(err, "a pool source may name at most %d devices",
                             RV_POOL_MAX_DEVICES);
        char *path = attr(c, "path", &failed);
        if (!path)
            return failed ? oom(err) : xml_error(err, "missing storage pool source device path");
        def->devices[def->ndevices++] = path;
    }
    xmlNode *host = child(src, "host");
    def->host = attr(host, "name", &failed);
    char *port = attr(host, "port", &failed);
    def->src_dir = attr(child(src, "dir"), "path", &failed);
    def->src_name = text(child(src, "name"), &failed);
    def->src_format = attr(child(src, "format"), "type", &failed);
    int rc = failed ? oom(err) : 0;
    if (rc == 0 && host && !def->host)
        rc = xml_error(err, "missing storage pool host name");
    if (rc == 0 && port) {
        char *end;
        long v = strtol(port, &end, 10);
        if (*end || v <= 0 || v > 65535)
            rc = xml_error(err, "Invalid port number: %s", port);
        def->port = (int)v;
    }
    free(port);
    return rc;
}

/* What each type needs, in libvirt's order and words. */
static int check_pool(rv_pool_def *def, rv_err *err)
{
    int failed = 0;
    if (def->type == RV_POOL_TYPE_FS && def->ndevices == 0)
        return xml_error(err, "missing storage pool source device name");
    if (def->type == RV_POOL_TYPE_NETFS && !def->host)
        return xml_error(err, "missing storage pool source host name");
    if (def->type == RV_POOL_TYPE_NETFS && !def->src_dir)
        return xml_error(err, "missing storage pool source path");
    if (def->type == RV_POOL_TYPE_LOGICAL) {
        if (!def->src_name && !(def->src_name = strdup(def->name)))
            failed = 1;
        if (!def->src_format && !(def->src_format = strdup("lvm2")))
            failed = 1;
    }
    if (def->type == RV_POOL_TYPE_FS && !def->src_format && !(def->src_format = strdup("auto")))
        failed = 1;
    if (def->type == RV_POOL_TYPE_NETFS && !def->src_format && !(def->src_format = strdup("auto")))
        failed = 1;
    return failed ? oom(err) : 0;
}

int rv_pool_def_parse(const char *xml, rv_pool_def **out, rv_err *err)
{
    xmlDoc *doc;
    int failed = 0, rc = -1;
    rv_pool_def *def = calloc(1, sizeof(*def));
    *out = NULL;
    if (!def)
        return oom(err);
    def->perms.mode = def->perms.owner = def->perms.group = -1;
    xmlNode *root = read_doc(xml, "pool", "storage_pool_definition", &doc, err);
    char *type = NULL, *uuid = NULL;
    if (!root)
        goto out;
    type = attr(root, "type", &failed);
    if (failed) {
        oom(err);
        goto out;
    }
    if (!type) {
        xml_error(err, "Missing required attribute 'type' in element 'pool'");
        goto out;
    }
    if ((def->type = word_index(type, pool_type_words)) < 0) {
        if (word_index(type, pool_types_unmodelled) >= 0)
            /* (The drivers share this parser: the message names none.) */
            rv_err_set(err, RV_FROM_STORAGE, RV_ERR_CONFIG_UNSUPPORTED,
                       "unsupported configuration: remvirt does not support storage pools of "
                       "type '%s'", type);
        else
            xml_error(err, "Invalid value for attribute 'type' in element 'pool': '%s'.", type);
        goto out;
    }
    xmlNode *source = child(root, "source");
    if (parse_pool_source(source, def, err) < 0)
        goto out;
    def->name = text(child(root, "name"), &failed);
    if (!def->name && !failed && def->type == RV_POOL_TYPE_LOGICAL && def->src_name)
        def->name = strdup(def->src_name);          /* libvirt's fallback */
    if (failed || (!def->name && def->src_name)) {
        oom(err);
        goto out;
    }
    if (!def->name) {
        xml_error(err, "missing pool source name element");
        goto out;
    }
    if (strchr(def->name, '/')) {
        xml_error(err, "name %s cannot contain '/'", def->name);
        goto out;
    }
    uuid = text(child(root, "uuid"), &failed);
    if (failed) {
        oom(err);
        goto out;
    }
    if (!uuid)
        rv_uuid_generate(def->uuid);
    else if (rv_uuid_parse(uuid, def->uuid) < 0) {
        xml_error(err, "malformed uuid element");
        goto out;
    }
    xmlNode *target = child(root, "target");
    def->target_path = text(child(target, "path"), &failed);
    if (failed) {
        oom(err);
        goto out;
    }
    if (!def->target_path) {
        xml_error(err, "missing storage pool target path");
        goto out;
    }
    sanitize_path(def->target_path);
    if (parse_perms(target, &def->perms, err) < 0 || check_pool(def, err) < 0)
        goto out;
    rc = 0;
out:
    free(type);
    free(uuid);
    rv_lx_free(doc);
    if (rc < 0)
        rv_pool_def_free(def);
    else
        *out = def;
    return rc;
}

bool rv_pool_type_known(const char *type)
{
    return word_index(type, pool_type_words) >= 0 || word_index(type, pool_types_unmodelled) >= 0;
}

int rv_pool_source_spec_host(const char *xml, char **host, rv_err *err)
{
    xmlDoc *doc;
    int failed = 0;
    *host = NULL;
    xmlNode *root = read_doc(xml, "source", "storage_source_specification", &doc, err);
    if (root)
        *host = attr(child(root, "host"), "name", &failed);
    rv_lx_free(doc);
    if (failed)
        return oom(err);
    return root ? 0 : -1;
}

void rv_pool_def_free(rv_pool_def *def)
{
    if (!def)
        return;
    free(def->name);
    for (size_t i = 0; i < def->ndevices; i++)
        free(def->devices[i]);
    free(def->host);
    free(def->src_dir);
    free(def->src_name);
    free(def->src_format);
    free(def->target_path);
    free(def->perms.label);
    free(def);
}

static int known_format(const char *format, rv_err *err)
{
    if (word_index(format, vol_format_words) >= 0)
        return 0;
    rv_err_set(err, RV_FROM_STORAGE, RV_ERR_CONFIG_UNSUPPORTED,
               "unsupported configuration: unknown volume format type %s", format);
    return -1;
}

/* <compat> (two numbers and a dot) and <features> (lazy_refcounts only);
 * features without compat mean 1.1, as libvirt has it. */
static int parse_qcow2_options(const xmlNode *target, rv_vol_def *def, rv_err *err)
{
    int failed = 0;
    def->compat = text(child(target, "compat"), &failed);
    if (failed)
        return oom(err);
    if (def->compat) {
        const char *p = def->compat;
        size_t major = strspn(p, "0123456789");
        size_t minor = p[major] == '.' ? strspn(p + major + 1, "0123456789") : 0;
        if (!major || !minor || p[major + 1 + minor] || major > 9 || minor > 9)
            return xml_error(err, "forbidden characters in 'compat' attribute");
    }
    xmlNode *features = child(target, "features");
    def->features = features != NULL;
    for (xmlNode *c = features ? features->children : NULL; c; c = c->next) {
        if (c->type != XML_ELEMENT_NODE)
            continue;
        if (strcmp((const char *)c->name, "lazy_refcounts") != 0) {
            rv_err_set(err, RV_FROM_STORAGE, RV_ERR_CONFIG_UNSUPPORTED,
                       "unsupported configuration: unsupported feature %s",
                       (const char *)c->name);
            return -1;
        }
        def->lazy_refcounts = 1;
    }
    if (features && !def->compat && !(def->compat = strdup("1.1")))
        return oom(err);
    return 0;
}

/* <backingStore>: kept only with a path; its format defaults to raw
 * (none in a logical pool). */
static int parse_backing(const xmlNode *n, int pool_type, rv_vol_def *def, rv_err *err)
{
    int failed = 0;
    def->backing_perms.mode = def->backing_perms.owner = def->backing_perms.group = -1;
    if (!n || !(def->backing_path = text(child(n, "path"), &failed)))
        return failed ? oom(err) : 0;
    def->backing_format = attr(child(n, "format"), "type", &failed);
    if (failed)
        return oom(err);
    if (pool_type == RV_POOL_TYPE_LOGICAL) {
        free(def->backing_format);
        def->backing_format = NULL;
    } else if (!def->backing_format && !(def->backing_format = strdup("raw"))) {
        return oom(err);
    } else if (known_format(def->backing_format, err) < 0) {
        return -1;
    }
    return parse_perms(n, &def->backing_perms, err);
}

int rv_vol_def_parse(const char *xml, int pool_type, rv_vol_def **out, rv_err *err)
{
    xmlDoc *doc;
    int failed = 0, rc = -1, present;
    rv_vol_def *def = calloc(1, sizeof(*def));
    *out = NULL;
    if (!def)
        return oom(err);
    def->perms.mode = def->perms.owner = def->perms.group = -1;
    xmlNode *root = read_doc(xml, "volume", "storage_volume_definition", &doc, err);
    char *type = NULL;
    if (!root)
        goto out;
    type = attr(root, "type", &failed);
    def->name = text(child(root, "name"), &failed);
    xmlNode *target = child(root, "target");
    def->format = attr(child(target, "format"), "type", &failed);
    if (failed) {
        oom(err);
        goto out;
    }
    if (type && (def->type = word_index(type, vol_type_words)) < 0) {
        rv_err_set(err, RV_FROM_STORAGE, RV_ERR_INTERNAL_ERROR,
                   "internal error: unknown volume type '%s'", type);
        goto out;
    }
    if (!type)      /* the pool's kind: files, or a logical pool's block devices */
        def->type = pool_type == RV_POOL_TYPE_LOGICAL ? 1 : 0;
    if (!def->name) {
        xml_error(err, "missing volume name element");
        goto out;
    }
    /* A volume's name is a file's and a log line's: no newline, as
     * libvirt refuses it in the names of domains, networks and pools. */
    if (rv_lx_check_name(def->name, "\n", err) < 0)
        goto out;
    if (parse_size(root, "capacity", &def->capacity, &present, err) < 0)
        goto out;
    if (!present) {
        xml_error(err, "missing capacity element");
        goto out;
    }
    if (parse_size(root, "allocation", &def->allocation, &def->has_allocation, err) < 0)
        goto out;
    if (!def->has_allocation)
        def->allocation = def->capacity;
    if (pool_type == RV_POOL_TYPE_LOGICAL) {
        /* A logical pool's volumes have no format (libvirt ignores one). */
        free(def->format);
        def->format = NULL;
    } else if (!def->format && !(def->format = strdup("raw"))) {
        oom(err);
        goto out;
    } else if (known_format(def->format, err) < 0) {
        goto out;
    }
    if (parse_perms(target, &def->perms, err) < 0 || parse_qcow2_options(target, def, err) < 0 ||
        parse_backing(child(root, "backingStore"), pool_type, def, err) < 0)
        goto out;
    rc = 0;
out:
    free(type);
    rv_lx_free(doc);
    if (rc < 0)
        rv_vol_def_free(def);
    else
        *out = def;
    return rc;
}

void rv_vol_def_free(rv_vol_def *def)
{
    if (!def)
        return;
    free(def->name);
    free(def->key);
    free(def->path);
    free(def->format);
    free(def->compat);
    free(def->perms.label);
    free(def->backing_path);
    free(def->backing_format);
    free(def->backing_perms.label);
    rv_vol_content_unref(def->content);
    free(def);
}

/* ---- writing ---- */

/* One line: indent, the format with each %s argument escaped. */
static void line(FILE *fp, const char *indent, const char *before, const char *value,
                 const char *after)
{
    fputs(indent, fp);
    fputs(before, fp);
    rv_xml_put_escaped(fp, value);
    fputs(after, fp);
    fputc('\n', fp);
}

static void put_perms(FILE *fp, const rv_storage_perms *p)
{
    if (p->mode < 0 && p->owner < 0 && p->group < 0 && !p->label)
        return;
    fputs("    <permissions>\n", fp);
    if (p->mode >= 0)
        fprintf(fp, "      <mode>%04lo</mode>\n", (unsigned long)p->mode);
    if (p->owner >= 0)
        fprintf(fp, "      <owner>%ld</owner>\n", p->owner);
    if (p->group >= 0)
        fprintf(fp, "      <group>%ld</group>\n", p->group);
    if (p->label)
        line(fp, "      ", "<label>", p->label, "</label>");
    fputs("    </permissions>\n", fp);
}

char *rv_pool_def_format(const rv_pool_def *def)
{
    char *buf = NULL, uuid[RV_UUID_STRING_LEN];
    size_t size = 0;
    FILE *fp = open_memstream(&buf, &size);
    if (!fp)
        return NULL;
    rv_uuid_format(def->uuid, uuid);
    fprintf(fp, "<pool type='%s'>\n", pool_type_words[def->type]);
    line(fp, "  ", "<name>", def->name, "</name>");
    fprintf(fp, "  <uuid>%s</uuid>\n", uuid);
    fprintf(fp, "  <capacity unit='bytes'>%llu</capacity>\n", def->capacity);
    fprintf(fp, "  <allocation unit='bytes'>%llu</allocation>\n", def->allocation);
    fprintf(fp, "  <available unit='bytes'>%llu</available>\n", def->available);
    fputs("  <source>\n", fp);
    if (def->host) {
        fputs("    <host name='", fp);
        rv_xml_put_escaped(fp, def->host);
        fputc('\'', fp);
        if (def->port)
            fprintf(fp, " port='%d'", def->port);
        fputs("/>\n", fp);
    }
    for (size_t i = 0; i < def->ndevices; i++)
        line(fp, "    ", "<device path='", def->devices[i], "'/>");
    if (def->src_dir)
        line(fp, "    ", "<dir path='", def->src_dir, "'/>");
    if (def->src_name)
        line(fp, "    ", "<name>", def->src_name, "</name>");
    if (def->src_format)
        line(fp, "    ", "<format type='", def->src_format, "'/>");
    fputs("  </source>\n", fp);
    fputs("  <target>\n", fp);
    line(fp, "    ", "<path>", def->target_path, "</path>");
    put_perms(fp, &def->perms);
    fputs("  </target>\n", fp);
    fputs("</pool>\n", fp);
    return rv_xml_done(fp, &buf);
}

char *rv_vol_def_format(const rv_vol_def *def)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *fp = open_memstream(&buf, &size);
    if (!fp)
        return NULL;
    fprintf(fp, "<volume type='%s'>\n", vol_type_words[def->type]);
    line(fp, "  ", "<name>", def->name, "</name>");
    line(fp, "  ", "<key>", def->key, "</key>");
    fprintf(fp, "  <capacity unit='bytes'>%llu</capacity>\n", def->capacity);
    fprintf(fp, "  <allocation unit='bytes'>%llu</allocation>\n", def->allocation);
    if (def->has_file_info)
        fprintf(fp, "  <physical unit='bytes'>%llu</physical>\n", def->physical);
    fputs("  <target>\n", fp);
    line(fp, "    ", "<path>", def->path, "</path>");
    if (def->format)
        line(fp, "    ", "<format type='", def->format, "'/>");
    put_perms(fp, &def->perms);
    if (def->has_file_info)
        fprintf(fp, "    <timestamps>\n"
                    "      <atime>%lld.%09lld</atime>\n"
                    "      <mtime>%lld.%09lld</mtime>\n"
                    "      <ctime>%lld.%09lld</ctime>\n"
                    "      <btime>0</btime>\n"
                    "    </timestamps>\n",
                def->atime[0], def->atime[1], def->mtime[0], def->mtime[1], def->ctime[0],
                def->ctime[1]);
    if (def->compat)
        line(fp, "    ", "<compat>", def->compat, "</compat>");
    if (def->lazy_refcounts)
        fputs("    <features>\n      <lazy_refcounts/>\n    </features>\n", fp);
    else if (def->features)
        fputs("    <features/>\n", fp);
    fputs("  </target>\n", fp);
    if (def->backing_path) {
        fputs("  <backingStore>\n", fp);
        line(fp, "    ", "<path>", def->backing_path, "</path>");
        if (def->backing_format)
            line(fp, "    ", "<format type='", def->backing_format, "'/>");
        put_perms(fp, &def->backing_perms);
        fputs("  </backingStore>\n", fp);
    }
    fputs("</volume>\n", fp);
    return rv_xml_done(fp, &buf);
}

char *rv_pool_netfs_sources(const char *host)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *fp = open_memstream(&buf, &size);
    if (!fp)
        return NULL;
    fputs("<sources>\n  <source>\n", fp);
    line(fp, "    ", "<host name='", host, "'/>");
    fputs("    <dir path='/testshare'/>\n    <format type='nfs'/>\n  </source>\n</sources>\n", fp);
    return rv_xml_done(fp, &buf);
}

/* <enum name=...> of words. */
static void put_words(FILE *fp, const char *indent, const char *name, const char *const *words)
{
    fprintf(fp, "%s<enum name='%s'>\n", indent, name);
    for (size_t i = 0; words[i]; i++)
        fprintf(fp, "%s  <value>%s</value>\n", indent, words[i]);
    fprintf(fp, "%s</enum>\n", indent);
}

char *rv_pool_capabilities_xml(unsigned int types)
{
    /* The source formats libvirt lists for the pool types modelled here. */
    static const char *const fs_formats[] = { "auto", "ext2", "ext3", "ext4", "ufs", "iso9660",
                                              "udf", "gfs", "gfs2", "vfat", "hfs+", "xfs",
                                              "ocfs2", "vmfs", NULL };
    static const char *const netfs_formats[] = { "auto", "nfs", "glusterfs", "cifs", NULL };
    static const char *const logical_formats[] = { "unknown", "lvm2", NULL };
    static const char *const *const source_formats[] = { NULL, fs_formats, netfs_formats,
                                                         logical_formats };
    static const char *const source_default[] = { NULL, "auto", "auto", "lvm2" };
    char *xml = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&xml, &len);
    if (!fp)
        return NULL;
    fprintf(fp, "<storagepoolCapabilities>\n");
    /* libvirt's order: the modelled types, then the others. */
    for (int t = 0; pool_type_words[t]; t++) {
        bool yes = types & rv_pool_type_list_flag(t);
        fprintf(fp, "  <pool type='%s' supported='%s'>\n", pool_type_words[t], yes ? "yes" : "no");
        if (yes && source_formats[t]) {
            fprintf(fp, "    <poolOptions>\n      <defaultFormat type='%s'/>\n", source_default[t]);
            put_words(fp, "      ", "sourceFormatType", source_formats[t]);
            fprintf(fp, "    </poolOptions>\n");
        }
        /* A logical pool's volumes have no format. */
        if (yes && t != RV_POOL_TYPE_LOGICAL) {
            fprintf(fp, "    <volOptions>\n      <defaultFormat type='raw'/>\n");
            put_words(fp, "      ", "targetFormatType", vol_format_words);
            fprintf(fp, "    </volOptions>\n");
        }
        fprintf(fp, "  </pool>\n");
    }
    for (int t = 0; pool_types_unmodelled[t]; t++)
        fprintf(fp, "  <pool type='%s' supported='no'>\n  </pool>\n", pool_types_unmodelled[t]);
    fprintf(fp, "</storagepoolCapabilities>\n");
    if (fclose(fp) != 0) {
        free(xml);
        return NULL;
    }
    return xml;
}

const char *rv_pool_obj_name(const void *obj)
{
    return (*(rv_pool_def *const *)obj)->name;
}

const unsigned char *rv_pool_obj_uuid(const void *obj)
{
    return (*(rv_pool_def *const *)obj)->uuid;
}

unsigned int rv_pool_obj_type_flag(const void *obj)
{
    return rv_pool_type_list_flag((*(rv_pool_def *const *)obj)->type);
}
