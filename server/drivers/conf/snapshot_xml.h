/* Domain snapshot and checkpoint XML, for every driver: the request a
 * client sends with DOMAIN_SNAPSHOT_CREATE_XML (<domainsnapshot> with a
 * name, description, <memory> and <disks>) or DOMAIN_CHECKPOINT_CREATE_XML
 * (<domaincheckpoint> with a name, description and <disks>), read with
 * libxml2 (server/drivers/conf/xml_read.h), and the snapshot's or the
 * checkpoint's XML written back in libvirt 9.0's layout. */
#ifndef RV_SERVER_DRIVERS_CONF_SNAPSHOT_XML_H
#define RV_SERVER_DRIVERS_CONF_SNAPSHOT_XML_H

#include <stddef.h>

#include "common/error.h"

/* The longest request accepted: a name and a description need far less.
 * (REDEFINE, which carries a whole domain, is not supported.) */
enum { RV_SNAPSHOT_XML_MAX = 64 * 1024 };

typedef struct rv_snapshot_disk {
    char *name;                 /* the disk's target (vda) */
    char *snapshot;             /* "internal", "external", "no"; NULL: not said */
    char *file;                 /* an external one's <source file>; NULL: not said */
    char *bitmap;               /* a checkpoint's disk: its bitmap; NULL: not said */
} rv_snapshot_disk;

typedef struct rv_snapshot_request {
    char *name;                 /* NULL: none given (or empty) */
    char *description;          /* NULL when absent */
    char *memory;               /* <memory snapshot='...'>; NULL when absent */
    rv_snapshot_disk *disks;
    size_t ndisks;
    int has_state, has_creation_time;   /* what a REDEFINE must have */
} rv_snapshot_request;

/* -1 with err set (errors from DOMAIN_SNAPSHOT, as libvirt's) on failure;
 * *out is cleared first and must be cleared by the caller after. */
int rv_snapshot_request_parse(const char *xml, rv_snapshot_request *out, rv_err *err);
void rv_snapshot_request_clear(rv_snapshot_request *req);

/* What DOMAIN_SNAPSHOT_GET_XML_DESC writes; strings borrowed. */
typedef struct rv_snapshot_view {
    const char *name;
    const char *description;    /* NULL: no element */
    const char *state;          /* "running", "paused", "shutoff" */
    const char *parent;         /* NULL: a root */
    long long creation_time;    /* seconds since the epoch */
    const char *memory;         /* "internal" or "no" */
    const rv_snapshot_disk *disks;
    size_t ndisks;
    const char *domain_xml;     /* the domain's XML at the time, or NULL */
} rv_snapshot_view;

/* NULL only when out of memory. */
char *rv_snapshot_format(const rv_snapshot_view *view);

/* A <domaincheckpoint> request, in the same struct: name, description
 * and the disks (name, checkpoint mode in snapshot, bitmap); memory and
 * the has_ fields stay unset.  Errors from DOMAIN_CHECKPOINT. */
int rv_checkpoint_request_parse(const char *xml, rv_snapshot_request *out, rv_err *err);

/* What DOMAIN_CHECKPOINT_GET_XML_DESC writes; strings borrowed. */
typedef struct rv_checkpoint_view {
    const char *name;
    const char *description;    /* NULL: no element */
    const char *parent;         /* NULL: a root */
    long long creation_time;
    const rv_snapshot_disk *disks;      /* snapshot: "bitmap" or "no" */
    size_t ndisks;
    const unsigned long long *sizes;    /* per disk, for XML_SIZE; NULL: none */
    const char *domain_xml;     /* NULL: left out (XML_NO_DOMAIN) */
} rv_checkpoint_view;

/* NULL only when out of memory. */
char *rv_checkpoint_format(const rv_checkpoint_view *view);

#endif
