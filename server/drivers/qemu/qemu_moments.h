/* The metadata of a QEMU domain's snapshots (qemu_snapshot.c) or
 * checkpoints (qemu_checkpoint.c), one piece of code for both: a tree of
 * server/drivers/conf/snapshot_tree.h records per domain, read from
 * <config_dir>/<kind>/<domain>.json the first time it is asked for and
 * written whole, off the loop, after each change.  The file names its
 * domain's uuid (a later domain of the same name does not inherit it),
 * the records (parents first), the current one, and the trash: entries
 * {"name", "files"} for moments whose data may be left although no list
 * shows them (what each kind does with them is its own). */
#ifndef RV_SERVER_DRIVERS_QEMU_QEMU_MOMENTS_H
#define RV_SERVER_DRIVERS_QEMU_QEMU_MOMENTS_H

#include <stdbool.h>

#include <json-c/json.h>

#include "server/drivers/conf/snapshot_tree.h"
#include "server/drivers/qemu/qemu_driver.h"

enum { RV_QEMU_MOMENTS_MAX = 256 };    /* per domain: each holds a domain's XML */

/* One domain's moments of a kind, by its uuid (its name names the file). */
typedef struct rv_qemu_moments {
    unsigned char uuid[16];
    rv_snap_tree tree;
    json_object *trash;                 /* NULL: none */
    bool busy;                          /* an operation is under way */
    struct rv_qemu_moments *next;
} rv_qemu_moments;

/* A kind: its directory under the config dir, its plural for messages,
 * and the domains' moments read so far. */
typedef struct rv_qemu_moment_kind {
    const char *dir;
    const char *plural;
    rv_qemu_moments *all;
} rv_qemu_moment_kind;

/* config_dir/<dir>/<name>.json (malloc'd; NULL: no memory). */
char *rv_qemu_moments_path(const rv_qemu_moment_kind *k, const char *name);
/* d's, read from disk the first time; NULL with err without memory. */
rv_qemu_moments *rv_qemu_moments_of(rv_qemu_moment_kind *k, const qemu_dom *d, rv_err *err);
/* The domain's if read already, else NULL. */
rv_qemu_moments *rv_qemu_moments_find(const rv_qemu_moment_kind *k, const unsigned char uuid[16]);
/* Forget one domain's (its file is gone), or all (daemon exit). */
void rv_qemu_moments_forget(rv_qemu_moment_kind *k, const unsigned char uuid[16]);
void rv_qemu_moments_cleanup(rv_qemu_moment_kind *k);
/* Before d is undefined: a shut-off domain with moments is refused, as
 * libvirt refuses it, unless drop (the flag that drops their metadata). */
int rv_qemu_moments_undefine(rv_qemu_moment_kind *k, const qemu_dom *d, bool drop, rv_err *err);
/* -1 with "busy with another job" when an operation of the kind or a
 * job of d's is under way. */
int rv_qemu_moments_busy(const qemu_dom *d, const rv_qemu_moments *q, rv_err *err);
/* A moment on the wire: its name and d. */
int rv_qemu_moments_put(const qemu_dom *d, const char *name, char **wire_name,
                        rv_nonnull_domain *wire_dom, rv_err *err);
/* Write d's tree t with trash (and a "revert" member extra, if not NULL)
 * through sync, off the loop; the file goes when t and trash are empty.
 * sync->done follows. */
int rv_qemu_moments_write(const rv_qemu_moment_kind *k, rv_qemu_sync *sync, const qemu_dom *d,
                          const unsigned char uuid[16], const rv_snap_tree *t, json_object *trash,
                          json_object *extra, rv_err *err);

/* The trash with names (the data of each in files) added, or without
 * them (files NULL); a new array, NULL without memory. */
json_object *rv_qemu_moments_trash_with(json_object *trash, char **names, size_t nnames,
                                         char **files, size_t nfiles, bool add);
bool rv_qemu_moments_in_trash(json_object *trash, const char *name);

/* The JSON itself: a whole file parsed (NULL when missing or damaged,
 * logged with who); a tree (with the uuid and the trash, kept when not
 * empty) as a document; a document's records into t (empty), what is
 * damaged dropped with a warning naming what; a string member (NULL:
 * none); a copy of a tree (the one an operation changes until its
 * commit), -1 with err without memory. */
json_object *rv_qemu_moments_read(const char *path, const char *who);
json_object *rv_qemu_moments_json(const unsigned char uuid[16], const rv_snap_tree *t,
                                  json_object *trash);
void rv_qemu_moments_from_json(json_object *root, rv_snap_tree *t, const char *what);
const char *rv_qemu_moments_str(json_object *o, const char *key);
int rv_qemu_moments_copy(const unsigned char uuid[16], const rv_snap_tree *t, rv_snap_tree *copy,
                         rv_err *err);

#endif
