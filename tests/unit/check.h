/* Assertions for the C unit tests.  A failed check prints where it is,
 * the expression and the values involved, then exits 1 at once: later
 * checks usually depend on earlier ones, so going on would only add noise
 * (or a crash).  Exit 0 is success, 77 a skip, as automake expects. */
#ifndef RV_TESTS_CHECK_H
#define RV_TESTS_CHECK_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK_SKIP 77

__attribute__((noreturn, format(printf, 3, 4)))
static inline void check_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s:%d: check failed: ", file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

#define CHECK(expr) \
    do { \
        if (!(expr)) \
            check_fail(__FILE__, __LINE__, "%s", #expr); \
    } while (0)

/* Integers of any width and signedness, printed as intmax_t/uintmax_t. */
#define CHECK_INT_EQ(actual, expected) \
    do { \
        intmax_t a_ = (intmax_t)(actual), e_ = (intmax_t)(expected); \
        if (a_ != e_) \
            check_fail(__FILE__, __LINE__, "%s == %s: got %jd, expected %jd", \
                       #actual, #expected, a_, e_); \
    } while (0)

#define CHECK_UINT_EQ(actual, expected) \
    do { \
        uintmax_t a_ = (uintmax_t)(actual), e_ = (uintmax_t)(expected); \
        if (a_ != e_) \
            check_fail(__FILE__, __LINE__, "%s == %s: got %ju, expected %ju", \
                       #actual, #expected, a_, e_); \
    } while (0)

#define CHECK_STR_EQ(actual, expected) \
    do { \
        const char *a_ = (actual), *e_ = (expected); \
        if (!a_ || !e_ || strcmp(a_, e_) != 0) \
            check_fail(__FILE__, __LINE__, "%s == %s: got \"%s\", expected \"%s\"", \
                       #actual, #expected, a_ ? a_ : "(null)", e_ ? e_ : "(null)"); \
    } while (0)

/* actual contains the substring `part`. */
#define CHECK_STR_HAS(actual, part) \
    do { \
        const char *a_ = (actual), *p_ = (part); \
        if (!a_ || !strstr(a_, p_)) \
            check_fail(__FILE__, __LINE__, "%s contains \"%s\": got \"%s\"", \
                       #actual, p_, a_ ? a_ : "(null)"); \
    } while (0)

#define CHECK_MEM_EQ(actual, actual_len, expected, expected_len) \
    check_mem_eq(__FILE__, __LINE__, #actual, (const void *)(actual), (actual_len), \
                 (const void *)(expected), (expected_len))

static inline void check_mem_eq(const char *file, int line, const char *what,
                                const void *actual, size_t actual_len,
                                const void *expected, size_t expected_len)
{
    const unsigned char *a = actual, *e = expected;
    size_t n = actual_len < expected_len ? actual_len : expected_len;
    for (size_t i = 0; i < n; i++)
        if (a[i] != e[i])
            check_fail(file, line, "%s: byte %zu is 0x%02x, expected 0x%02x",
                       what, i, a[i], e[i]);
    if (actual_len != expected_len)
        check_fail(file, line, "%s: %zu bytes, expected %zu", what, actual_len, expected_len);
}

#endif
