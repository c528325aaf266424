/* One error reporter for both sides: a code, a domain and a message,
 * mapped one-to-one to the wire's rv_error.  Codes and domains are
 * libvirt's public virErrorNumber / virErrorDomain values. */
#ifndef RV_COMMON_ERROR_H
#define RV_COMMON_ERROR_H

#include <stdarg.h>

/* The codes RV_ERR_* (virErrorNumber), domains RV_FROM_* (virErrorDomain)
 * and levels RV_ERR_LEVEL_*, generated from protocol/rv_values.x as the
 * public RV_ERROR_* are; the header also has the server's names for list
 * flags and lifecycle events. */
#include "common/rv_values.gen.h"

typedef struct rv_err {
    int code;           /* RV_ERR_OK when no error is set */
    int domain;
    int level;
    char *message;      /* heap, owned */
    char *str1;         /* optional detail strings, owned (may be NULL) */
} rv_err;

/* Set (replacing any previous error).  Never fails: on allocation failure
 * the message is left NULL and the code kept. */
void rv_err_set(rv_err *err, int domain, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void rv_err_setv(rv_err *err, int domain, int code, const char *fmt, va_list ap)
    __attribute__((format(printf, 4, 0)));
/* rv_err_set, returning -1: for "return rv_err_fail(...)" in the drivers. */
int rv_err_fail(rv_err *err, int domain, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Set from errno: "<what>: <strerror>" with RV_ERR_SYSTEM_ERROR. */
void rv_err_set_errno(rv_err *err, int domain, int errnum, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void rv_err_clear(rv_err *err);
void rv_err_move(rv_err *dst, rv_err *src);     /* dst takes src's; src cleared */
static inline int rv_err_is_set(const rv_err *err) { return err->code != RV_ERR_OK; }
/* fn(arg, &e) with e a new error (domain, code, printf-style), cleared
 * after: for the "fail this with that message" helpers. */
#define RV_ERR_CALL(fn, arg, domain, code, ...)                               \
    do {                                                                      \
        rv_err rv_err_call_ = { 0 };                                          \
        rv_err_set(&rv_err_call_, (domain), (code), __VA_ARGS__);             \
        fn((arg), &rv_err_call_);                                             \
        rv_err_clear(&rv_err_call_);                                          \
    } while (0)

#endif
