#include "common/util.h"

#include "common/buf_store.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

/* The live bytes to the front. */
static void compact(rv_buf *b)
{
    if (b->start == 0)
        return;
    memmove(b->data, b->data + b->start, b->len - b->start);
    b->len -= b->start;
    b->start = 0;
}

int rv_buf_reserve(rv_buf *b, size_t more)
{
    if (b->cap - b->len >= more)
        return 0;
    compact(b);
    if (b->cap - b->len >= more)
        return 0;
    if (more > ((size_t)-1) / 2 - b->len)
        return -1;
    /* Doubling keeps appends cheap; a request past double gets exactly its
     * size, so one large frame does not cost twice its length.  A new
     * buffer starts small: remvirtd gives a client's buffers back when
     * they empty, so an event fanned out to 10,000 quiet clients makes
     * 10,000 of them at once, and small ones come from memory the
     * allocator already holds instead of fresh pages. */
    size_t cap = b->cap ? b->cap * 2 : 256;
    if (cap < b->len + more)
        cap = b->len + more;
    return rv_buf_resize(b, cap);
}

int rv_buf_resize(rv_buf *b, size_t cap)
{
    compact(b);
    if (cap < b->len || cap == 0)
        return -1;
    size_t got;
    char *kept = cap > b->cap ? rv_buf_store_take(cap, &got) : NULL;
    if (kept) {
        /* Its pages are mapped already: a fresh mapping of this size
         * would fault each of them in again. */
        if (b->len)
            memcpy(kept, b->data, b->len);
        rv_buf_store_give(b->data, b->cap);
        b->data = kept;
        b->cap = got;
        return 0;
    }
    char *p = realloc(b->data, cap);
    if (!p)
        return -1;
    b->data = p;
    b->cap = cap;
    return 0;
}

void rv_buf_consume(rv_buf *b, size_t n)
{
    b->start += n;
    if (b->start >= b->len)
        b->start = b->len = 0;
}

void rv_buf_shrink(rv_buf *b, size_t keep)
{
    if (b->cap <= keep || rv_buf_used(b) != 0)
        return;
    b->start = b->len = 0;
    if (keep == 0) {
        /* realloc(p, 0) may free p; say what is meant. */
        rv_buf_store_give(b->data, b->cap);
        b->data = NULL;
        b->cap = 0;
        return;
    }
    char *p = realloc(b->data, keep);
    if (p) {
        b->data = p;
        b->cap = keep;
    }
}

void rv_buf_free(rv_buf *b)
{
    rv_buf_store_give(b->data, b->cap);
    memset(b, 0, sizeof(*b));
}

void rv_uuid_format(const unsigned char u[16], char out[RV_UUID_STRING_LEN])
{
    snprintf(out, RV_UUID_STRING_LEN,
             "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7],
             u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}

int rv_hex_digit(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    c = tolower(c);
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

int rv_uuid_parse(const char *text, unsigned char uuid[16])
{
    const char *p = text;
    while (isspace((unsigned char)*p))
        p++;
    size_t len = strlen(p);
    while (len > 0 && isspace((unsigned char)p[len - 1]))
        len--;
    int dashed = len == 36;
    if (!dashed && len != 32)
        return -1;
    int n = 0;
    for (size_t i = 0; i < len;) {
        if (dashed && (i == 8 || i == 13 || i == 18 || i == 23)) {
            if (p[i] != '-')
                return -1;
            i++;
            continue;
        }
        int hi = rv_hex_digit((unsigned char)p[i]), lo = rv_hex_digit((unsigned char)p[i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        uuid[n++] = (unsigned char)(hi << 4 | lo);
        i += 2;
    }
    return n == 16 ? 0 : -1;
}

void rv_uuid_generate(unsigned char uuid[16])
{
    if (getrandom(uuid, 16, 0) != 16) {
        for (int i = 0; i < 16; i++)
            uuid[i] = (unsigned char)random();
    }
    uuid[6] = (uuid[6] & 0x0f) | 0x40;
    uuid[8] = (uuid[8] & 0x3f) | 0x80;
}

/* Length of the UTF-8 character at s (at most len bytes), 0 if the bytes
 * are not one: overlong forms, surrogates and values past U+10FFFF
 * included.  *cp gets its value. */
static size_t utf8_char(const unsigned char *s, size_t len, unsigned *cp)
{
    unsigned c = s[0], lo = 0x80, hi = 0xbf;
    size_t n;
    if (c >= 0xc2 && c <= 0xdf)
        n = 2, c &= 0x1f;
    else if (c >= 0xe0 && c <= 0xef)
        n = 3, lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf, c &= 0x0f;
    else if (c >= 0xf0 && c <= 0xf4)
        n = 4, lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf, c &= 0x07;
    else
        return 0;
    if (len < n || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if (i > 1 && (s[i] & 0xc0) != 0x80)
            return 0;
        c = (c << 6) | (s[i] & 0x3f);
    }
    *cp = c;
    return n;
}

size_t rv_escape_text(char *dst, size_t size, const char *src, size_t len, int keep_newlines)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *s = (const unsigned char *)src;
    size_t o = 0;
    for (size_t i = 0; i < len;) {
        char esc[16];
        size_t n = 0, take = 1;
        unsigned cp = 0;
        unsigned char c = s[i];
        if (c >= 0x20 && c < 0x7f) {
            esc[n++] = (char)c;
        } else if (c == '\n' && keep_newlines) {
            esc[n++] = '\n';
        } else if (c == '\n' || c == '\r' || c == '\t') {
            esc[n++] = '\\';
            esc[n++] = c == '\n' ? 'n' : c == '\r' ? 'r' : 't';
        } else if (c >= 0x80 && (take = utf8_char(s + i, len - i, &cp)) > 0 && cp >= 0xa0) {
            memcpy(esc, s + i, take);
            n = take;
        } else {
            /* C0, DEL, a C1 character (each of its bytes) or a stray byte. */
            take = take ? take : 1;
            for (size_t k = 0; k < take; k++) {
                esc[n++] = '\\';
                esc[n++] = 'x';
                esc[n++] = hex[s[i + k] >> 4];
                esc[n++] = hex[s[i + k] & 15];
            }
        }
        if (o + n + 1 > size)
            break;
        memcpy(dst + o, esc, n);
        o += n;
        i += take;
    }
    dst[o] = '\0';
    return o;
}

char *rv_escape_text_dup(const char *src, size_t len, int keep_newlines)
{
    /* Each byte becomes at most four. */
    if (len > ((size_t)-1 - 1) / 4)
        return NULL;
    char *out = malloc(len * 4 + 1);
    if (out)
        rv_escape_text(out, len * 4 + 1, src, len, keep_newlines);
    return out;
}
