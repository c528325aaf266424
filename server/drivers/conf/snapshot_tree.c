/* A domain's snapshot tree (see snapshot_tree.h). */
#include "server/drivers/conf/snapshot_tree.h"

#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "server/drivers/driver.h"

const char rv_snap_mode_internal[] = "internal", rv_snap_mode_no[] = "no",
           rv_snap_mode_bitmap[] = "bitmap";

void rv_snap_rec_free(rv_snap_rec *s)
{
    if (!s)
        return;
    free(s->name);
    free(s->description);
    free(s->dom_xml);
    for (size_t i = 0; i < s->ndisks; i++) {
        free(s->disks[i].name);         /* the modes are literals */
        free(s->disks[i].bitmap);
    }
    free(s->disks);
    free(s);
}

rv_snap_rec *rv_snap_rec_new(rv_snapshot_request *req, char *dom_xml)
{
    rv_snap_rec *s = dom_xml ? calloc(1, sizeof(*s)) : NULL;
    if (!s) {
        free(dom_xml);
        return NULL;
    }
    s->dom_xml = dom_xml;
    s->created = (long long)time(NULL);
    if (req->name) {
        s->name = req->name;
        req->name = NULL;
    } else if (asprintf(&s->name, "%lld", s->created) < 0) {
        s->name = NULL;
        rv_snap_rec_free(s);
        return NULL;
    }
    s->description = req->description;
    req->description = NULL;
    return s;
}

size_t rv_snap_rec_bytes(const rv_snap_rec *s)
{
    size_t n = sizeof(*s) + strlen(s->name) + (s->dom_xml ? strlen(s->dom_xml) : 0) +
               (s->description ? strlen(s->description) : 0);
    for (size_t i = 0; i < s->ndisks; i++)
        n += sizeof(s->disks[i]) + strlen(s->disks[i].name) +
             (s->disks[i].bitmap ? strlen(s->disks[i].bitmap) : 0);
    return n;
}

void rv_snap_tree_clear(rv_snap_tree *t)
{
    for (size_t i = 0; i < t->n; i++)
        rv_snap_rec_free(t->items[i]);
    free(t->items);
    memset(t, 0, sizeof(*t));
}

rv_snap_rec *rv_snap_tree_find(const rv_snap_tree *t, const char *name)
{
    for (size_t i = 0; t && i < t->n; i++)
        if (strcmp(t->items[i]->name, name) == 0)
            return t->items[i];
    return NULL;
}

size_t rv_snap_tree_children(const rv_snap_tree *t, const rv_snap_rec *s)
{
    size_t n = 0;
    for (size_t i = 0; i < t->n; i++)
        n += t->items[i]->parent == s;
    return n;
}

static int is_descendant(const rv_snap_rec *s, const rv_snap_rec *ancestor)
{
    for (const rv_snap_rec *p = s->parent; p; p = p->parent)
        if (p == ancestor)
            return 1;
    return 0;
}

int rv_snap_tree_add(rv_snap_tree *t, rv_snap_rec *s, size_t max, rv_err *err)
{
    if (rv_snap_tree_find(t, s->name)) {
        rv_err_set(err, RV_FROM_DOMAIN, RV_ERR_OPERATION_FAILED,
                   "operation failed: domain moment %s already exists", s->name);
        return -1;
    }
    if (t->n >= max) {
        rv_err_set(err, RV_FROM_DOMAIN_SNAPSHOT, RV_ERR_OPERATION_FAILED,
                   "operation failed: a domain may have at most %zu snapshots here", max);
        return -1;
    }
    rv_snap_rec **items = realloc(t->items, (t->n + 1) * sizeof(*items));
    if (!items) {
        rv_err_set(err, RV_FROM_DOMAIN_SNAPSHOT, RV_ERR_NO_MEMORY, "out of memory");
        return -1;
    }
    t->items = items;
    s->parent = t->current;
    items[t->n++] = s;
    t->current = s;
    return 0;
}

/* Whether s passes the list filters (the ROOTS bit aside: it means
 * DESCENDANTS in the children calls, so the callers handle it).  Every
 * snapshot has metadata and is internal. */
static int matches(const rv_snap_tree *t, const rv_snap_rec *s, unsigned int flags)
{
    /* Unlike the other pairs, LEAVES and NO_LEAVES together match nothing. */
    if (flags & (RV_DOMAIN_SNAPSHOT_LIST_LEAVES | RV_DOMAIN_SNAPSHOT_LIST_NO_LEAVES)) {
        size_t nkids = rv_snap_tree_children(t, s);
        if (((flags & RV_DOMAIN_SNAPSHOT_LIST_LEAVES) && nkids) ||
            ((flags & RV_DOMAIN_SNAPSHOT_LIST_NO_LEAVES) && !nkids))
            return 0;
    }
    if ((flags & RV_DOMAIN_SNAPSHOT_LIST_NO_METADATA) && !(flags & RV_DOMAIN_SNAPSHOT_LIST_METADATA))
        return 0;
    if ((flags & RV_DOMAIN_SNAPSHOT_LIST_EXTERNAL) && !(flags & RV_DOMAIN_SNAPSHOT_LIST_INTERNAL))
        return 0;
    unsigned int states = flags & (RV_DOMAIN_SNAPSHOT_LIST_INACTIVE | RV_DOMAIN_SNAPSHOT_LIST_ACTIVE |
                                   RV_DOMAIN_SNAPSHOT_LIST_DISK_ONLY);
    if (states) {
        int off = s->state == RV_DOMAIN_SHUTOFF;
        if (!((states & RV_DOMAIN_SNAPSHOT_LIST_INACTIVE) && off) &&
            !((states & RV_DOMAIN_SNAPSHOT_LIST_ACTIVE) && !off))
            return 0;
    }
    return 1;
}

int rv_snap_tree_collect(const rv_snap_tree *t, const rv_snap_rec *under, unsigned int flags,
                         rv_snap_rec ***out)
{
    size_t n = 0;
    *out = NULL;
    if (!t || !t->n)
        return 0;
    rv_snap_rec **list = malloc(t->n * sizeof(*list));
    if (!list)
        return -1;
    int tree_bit = (flags & RV_DOMAIN_SNAPSHOT_LIST_ROOTS) != 0;
    for (size_t i = 0; i < t->n; i++) {
        rv_snap_rec *s = t->items[i];
        int in = under ? (tree_bit ? is_descendant(s, under) : s->parent == under)
                       : (!tree_bit || !s->parent);
        if (in && matches(t, s, flags))
            list[n++] = s;
    }
    *out = list;
    return (int)n;
}

unsigned char *rv_snap_tree_doomed(const rv_snap_tree *t, const rv_snap_rec *s,
                                   unsigned int flags)
{
    unsigned char *doomed = calloc(t->n ? t->n : 1, 1);
    int with_children = (flags & (RV_DOMAIN_SNAPSHOT_DELETE_CHILDREN |
                                  RV_DOMAIN_SNAPSHOT_DELETE_CHILDREN_ONLY)) != 0;
    int keep_self = (flags & RV_DOMAIN_SNAPSHOT_DELETE_CHILDREN_ONLY) != 0;
    for (size_t i = 0; doomed && i < t->n; i++)
        doomed[i] = (t->items[i] == s && !keep_self) ||
                    (with_children && is_descendant(t->items[i], s));
    return doomed;
}

void rv_snap_tree_remove(rv_snap_tree *t, const rv_snap_rec *s, const unsigned char *doomed,
                         unsigned int flags)
{
    int current_gone = 0;
    for (size_t i = 0; i < t->n; i++)
        current_gone |= doomed[i] && t->items[i] == t->current;
    if (current_gone) {
        const rv_snap_rec *heir = (flags & RV_DOMAIN_SNAPSHOT_DELETE_CHILDREN_ONLY) ? s : s->parent;
        t->current = (rv_snap_rec *)heir;
    }
    /* The children of a removed snapshot move up, past every removed one. */
    for (size_t i = 0; i < t->n; i++) {
        rv_snap_rec *r = t->items[i];
        if (doomed[i])
            continue;
        while (r->parent) {
            size_t k = 0;
            while (k < t->n && t->items[k] != r->parent)
                k++;
            if (k == t->n || !doomed[k])
                break;
            r->parent = r->parent->parent;
        }
    }
    size_t kept = 0;
    for (size_t i = 0; i < t->n; i++) {
        if (doomed[i])
            rv_snap_rec_free(t->items[i]);
        else
            t->items[kept++] = t->items[i];
    }
    t->n = kept;
}

static const char *state_word(int state)
{
    return state == RV_DOMAIN_SHUTOFF ? "shutoff" : state == RV_DOMAIN_PAUSED ? "paused"
                                                                           : "running";
}

char *rv_snap_rec_format(const rv_snap_rec *s)
{
    rv_snapshot_view view = {
        .name = s->name, .description = s->description, .state = state_word(s->state),
        .parent = s->parent ? s->parent->name : NULL, .creation_time = s->created,
        .memory = s->state == RV_DOMAIN_SHUTOFF ? "no" : "internal",
        .disks = s->disks, .ndisks = s->ndisks, .domain_xml = s->dom_xml,
    };
    return rv_snapshot_format(&view);
}

char *rv_chk_rec_format(const rv_snap_rec *s, int with_domain, const unsigned long long *sizes)
{
    rv_checkpoint_view view = {
        .name = s->name, .description = s->description,
        .parent = s->parent ? s->parent->name : NULL, .creation_time = s->created,
        .disks = s->disks, .ndisks = s->ndisks, .sizes = sizes,
        .domain_xml = with_domain ? s->dom_xml : NULL,
    };
    return rv_checkpoint_format(&view);
}

int rv_chk_rec_disks(rv_snap_rec *s, const rv_snapshot_request *req, const char *const *targets,
                     size_t ntargets, rv_err *err)
{
    for (size_t i = 0; i < req->ndisks; i++) {
        const rv_snapshot_disk *rd = &req->disks[i];
        size_t k = 0;
        while (rd->name && k < ntargets && strcmp(targets[k], rd->name) != 0)
            k++;
        if (!rd->name || k == ntargets) {
            rv_err_set(err, RV_FROM_DOMAIN_CHECKPOINT, RV_ERR_CONFIG_UNSUPPORTED,
                       "unsupported configuration: no disk named '%s'", rd->name ? rd->name : "");
            return -1;
        }
        if (rd->snapshot && strcmp(rd->snapshot, "bitmap") != 0 && strcmp(rd->snapshot, "no") != 0) {
            rv_err_set(err, RV_FROM_DOMAIN_CHECKPOINT, RV_ERR_XML_ERROR,
                       "XML error: unknown checkpoint type '%s' for disk '%s'", rd->snapshot,
                       rd->name);
            return -1;
        }
    }
    if (ntargets && !(s->disks = calloc(ntargets, sizeof(*s->disks))))
        goto oom;
    for (size_t k = 0; k < ntargets; k++) {
        const rv_snapshot_disk *asked = NULL;
        for (size_t i = 0; i < req->ndisks && !asked; i++)
            if (strcmp(req->disks[i].name, targets[k]) == 0)
                asked = &req->disks[i];
        /* Listed disks default to a bitmap, unlisted ones (when any is
         * listed) to none. */
        int bitmap = asked ? !asked->snapshot || strcmp(asked->snapshot, "bitmap") == 0
                           : req->ndisks == 0;
        rv_snapshot_disk *d = &s->disks[s->ndisks++];
        d->snapshot = (char *)(bitmap ? rv_snap_mode_bitmap : rv_snap_mode_no);
        if (!(d->name = strdup(targets[k])) ||
            (bitmap && !(d->bitmap = strdup(asked && asked->bitmap ? asked->bitmap : s->name))))
            goto oom;
    }
    return 0;
oom:
    rv_err_set(err, RV_FROM_DOMAIN_CHECKPOINT, RV_ERR_NO_MEMORY, "out of memory");
    return -1;
}
