/* The QEMU driver's domain snapshot slots (qemu_snapshot.c): internal
 * snapshots of qcow2 disks, their metadata in <config_dir>/snapshot/. */
#ifndef RV_SERVER_DRIVERS_QEMU_QEMU_SNAPSHOT_H
#define RV_SERVER_DRIVERS_QEMU_QEMU_SNAPSHOT_H

#include <json-c/json.h>

#include "server/drivers/qemu/qemu_driver.h"

struct rv_snap_tree;

/* At start-up, once the domains are known: the snapshots an operation
 * that a kill interrupted left on the disks (the metadata's trash) are
 * removed from those of domains that do not run. */
void rv_qemu_snapshots_recover(void);
/* Free the metadata read so far (daemon exit). */
void rv_qemu_snapshots_cleanup(void);
/* Before d is undefined: as libvirt, a shut-off domain with snapshots is
 * refused unless flags has RV_DOMAIN_UNDEFINE_SNAPSHOTS_METADATA (the
 * undefine then drops their metadata; the images keep the snapshots). */
int rv_qemu_snapshots_undefine(const qemu_dom *d, unsigned int flags, rv_err *err);
/* The undefine's metadata file is gone: forget what was read of it. */
void rv_qemu_snapshots_forget(const unsigned char uuid[16]);
/* config_dir/snapshot/<name>.json (malloc'd; NULL: no memory). */
char *rv_qemu_snapshot_metadata_path(const char *name);

/* The metadata file's JSON, shared with the checkpoints (qemu_checkpoint.c,
 * records of server/drivers/conf/snapshot_tree.h): a whole file parsed
 * (NULL when missing or damaged, logged with who); a tree (with the
 * domain's uuid and the trash array, kept when not empty) as a document;
 * a document's records into t (empty), what is damaged dropped with a
 * warning naming what; a string member (NULL: none). */
json_object *rv_qemu_moments_read(const char *path, const char *who);
json_object *rv_qemu_moments_json(const unsigned char uuid[16], const struct rv_snap_tree *t,
                                  json_object *trash);
void rv_qemu_moments_from_json(json_object *root, struct rv_snap_tree *t, const char *what);
const char *rv_qemu_moments_str(json_object *o, const char *key);
/* A copy of t (the one an operation changes until its commit); -1 with
 * err when out of memory. */
int rv_qemu_moments_copy(const unsigned char uuid[16], const struct rv_snap_tree *t,
                         struct rv_snap_tree *copy, rv_err *err);


#endif
