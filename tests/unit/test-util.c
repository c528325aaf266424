/* Shared helpers: UUID text both ways, the growable buffer and the store
 * of large ones, the error reporter. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <pthread.h>

#include "common/buf_store.h"
#include "common/error.h"
#include "common/util.h"
#include "tests/unit/check.h"

static const unsigned char known_uuid[16] = {
    0x66, 0x95, 0xeb, 0x01, 0xf6, 0xa4, 0x83, 0x04,
    0x79, 0xaa, 0x97, 0xf2, 0x50, 0x2e, 0x19, 0x3f,
};

static void expect_uuid(const char *text)
{
    unsigned char u[16];
    memset(u, 0, sizeof(u));
    if (rv_uuid_parse(text, u) != 0)
        check_fail(__FILE__, __LINE__, "rv_uuid_parse(\"%s\") failed", text);
    CHECK_MEM_EQ(u, 16, known_uuid, 16);
}

static void expect_bad_uuid(const char *text)
{
    unsigned char u[16];
    if (rv_uuid_parse(text, u) != -1)
        check_fail(__FILE__, __LINE__, "rv_uuid_parse(\"%s\") accepted it", text);
}

static void test_uuid(void)
{
    char text[RV_UUID_STRING_LEN];
    rv_uuid_format(known_uuid, text);
    CHECK_STR_EQ(text, "6695eb01-f6a4-8304-79aa-97f2502e193f");
    CHECK_UINT_EQ(strlen(text), RV_UUID_STRING_LEN - 1);

    expect_uuid("6695eb01-f6a4-8304-79aa-97f2502e193f");
    expect_uuid("6695EB01-F6A4-8304-79AA-97F2502E193F");
    expect_uuid("6695eb01f6a4830479aa97f2502e193f");
    expect_uuid("  6695eb01-f6a4-8304-79aa-97f2502e193f\n");

    expect_bad_uuid("");
    expect_bad_uuid("6695eb01-f6a4-8304-79aa-97f2502e193");          /* 35 */
    expect_bad_uuid("6695eb01-f6a4-8304-79aa-97f2502e193f0");        /* 37 */
    expect_bad_uuid("6695eb01f-6a4-8304-79aa-97f2502e193f");         /* dash moved */
    expect_bad_uuid("6695eb01-f6a4-8304-79aa-97f2502e193g");         /* not hex */
    expect_bad_uuid("6695eb01-f6a4-8304-79aa+97f2502e193f");
    expect_bad_uuid("6695eb01f6a4830479aa97f2502e193");              /* 31 */
    expect_bad_uuid("6695eb01 f6a4 8304 79aa 97f2502e193f");
    expect_bad_uuid("6695eb01f6a4830479aa97f2502e19-3f");            /* dash in bare form */

    unsigned char a[16], b[16];
    rv_uuid_generate(a);
    rv_uuid_generate(b);
    CHECK(memcmp(a, b, 16) != 0);
    CHECK_UINT_EQ(a[6] >> 4, 4);            /* version 4 */
    CHECK_UINT_EQ(a[8] & 0xc0, 0x80);       /* RFC 4122 variant */
    unsigned char back[16];
    rv_uuid_format(a, text);
    CHECK_INT_EQ(rv_uuid_parse(text, back), 0);
    CHECK_MEM_EQ(back, 16, a, 16);
}

static void append(rv_buf *b, const char *s, size_t n)
{
    CHECK_INT_EQ(rv_buf_reserve(b, n), 0);
    memcpy(b->data + b->len, s, n);
    b->len += n;
}

static void test_buf(void)
{
    rv_buf b = { 0 };
    CHECK_UINT_EQ(rv_buf_used(&b), 0);

    append(&b, "hello world", 11);
    CHECK_UINT_EQ(rv_buf_used(&b), 11);
    CHECK(b.cap >= 11);
    CHECK_MEM_EQ(rv_buf_head(&b), rv_buf_used(&b), "hello world", 11);

    rv_buf_consume(&b, 6);
    CHECK_UINT_EQ(rv_buf_used(&b), 5);
    CHECK_MEM_EQ(rv_buf_head(&b), rv_buf_used(&b), "world", 5);

    /* Consuming everything resets the offsets so the space is reused. */
    rv_buf_consume(&b, 5);
    CHECK_UINT_EQ(rv_buf_used(&b), 0);
    CHECK_UINT_EQ(b.start, 0);
    CHECK_UINT_EQ(b.len, 0);

    /* Reserve compacts consumed space before it grows. */
    size_t cap = b.cap;
    char *fill = malloc(cap);
    CHECK(fill != NULL);
    for (size_t i = 0; i < cap; i++)
        fill[i] = (char)('a' + i % 26);
    append(&b, fill, cap - 10);
    rv_buf_consume(&b, cap / 2);
    char *data = b.data;
    CHECK_INT_EQ(rv_buf_reserve(&b, cap / 4), 0);
    CHECK_UINT_EQ(b.cap, cap);
    CHECK(b.data == data);
    CHECK_UINT_EQ(b.start, 0);
    CHECK_MEM_EQ(rv_buf_head(&b), rv_buf_used(&b), fill + cap / 2, cap - 10 - cap / 2);

    /* Growing keeps the live bytes. */
    size_t used = rv_buf_used(&b);
    CHECK_INT_EQ(rv_buf_reserve(&b, cap * 3), 0);
    CHECK(b.cap - b.len >= cap * 3);
    CHECK_MEM_EQ(rv_buf_head(&b), rv_buf_used(&b), fill + cap / 2, used);

    /* An impossible size fails instead of wrapping around. */
    size_t before = b.cap;
    CHECK_INT_EQ(rv_buf_reserve(&b, SIZE_MAX), -1);
    CHECK_INT_EQ(rv_buf_reserve(&b, SIZE_MAX / 2 + 2), -1);
    CHECK_UINT_EQ(b.cap, before);
    CHECK_MEM_EQ(rv_buf_head(&b), rv_buf_used(&b), fill + cap / 2, used);

    /* Shrinking only happens when the buffer is empty. */
    size_t keep = before / 2;
    rv_buf_shrink(&b, keep);
    CHECK_UINT_EQ(b.cap, before);
    rv_buf_consume(&b, rv_buf_used(&b));
    rv_buf_shrink(&b, keep);
    CHECK_UINT_EQ(b.cap, keep);
    append(&b, "again", 5);
    CHECK_MEM_EQ(rv_buf_head(&b), rv_buf_used(&b), "again", 5);
    rv_buf_consume(&b, 5);
    rv_buf_shrink(&b, 0);
    CHECK(b.data == NULL);
    CHECK_UINT_EQ(b.cap, 0);

    append(&b, "x", 1);
    rv_buf_free(&b);
    CHECK(b.data == NULL);
    CHECK_UINT_EQ(b.cap, 0);
    CHECK_UINT_EQ(b.len, 0);
    free(fill);
}

static void test_err(void)
{
    rv_err err = { 0 };
    CHECK(!rv_err_is_set(&err));
    rv_err_set(&err, RV_FROM_TEST, RV_ERR_NO_DOMAIN, "Domain not found: %s '%s'", "name", "x");
    CHECK(rv_err_is_set(&err));
    CHECK_INT_EQ(err.code, RV_ERR_NO_DOMAIN);
    CHECK_INT_EQ(err.domain, RV_FROM_TEST);
    CHECK_INT_EQ(err.level, RV_ERR_LEVEL_ERROR);
    CHECK_STR_EQ(err.message, "Domain not found: name 'x'");

    /* Setting again replaces (valgrind sees a leak otherwise). */
    rv_err_set_errno(&err, RV_FROM_RPC, ENOENT, "cannot connect to %s", "/nowhere");
    CHECK_INT_EQ(err.code, RV_ERR_SYSTEM_ERROR);
    CHECK_INT_EQ(err.domain, RV_FROM_RPC);
    CHECK_STR_EQ(err.message, "cannot connect to /nowhere: No such file or directory");

    rv_err dst = { 0 };
    rv_err_set(&dst, RV_FROM_NONE, RV_ERR_INTERNAL_ERROR, "old");
    rv_err_move(&dst, &err);
    CHECK(!rv_err_is_set(&err));
    CHECK(err.message == NULL);
    CHECK_STR_HAS(dst.message, "/nowhere");
    rv_err_clear(&dst);
    CHECK(!rv_err_is_set(&dst));
    CHECK(dst.message == NULL);
}

static void expect_escaped(const char *in, size_t len, int keep_newlines, const char *want)
{
    char out[256];
    size_t n = rv_escape_text(out, sizeof(out), in, len, keep_newlines);
    CHECK_STR_EQ(out, want);
    CHECK_UINT_EQ(n, strlen(want));
    char *dup = rv_escape_text_dup(in, len, keep_newlines);
    CHECK(dup != NULL);
    CHECK_STR_EQ(dup, want);
    free(dup);
}

#define ESC(lit, keep, want) expect_escaped((lit), sizeof(lit) - 1, (keep), (want))

static void test_escape(void)
{
    ESC("plain text, 100% ASCII ~", 0, "plain text, 100% ASCII ~");
    /* A forged log line and a terminal's escape sequences. */
    ESC("eve\n2026-01-01 00:00:00.000+0000: 1: error : x", 0,
        "eve\\n2026-01-01 00:00:00.000+0000: 1: error : x");
    ESC("a\r\tb\x1b[2J\x07\x7f\x00z", 0, "a\\r\\tb\\x1b[2J\\x07\\x7f\\x00z");
    /* Lines kept where asked, every other control still escaped. */
    ESC("line 1\nline 2\r\n\x1b]0;title\x07", 1, "line 1\nline 2\\r\n\\x1b]0;title\\x07");
    /* UTF-8 passes; C1 controls in UTF-8 form (CSI is U+009B) do not. */
    ESC("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xc2\xa0", 0,
        "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xc2\xa0");
    ESC("x\xc2\x9b" "31m", 0, "x\\xc2\\x9b31m");
    /* Not UTF-8: a raw CSI byte, a lone continuation, an overlong '/', a
     * surrogate, a character cut short at the end. */
    ESC("\x9b\x80\xc0\xaf\xed\xa0\x80\xe2\x82", 0,
        "\\x9b\\x80\\xc0\\xaf\\xed\\xa0\\x80\\xe2\\x82");

    /* Cut to fit, never inside an escape or a character. */
    char small[8];
    CHECK_UINT_EQ(rv_escape_text(small, sizeof(small), "ab\ncd", 5, 0), 6);
    CHECK_STR_EQ(small, "ab\\ncd");
    CHECK_UINT_EQ(rv_escape_text(small, sizeof(small), "abcde\x01", 6, 0), 5);
    CHECK_STR_EQ(small, "abcde");
    CHECK_UINT_EQ(rv_escape_text(small, sizeof(small), "abcde\xc3\xa9", 7, 0), 7);
    CHECK_STR_EQ(small, "abcde\xc3\xa9");
    CHECK_UINT_EQ(rv_escape_text(small, sizeof(small), "abcdef\xc3\xa9", 8, 0), 6);
    CHECK_STR_EQ(small, "abcdef");
    CHECK_UINT_EQ(rv_escape_text(small, 1, "abc", 3, 0), 0);
    CHECK_STR_EQ(small, "");
}

#define KiB 1024

static void *other_thread(void *arg)
{
    /* No store here: a large buffer let go is freed, none is taken. */
    rv_buf b = { 0 };
    size_t got;
    CHECK_INT_EQ(rv_buf_resize(&b, 300 * KiB), 0);
    rv_buf_free(&b);
    CHECK(rv_buf_store_take(128 * KiB, &got) == NULL);
    CHECK_UINT_EQ(rv_buf_store_held(), 0);
    return arg;
}

/* The store keeps large buffers within its bounds and gives them back
 * to rv_bufs growing past its minimum, on its own thread only. */
static void test_store(void)
{
    CHECK_INT_EQ(rv_buf_store_start(128 * KiB, 1024 * KiB, 1536 * KiB, 3), 0);

    /* Too small, too large: freed, not kept. */
    rv_buf b = { 0 };
    CHECK_INT_EQ(rv_buf_resize(&b, 64 * KiB), 0);
    rv_buf_free(&b);
    CHECK_INT_EQ(rv_buf_resize(&b, 2048 * KiB), 0);
    rv_buf_free(&b);
    CHECK_UINT_EQ(rv_buf_store_held(), 0);

    /* A 400 KiB buffer let go is the one a later growth to 300 KiB gets,
     * with the live bytes moved into it. */
    CHECK_INT_EQ(rv_buf_resize(&b, 400 * KiB), 0);
    char *first = b.data;
    rv_buf_shrink(&b, 0);
    CHECK_UINT_EQ(rv_buf_store_held(), 400 * KiB);
    append(&b, "live", 4);
    CHECK_INT_EQ(rv_buf_reserve(&b, 300 * KiB), 0);
    CHECK(b.data == first);
    CHECK_UINT_EQ(b.cap, 400 * KiB);
    CHECK_MEM_EQ(rv_buf_head(&b), rv_buf_used(&b), "live", 4);
    CHECK_UINT_EQ(rv_buf_store_held(), 0);
    rv_buf_free(&b);

    /* A kept buffer of twice the size asked for or more is not taken. */
    size_t got;
    CHECK(rv_buf_store_take(200 * KiB, &got) == NULL);
    CHECK(rv_buf_store_take(300 * KiB, &got) == first);
    CHECK_UINT_EQ(got, 400 * KiB);
    rv_buf_store_give(first, got);

    /* The total and the number of buffers bound what is kept. */
    rv_buf more[4] = { { 0 } };
    for (int i = 0; i < 4; i++)
        CHECK_INT_EQ(rv_buf_resize(&more[i], 500 * KiB), 0);
    for (int i = 0; i < 4; i++)
        rv_buf_free(&more[i]);
    CHECK_UINT_EQ(rv_buf_store_held(), 1400 * KiB);
    for (int i = 0; i < 3; i++)
        CHECK_INT_EQ(rv_buf_resize(&more[i], 129 * KiB), 0);
    for (int i = 0; i < 3; i++)
        rv_buf_free(&more[i]);
    CHECK_UINT_EQ(rv_buf_store_held(), 1400 * KiB);

    /* Strings come from it and go back (malloc_usable_size). */
    char *s = rv_buf_store_alloc(450 * KiB);
    CHECK(s != NULL);
    CHECK_UINT_EQ(rv_buf_store_held(), 900 * KiB);
    rv_buf_store_free(s);
    CHECK(rv_buf_store_held() >= 1400 * KiB);

    pthread_t t;
    CHECK_INT_EQ(pthread_create(&t, NULL, other_thread, NULL), 0);
    CHECK_INT_EQ(pthread_join(t, NULL), 0);

    rv_buf_store_stop();
    CHECK_UINT_EQ(rv_buf_store_held(), 0);
    CHECK_INT_EQ(rv_buf_resize(&b, 300 * KiB), 0);
    rv_buf_free(&b);
    CHECK_UINT_EQ(rv_buf_store_held(), 0);
}

int main(void)
{
    test_uuid();
    test_buf();
    test_store();
    test_err();
    test_escape();
    printf("util tests passed\n");
    return 0;
}
