/* A domain's snapshots as a tree, for every driver: the records (name,
 * description, time, the domain's state and XML then, its disks), the
 * current one, libvirt's list filters, deletion with or without the
 * children, and the XML written back.  Drivers keep one tree per domain
 * and do the hypervisor's part themselves.
 *
 * Checkpoints are kept in the same trees: their records' disks have the
 * mode "bitmap" (with the bitmap's name) or "no", and the state is
 * unused.  The checkpoint list and delete flags have the snapshot ones'
 * values where they mean the same (ROOTS/DESCENDANTS, LEAVES, NO_LEAVES;
 * CHILDREN, CHILDREN_ONLY), and TOPOLOGICAL (0x2, the snapshots'
 * METADATA) filters nothing: creation order is topological already. */
#ifndef RV_SERVER_DRIVERS_CONF_SNAPSHOT_TREE_H
#define RV_SERVER_DRIVERS_CONF_SNAPSHOT_TREE_H

#include <stddef.h>

#include "common/error.h"
#include "server/drivers/conf/snapshot_xml.h"

typedef struct rv_snap_rec rv_snap_rec;
struct rv_snap_rec {
    char *name;
    char *description;          /* NULL: none */
    long long created;          /* seconds since the epoch */
    int state;                  /* RV_DOMAIN_RUNNING, _PAUSED or _SHUTOFF when taken */
    char *dom_xml;              /* the domain's XML then */
    rv_snapshot_disk *disks;    /* the domain's disks then and their snapshot mode */
    size_t ndisks;
    rv_snap_rec *parent;        /* NULL: a root */
};

typedef struct rv_snap_tree {
    rv_snap_rec **items;        /* in creation order: parents before children */
    size_t n;
    rv_snap_rec *current;       /* NULL: none */
} rv_snap_tree;

/* A record's disks: name (and bitmap) malloc'd, snapshot one of these
 * literals. */
extern const char rv_snap_mode_internal[], rv_snap_mode_no[], rv_snap_mode_bitmap[];

void rv_snap_rec_free(rv_snap_rec *s);
/* A new record made now, of the domain's XML dom_xml (taken), taking
 * req's name (or named after its creation time, as libvirt names it) and
 * description; no disks, state 0.  NULL when out of memory (dom_xml NULL
 * counts as that). */
rv_snap_rec *rv_snap_rec_new(rv_snapshot_request *req, char *dom_xml);
/* The bytes a record holds (for the drivers' bounds). */
size_t rv_snap_rec_bytes(const rv_snap_rec *s);
/* Free every record; the tree is empty after. */
void rv_snap_tree_clear(rv_snap_tree *t);
rv_snap_rec *rv_snap_tree_find(const rv_snap_tree *t, const char *name);
size_t rv_snap_tree_children(const rv_snap_tree *t, const rv_snap_rec *s);
/* Add s under the current snapshot, as the new current one; -1 with
 * libvirt's error when its name is taken, or with err_bound set when the
 * tree holds max already (s stays the caller's on failure). */
int rv_snap_tree_add(rv_snap_tree *t, rv_snap_rec *s, size_t max, rv_err *err);
/* The records a list call asks for, in creation order: of the domain
 * (under NULL; flag ROOTS: only roots) or below a snapshot (its children,
 * or with DESCENDANTS all below it), through libvirt's filters.  *out is
 * malloc'd (NULL when none); returns the count, -1 when out of memory. */
int rv_snap_tree_collect(const rv_snap_tree *t, const rv_snap_rec *under, unsigned int flags,
                         rv_snap_rec ***out);
/* What DOMAIN_SNAPSHOT_DELETE with flags (CHILDREN, CHILDREN_ONLY) would
 * remove: a calloc'd mark per item (NULL: no memory). */
unsigned char *rv_snap_tree_doomed(const rv_snap_tree *t, const rv_snap_rec *s,
                                   unsigned int flags);
/* Remove the marked records: children of a removed one move up to its
 * parent; a removed current one hands over to s (CHILDREN_ONLY) or to the
 * closest ancestor left. */
void rv_snap_tree_remove(rv_snap_tree *t, const rv_snap_rec *s, const unsigned char *doomed,
                         unsigned int flags);
/* The snapshot's XML; NULL only when out of memory. */
char *rv_snap_rec_format(const rv_snap_rec *s);
/* A new checkpoint s's disks (s->name set), one per target of the
 * domain's in its order, as libvirt aligns a request: no <disks>: a
 * bitmap on each; else listed ones a bitmap (named after the checkpoint
 * unless given) or none as asked, unlisted ones none.  -1 with libvirt's
 * error for a disk the domain lacks or an unknown mode. */
int rv_chk_rec_disks(rv_snap_rec *s, const rv_snapshot_request *req, const char *const *targets,
                     size_t ntargets, rv_err *err);
/* A checkpoint's XML, with its domain's XML or not, with the disks'
 * sizes when given (XML_SIZE); NULL only when out of memory. */
char *rv_chk_rec_format(const rv_snap_rec *s, int with_domain, const unsigned long long *sizes);

#endif
