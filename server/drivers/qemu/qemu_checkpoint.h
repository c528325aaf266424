/* The QEMU driver's domain checkpoints (qemu_checkpoint.c): a persistent
 * dirty bitmap per disk of a running domain, named after the checkpoint;
 * the metadata in <config_dir>/checkpoint/<name>.json. */
#ifndef RV_SERVER_DRIVERS_QEMU_QEMU_CHECKPOINT_H
#define RV_SERVER_DRIVERS_QEMU_QEMU_CHECKPOINT_H

#include <stdbool.h>

#include <json-c/json.h>

#include "server/drivers/qemu/qemu_driver.h"

/* config_dir/checkpoint/<name>.json (malloc'd; NULL: no memory). */
char *rv_qemu_checkpoint_metadata_path(const char *name);
/* Free the metadata read so far (daemon exit). */
void rv_qemu_checkpoints_cleanup(void);
/* Before d is undefined: as libvirt, a shut-off domain with checkpoints
 * is refused unless flags has RV_DOMAIN_UNDEFINE_CHECKPOINTS_METADATA
 * (the undefine then drops their metadata; the images keep the bitmaps). */
int rv_qemu_checkpoints_undefine(const qemu_dom *d, unsigned int flags, rv_err *err);
/* The undefine's metadata file is gone: forget what was read of it. */
void rv_qemu_checkpoints_forget(const unsigned char uuid[16]);

/* For incremental backups: the bitmap that holds what changed on d's disk
 * `target` since checkpoint `name`, borrowed until the next checkpoint
 * call changes d's checkpoints; NULL with libvirt's error when d has no
 * such checkpoint (RV_ERR_NO_DOMAIN_CHECKPOINT) or the checkpoint has no
 * bitmap on that disk (RV_ERR_CHECKPOINT_INCONSISTENT).  Every
 * checkpoint's bitmap stays enabled, as under libvirt 9.0, so it alone
 * covers every change since its checkpoint, later checkpoints or not.
 * Whether QEMU still has it is for the caller's QMP to find out. */
const char *rv_qemu_checkpoint_bitmap(const qemu_dom *d, const char *name, const char *target,
                                      rv_err *err);
/* Whether a checkpoint operation on d is under way (a backup that needs
 * its bitmaps to stay should wait or refuse). */
bool rv_qemu_checkpoints_busy(const qemu_dom *d);

/* The dirty byte count of bitmap on query-block's disk entry (QEMU lists
 * them under the entry or, newer, under its "inserted"); -1: no such
 * bitmap. */
long long rv_qemu_bitmap_count(json_object *entry, const char *bitmap);

/* A checkpoint made with a backup, atomically with its start, as libvirt
 * makes it: rv_qemu_checkpoint_with checks xml as CREATE_XML checks it
 * (NULL with err), marks d's checkpoints busy and writes the intent off
 * the loop; then done(op, data, err) tells the intent written (err NULL) or
 * not (the operation is over).  Once written, the backup puts the
 * bitmaps' additions into its transaction (rv_qemu_checkpoint_actions,
 * blocks: query-block's answer; what a killed remvirtd left under the
 * name is removed before, on qmp) and, QEMU's answer in, calls
 * rv_qemu_checkpoint_added with QEMU's error or NULL: the checkpoint is
 * committed as CREATE_XML commits it, then done(op, data, err) tells the
 * commit (NULL done: nobody is told; a call with an error ends the
 * operation without a checkpoint). */
typedef struct chk_op rv_qemu_chk_op;
typedef void rv_qemu_checkpoint_done(rv_qemu_chk_op *op, void *data, const rv_err *err);
rv_qemu_chk_op *rv_qemu_checkpoint_with(qemu_dom *d, const char *xml, rv_qemu_checkpoint_done *done,
                                        void *data, rv_err *err);
int rv_qemu_checkpoint_actions(rv_qemu_chk_op *op, rv_qmp *qmp, json_object *blocks,
                               json_object *actions, rv_err *err);
void rv_qemu_checkpoint_added(rv_qemu_chk_op *op, const rv_err *qerr, rv_qemu_checkpoint_done *done,
                              void *data);

#endif
