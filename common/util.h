/* Small helpers both sides use: a growable byte buffer and UUID text. */
#ifndef RV_COMMON_UTIL_H
#define RV_COMMON_UTIL_H

#include <stddef.h>

/* Bytes [start, len) are live; consumers advance start, producers append
 * at len.  rv_buf_reserve() compacts before it grows. */
typedef struct rv_buf {
    char *data;
    size_t start;
    size_t len;
    size_t cap;
} rv_buf;

/* Make room for `more` bytes after len; returns 0 or -1 (ENOMEM). */
int rv_buf_reserve(rv_buf *b, size_t more);
/* Compact, then make the capacity exactly cap (at least the bytes live
 * and not 0; growing on a thread with a buffer store, a kept buffer of
 * under twice cap may be taken: common/buf_store.h); returns 0 or -1
 * (ENOMEM, or cap too small). */
int rv_buf_resize(rv_buf *b, size_t cap);
static inline size_t rv_buf_used(const rv_buf *b) { return b->len - b->start; }
static inline char *rv_buf_head(const rv_buf *b) { return b->data + b->start; }
void rv_buf_consume(rv_buf *b, size_t n);
/* Give back memory over `keep` bytes once the buffer is empty. */
void rv_buf_shrink(rv_buf *b, size_t keep);
void rv_buf_free(rv_buf *b);

/* A hexadecimal digit's value (either case), or -1. */
int rv_hex_digit(int c);

#define RV_UUID_STRING_LEN 37   /* 36 characters and the NUL */
void rv_uuid_format(const unsigned char uuid[16], char out[RV_UUID_STRING_LEN]);
/* Accepts the 8-4-4-4-12 form (and 32 bare hex digits); 0 or -1. */
int rv_uuid_parse(const char *text, unsigned char uuid[16]);
/* 16 random bytes with the version-4 bits set. */
void rv_uuid_generate(unsigned char uuid[16]);

/* Text that came from a peer, made safe for a log line or a terminal:
 * control characters (C0, DEL, and C1 in their UTF-8 form, which some
 * terminals obey) and bytes that are not UTF-8 become \n, \r, \t or \xHH,
 * so they can neither start a forged line nor move the cursor.  With
 * keep_newlines, '\n' passes (a terminal text of several lines).  Writes
 * at most size bytes including the NUL, never half an escape or half a
 * character, and returns the length written (size must be at least 1). */
size_t rv_escape_text(char *dst, size_t size, const char *src, size_t len, int keep_newlines);
/* The same into a new string; NULL when out of memory. */
char *rv_escape_text_dup(const char *src, size_t len, int keep_newlines);

#endif
