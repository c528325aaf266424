/* The metadata of a QEMU domain's snapshots or checkpoints (see
 * qemu_moments.h): one JSON file per domain and kind, its records those
 * of server/drivers/conf/snapshot_tree.h. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "common/util.h"
#include "server/drivers/qemu/qemu_moments.h"

RV_LOG_CATEGORY("drivers.qemu.moments");

enum { METADATA_MAX = 16 * 1024 * 1024 };  /* the bytes of one domain's metadata file */

#define fail(err, code, ...) rv_err_fail((err), RV_FROM_QEMU, (code), __VA_ARGS__)

static int oom(rv_err *err)
{
    return fail(err, RV_ERR_NO_MEMORY, "out of memory");
}

static const char *dom_name(const qemu_dom *d)
{
    return rv_qemu_dom_def(d)->name;
}

/* ================================================================ JSON */

static json_object *rec_to_json(const rv_snap_rec *s)
{
    json_object *o = json_object_new_object(), *disks = json_object_new_array();
    json_object_object_add(o, "name", json_object_new_string(s->name));
    if (s->description)
        json_object_object_add(o, "description", json_object_new_string(s->description));
    json_object_object_add(o, "created", json_object_new_int64(s->created));
    json_object_object_add(o, "state", json_object_new_int(s->state));
    if (s->parent)
        json_object_object_add(o, "parent", json_object_new_string(s->parent->name));
    json_object_object_add(o, "domain", json_object_new_string(s->dom_xml));
    for (size_t i = 0; i < s->ndisks; i++) {
        json_object *disk = json_object_new_object();
        json_object_object_add(disk, "name", json_object_new_string(s->disks[i].name));
        json_object_object_add(disk, "snapshot", json_object_new_string(s->disks[i].snapshot));
        if (s->disks[i].bitmap)
            json_object_object_add(disk, "bitmap", json_object_new_string(s->disks[i].bitmap));
        json_object_array_add(disks, disk);
    }
    json_object_object_add(o, "disks", disks);
    return o;
}

const char *rv_qemu_moments_str(json_object *o, const char *key)
{
    json_object *v = NULL;
    return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
               ? json_object_get_string(v) : NULL;
}

static rv_snap_rec *rec_from_json(json_object *o, const rv_snap_tree *t)
{
    const char *name = rv_qemu_moments_str(o, "name"), *xml = rv_qemu_moments_str(o, "domain");
    const char *parent = rv_qemu_moments_str(o, "parent"), *description = rv_qemu_moments_str(o, "description");
    json_object *v = NULL, *disks = NULL;
    if (!name || !xml || rv_snap_tree_find(t, name) ||
        !json_object_object_get_ex(o, "disks", &disks) ||
        !json_object_is_type(disks, json_type_array))
        return NULL;
    rv_snap_rec *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    s->name = strdup(name);
    s->dom_xml = strdup(xml);
    s->description = description ? strdup(description) : NULL;
    s->created = json_object_object_get_ex(o, "created", &v) ? json_object_get_int64(v) : 0;
    s->state = json_object_object_get_ex(o, "state", &v) ? json_object_get_int(v)
                                                          : RV_DOMAIN_SHUTOFF;
    if (s->state != RV_DOMAIN_RUNNING && s->state != RV_DOMAIN_PAUSED)
        s->state = RV_DOMAIN_SHUTOFF;
    s->parent = parent ? rv_snap_tree_find(t, parent) : NULL;
    size_t n = json_object_array_length(disks);
    s->disks = n ? calloc(n, sizeof(*s->disks)) : NULL;
    bool ok = s->name && s->dom_xml && (!description || s->description) && (!n || s->disks) &&
              (!parent || s->parent);
    for (size_t i = 0; ok && i < n; i++) {
        json_object *disk = json_object_array_get_idx(disks, i);
        const char *dn = rv_qemu_moments_str(disk, "name"), *mode = rv_qemu_moments_str(disk, "snapshot");
        const char *bitmap = rv_qemu_moments_str(disk, "bitmap");
        if (!dn || !mode || !(s->disks[i].name = strdup(dn)) ||
            (bitmap && !(s->disks[i].bitmap = strdup(bitmap)))) {
            ok = false;
            break;
        }
        s->disks[i].snapshot = (char *)(strcmp(mode, "internal") == 0 ? rv_snap_mode_internal
                                        : strcmp(mode, "bitmap") == 0 ? rv_snap_mode_bitmap
                                                                      : rv_snap_mode_no);
        s->ndisks++;
    }
    if (!ok) {
        rv_snap_rec_free(s);
        return NULL;
    }
    return s;
}

/* The metadata as JSON: the uuid, the snapshots (parents first), the
 * current one, and the trash: snapshots that the disks may still hold
 * although no list shows them (a create not committed, a delete committed
 * but whose data may be left), each with the images to remove it from. */
json_object *rv_qemu_moments_json(const unsigned char uuid[16], const rv_snap_tree *t,
                                  json_object *trash)
{
    json_object *root = json_object_new_object(), *list = json_object_new_array();
    for (size_t i = 0; i < t->n; i++)
        json_object_array_add(list, rec_to_json(t->items[i]));
    char text[RV_UUID_STRING_LEN];
    rv_uuid_format(uuid, text);
    json_object_object_add(root, "uuid", json_object_new_string(text));
    json_object_object_add(root, "snapshots", list);
    if (t->current)
        json_object_object_add(root, "current", json_object_new_string(t->current->name));
    if (trash && json_object_array_length(trash))
        json_object_object_add(root, "trash", json_object_get(trash));
    return root;
}

/* The snapshots of a metadata document into t (empty); what is damaged is
 * dropped, with a warning naming what. */
void rv_qemu_moments_from_json(json_object *root, rv_snap_tree *t, const char *what)
{
    json_object *list = NULL;
    if (!json_object_object_get_ex(root, "snapshots", &list) ||
        !json_object_is_type(list, json_type_array))
        return;
    size_t n = json_object_array_length(list);
    for (size_t i = 0; i < n && i < RV_QEMU_MOMENTS_MAX; i++) {
        rv_snap_rec *s = rec_from_json(json_object_array_get_idx(list, i), t);
        t->current = s ? s->parent : NULL;      /* add() hangs s under the current one */
        rv_err err = { 0 };
        if (!s || rv_snap_tree_add(t, s, RV_QEMU_MOMENTS_MAX, &err) < 0) {
            RV_WARN("%s: snapshot %zu dropped", what, i);
            rv_snap_rec_free(s);
        }
        rv_err_clear(&err);
    }
    const char *current = rv_qemu_moments_str(root, "current");
    t->current = current ? rv_snap_tree_find(t, current) : NULL;
}

int rv_qemu_moments_copy(const unsigned char uuid[16], const rv_snap_tree *t, rv_snap_tree *copy,
                     rv_err *err)
{
    memset(copy, 0, sizeof(*copy));
    json_object *root = rv_qemu_moments_json(uuid, t, NULL);
    if (!root)
        return oom(err);
    rv_qemu_moments_from_json(root, copy, "a copy");
    json_object_put(root);
    if (copy->n != t->n) {
        rv_snap_tree_clear(copy);
        return oom(err);
    }
    return 0;
}

/* A whole metadata file, parsed; NULL when missing or damaged (logged). */
json_object *rv_qemu_moments_read(const char *path, const char *who)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    char *text = fd >= 0 ? malloc(METADATA_MAX + 1) : NULL;
    size_t len = 0;
    ssize_t got = 1;
    while (text && len < METADATA_MAX && (got = read(fd, text + len, METADATA_MAX - len)) > 0)
        len += (size_t)got;
    if (fd >= 0)
        close(fd);
    json_object *root = text && got >= 0 && len < METADATA_MAX
                            ? (text[len] = '\0', json_tokener_parse(text)) : NULL;
    if (fd >= 0 && !root)
        RV_WARN("%s: cannot read the metadata '%s'", who, path);
    free(text);
    return root;
}

/* ================================================================ a domain's */

char *rv_qemu_moments_path(const rv_qemu_moment_kind *k, const char *name)
{
    char *dir = rv_qemu_path(rv_qemu.config_dir, k->dir, "");
    char *path = dir ? rv_qemu_path(dir, name, ".json") : NULL;
    free(dir);
    return path;
}

/* The domain's metadata file into q; a missing file is none, a damaged
 * one is logged and read as far as it goes. */
static void load_metadata(const rv_qemu_moment_kind *k, const qemu_dom *d, rv_qemu_moments *q)
{
    char *path = rv_qemu_moments_path(k, dom_name(d));
    json_object *root = path ? rv_qemu_moments_read(path, dom_name(d)) : NULL;
    /* A file left by an earlier domain of the same name is not this one's. */
    char uuid[RV_UUID_STRING_LEN];
    rv_uuid_format(q->uuid, uuid);
    const char *owner = root ? rv_qemu_moments_str(root, "uuid") : NULL;
    if (root && (!owner || strcmp(owner, uuid) != 0)) {
        RV_WARN("domain '%s': '%s' belongs to domain %s, not to this one (%s): ignored",
                dom_name(d), path, owner ? owner : "(none)", uuid);
        json_object_put(root);
        root = NULL;
    }
    json_object *trash = NULL;
    if (root) {
        rv_qemu_moments_from_json(root, &q->tree, path);
        if (json_object_object_get_ex(root, "trash", &trash) &&
            json_object_is_type(trash, json_type_array))
            q->trash = json_object_get(trash);
    }
    json_object_put(root);
    free(path);
}

rv_qemu_moments *rv_qemu_moments_find(const rv_qemu_moment_kind *k, const unsigned char uuid[16])
{
    for (rv_qemu_moments *q = k->all; q; q = q->next)
        if (memcmp(q->uuid, uuid, 16) == 0)
            return q;
    return NULL;
}

rv_qemu_moments *rv_qemu_moments_of(rv_qemu_moment_kind *k, const qemu_dom *d, rv_err *err)
{
    const unsigned char *uuid = rv_qemu_dom_def(d)->uuid;
    rv_qemu_moments *q = rv_qemu_moments_find(k, uuid);
    if (q)
        return q;
    if (!(q = calloc(1, sizeof(*q)))) {
        oom(err);
        return NULL;
    }
    memcpy(q->uuid, uuid, 16);
    load_metadata(k, d, q);
    q->next = k->all;
    k->all = q;
    return q;
}

static void moments_free(rv_qemu_moments *q)
{
    rv_snap_tree_clear(&q->tree);
    json_object_put(q->trash);
    free(q);
}

void rv_qemu_moments_forget(rv_qemu_moment_kind *k, const unsigned char uuid[16])
{
    for (rv_qemu_moments **p = &k->all; *p; p = &(*p)->next)
        if (memcmp((*p)->uuid, uuid, 16) == 0) {
            rv_qemu_moments *q = *p;
            *p = q->next;
            moments_free(q);
            return;
        }
}

void rv_qemu_moments_cleanup(rv_qemu_moment_kind *k)
{
    while (k->all) {
        rv_qemu_moments *q = k->all;
        k->all = q->next;
        moments_free(q);
    }
}

int rv_qemu_moments_undefine(rv_qemu_moment_kind *k, const qemu_dom *d, bool drop, rv_err *err)
{
    rv_qemu_moments *q = rv_qemu_dom_active(d) ? NULL : rv_qemu_moments_of(k, d, err);
    if (!q)
        return rv_qemu_dom_active(d) ? 0 : -1;
    if (q->busy)
        return fail(err, RV_ERR_OPERATION_INVALID,
                    "Requested operation is not valid: domain '%s' is busy with another job",
                    dom_name(d));
    if (q->tree.n && !drop)
        return fail(err, RV_ERR_OPERATION_INVALID,
                    "Requested operation is not valid: cannot delete inactive domain with %zu "
                    "%s", q->tree.n, k->plural);
    return 0;
}

int rv_qemu_moments_busy(const qemu_dom *d, const rv_qemu_moments *q, rv_err *err)
{
    if (q->busy || d->jobs || d->starting || d->stopping)
        return fail(err, RV_ERR_OPERATION_INVALID,
                    "Requested operation is not valid: domain '%s' is busy with another job",
                    dom_name(d));
    return 0;
}

int rv_qemu_moments_put(const qemu_dom *d, const char *name, char **wire_name,
                        rv_nonnull_domain *wire_dom, rv_err *err)
{
    rv_dom_ref ref = { 0 };
    if (!(*wire_name = strdup(name)) || rv_qemu_dom_ref(d, &ref) < 0)
        return oom(err);
    rv_dom_ref_to_wire(wire_dom, &ref);
    return 0;
}

int rv_qemu_moments_write(const rv_qemu_moment_kind *k, rv_qemu_sync *sync, const qemu_dom *d,
                          const unsigned char uuid[16], const rv_snap_tree *t, json_object *trash,
                          json_object *extra, rv_err *err)
{
    char *path = rv_qemu_moments_path(k, dom_name(d));
    if (!path)
        return oom(err);
    int rc;
    if (t->n == 0 && (!trash || json_object_array_length(trash) == 0)) {
        rc = rv_qemu_sync_remove(sync, path, err);
    } else {
        json_object *root = rv_qemu_moments_json(uuid, t, trash);
        if (root && extra)
            json_object_object_add(root, "revert", json_object_get(extra));
        const char *text = root ? json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY)
                                : NULL;
        rc = text ? rv_qemu_sync_write(sync, path, text, err) : oom(err);
        json_object_put(root);
    }
    free(path);
    return rc;
}

/* ================================================================ the trash */

json_object *rv_qemu_moments_trash_with(json_object *trash, char **names, size_t nnames,
                                         char **files, size_t nfiles, bool add)
{
    json_object *out = json_object_new_array();
    size_t n = trash ? json_object_array_length(trash) : 0;
    for (size_t i = 0; out && i < n; i++) {
        json_object *e = json_object_array_get_idx(trash, i);
        const char *name = rv_qemu_moments_str(e, "name");
        bool drop = false;
        for (size_t k = 0; !add && name && k < nnames; k++)
            drop |= strcmp(names[k], name) == 0;
        if (!drop)
            json_object_array_add(out, json_object_get(e));
    }
    for (size_t k = 0; out && add && k < nnames; k++) {
        json_object *e = json_object_new_object(), *list = json_object_new_array();
        for (size_t i = 0; list && i < nfiles; i++)
            json_object_array_add(list, json_object_new_string(files[i]));
        json_object_object_add(e, "name", json_object_new_string(names[k]));
        json_object_object_add(e, "files", list);
        json_object_array_add(out, e);
    }
    return out;
}

bool rv_qemu_moments_in_trash(json_object *trash, const char *name)
{
    size_t n = trash ? json_object_array_length(trash) : 0;
    for (size_t i = 0; i < n; i++) {
        const char *t = rv_qemu_moments_str(json_object_array_get_idx(trash, i), "name");
        if (t && strcmp(t, name) == 0)
            return true;
    }
    return false;
}

