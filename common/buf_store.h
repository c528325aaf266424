/* A small store of large freed buffers for one thread to reuse
 * (remvirtd's loop).  Since every allocation past 128 KiB is its own
 * mapping (server/main.c), a large buffer freed and allocated again is
 * unmapped, mapped and faulted in page by page: 400 KB calls spent most
 * of their ~1 ms on the loop in page faults.  A thread that started a
 * store keeps such buffers instead, within fixed bounds, and its
 * rv_buf growth (common/util.h) and large XDR strings
 * (protocol/xdr_string.c) take them first.  Other threads are not
 * affected: without a store, take finds nothing and give frees.
 *
 * In libremvirt_xdr, the lowest layer, since its string filter uses it. */
#ifndef RV_COMMON_BUF_STORE_H
#define RV_COMMON_BUF_STORE_H

#include <stddef.h>

/* Keep, on the calling thread, freed buffers of `min` to `each` bytes
 * while fewer than `slots` are kept and they total at most `total`
 * bytes.  0, or -1 out of memory. */
int rv_buf_store_start(size_t min, size_t each, size_t total, unsigned slots);
/* The bytes the calling thread's store holds. */
size_t rv_buf_store_held(void);
/* Free what the calling thread's store holds; it goes on keeping. */
void rv_buf_store_drop(void);
/* Free what the calling thread's store holds and keep no more. */
void rv_buf_store_stop(void);
/* The smallest kept buffer of cap bytes or more and under twice that,
 * out of the store, its size in *got; NULL if none. */
char *rv_buf_store_take(size_t cap, size_t *got);
/* Keep p (a malloc'd buffer of cap usable bytes; NULL is fine) if it fits
 * in the store, else free it. */
void rv_buf_store_give(char *p, size_t cap);
/* malloc(size), from the store when it has a fitting buffer. */
void *rv_buf_store_alloc(size_t size);
/* free(p), or keep it in the store if it fits. */
void rv_buf_store_free(void *p);

#endif
