/* A call that brings a large XML document has it parsed on a work
 * thread before its slot runs (issue 31): libxml2's parse of a
 * definition of megabytes, or of a hostile one, took up to 25 ms of the
 * loop.  Only libxml2's tree is built there, from the call's own copy of
 * the text; the slot then runs on the loop as ever (the driver's model,
 * its checks and its commit), rv_lx_read handing it the tree instead of
 * parsing (server/drivers/conf/xml_read.h).  Until the slot has run the
 * client's later calls wait (its reading is held), so its calls run and
 * are answered in the order they came. */
#ifndef RV_SERVER_PREPARSE_H
#define RV_SERVER_PREPARSE_H

#include <stddef.h>

#include "server/client.h"
#include "server/drivers/driver.h"

/* Frames shorter than this are parsed on the loop, where a small
 * document costs less than the trip through a work thread (a wake-up,
 * 20 to 30 us of latency).  Measured (docs/qemu-driver.md, "The loop's
 * worst pass"): a document
 * dense with elements costs the loop 0.2 to 0.4 ms at 16 KiB and 0.9 to
 * 1.1 ms at 32 KiB; a definition of mostly text under 0.2 ms at 64 KiB;
 * the domain XML virt-install writes is 4 to 8 KiB. */
#define RVS_PREPARSE_MIN (16 * 1024)

/* libxml2's global set-up, which is not thread-safe: once, on the loop,
 * before the work threads start. */
void rvs_preparse_init(void);

/* The document a call of the remote program's procedure proc brings (in
 * its decoded args), or NULL when it brings none. */
const char *rvs_preparse_document(int proc, const void *args);

/* Parse xml (in d's arguments) on a work thread, then run d's slot again
 * (rv_deferred_rerun) with the result offered; c reads nothing meanwhile.
 * -1 if out of memory (nothing done). */
int rvs_preparse_submit(rvs_client *c, rv_deferred *d, const char *xml);

#endif
