/* One error reporter for both sides: a code, a domain and a message,
 * mapped one-to-one to the wire's rv_error.  Codes and domains are
 * libvirt's public virErrorNumber / virErrorDomain values. */
#ifndef RV_COMMON_ERROR_H
#define RV_COMMON_ERROR_H

#include <stdarg.h>

/* virErrorNumber values used by remvirt (libvirt-dev's virterror.h). */
enum {
    RV_ERR_OK = 0,
    RV_ERR_INTERNAL_ERROR = 1,
    RV_ERR_NO_MEMORY = 2,
    RV_ERR_NO_SUPPORT = 3,
    RV_ERR_NO_CONNECT = 5,
    RV_ERR_INVALID_CONN = 6,
    RV_ERR_INVALID_DOMAIN = 7,
    RV_ERR_INVALID_ARG = 8,
    RV_ERR_OPERATION_FAILED = 9,
    RV_ERR_NO_NAME = 21,
    RV_ERR_XML_ERROR = 27,
    RV_ERR_DOM_EXIST = 28,
    RV_ERR_OPERATION_DENIED = 29,
    RV_ERR_CONF_SYNTAX = 33,
    RV_ERR_XML_DETAIL = 35,
    RV_ERR_SYSTEM_ERROR = 38,
    RV_ERR_RPC = 39,
    RV_ERR_NO_DOMAIN = 42,
    RV_ERR_AUTH_FAILED = 45,
    RV_ERR_NO_SECURITY_MODEL = 54,
    RV_ERR_OPERATION_INVALID = 55,
    RV_ERR_CONFIG_UNSUPPORTED = 67,
    RV_ERR_ARGUMENT_UNSUPPORTED = 74,
    RV_ERR_OVERFLOW = 82,
    RV_ERR_OPERATION_UNSUPPORTED = 84,
    RV_ERR_SSH = 85,
};

/* virErrorDomain values used by remvirt. */
enum {
    RV_FROM_NONE = 0,
    RV_FROM_XML = 5,
    RV_FROM_DOM = 6,
    RV_FROM_RPC = 7,
    RV_FROM_CONF = 9,
    RV_FROM_TEST = 12,
    RV_FROM_REMOTE = 13,
    RV_FROM_DOMAIN = 20,
    RV_FROM_SECURITY = 24,
    RV_FROM_URI = 45,
    RV_FROM_SSH = 50,
};

enum { RV_ERR_LEVEL_WARNING = 1, RV_ERR_LEVEL_ERROR = 2 };

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
/* Set from errno: "<what>: <strerror>" with RV_ERR_SYSTEM_ERROR. */
void rv_err_set_errno(rv_err *err, int domain, int errnum, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void rv_err_clear(rv_err *err);
void rv_err_move(rv_err *dst, rv_err *src);     /* dst takes src's; src cleared */
static inline int rv_err_is_set(const rv_err *err) { return err->code != RV_ERR_OK; }

#endif
