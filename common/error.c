#include "common/error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void rv_err_clear(rv_err *err)
{
    free(err->message);
    free(err->str1);
    memset(err, 0, sizeof(*err));
}

void rv_err_setv(rv_err *err, int domain, int code, const char *fmt, va_list ap)
{
    rv_err_clear(err);
    err->code = code;
    err->domain = domain;
    err->level = RV_ERR_LEVEL_ERROR;
    if (vasprintf(&err->message, fmt, ap) < 0)
        err->message = NULL;
}

void rv_err_set(rv_err *err, int domain, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    rv_err_setv(err, domain, code, fmt, ap);
    va_end(ap);
}

int rv_err_fail(rv_err *err, int domain, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    rv_err_setv(err, domain, code, fmt, ap);
    va_end(ap);
    return -1;
}

void rv_err_set_errno(rv_err *err, int domain, int errnum, const char *fmt, ...)
{
    char *what = NULL;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&what, fmt, ap) < 0)
        what = NULL;
    va_end(ap);
    rv_err_set(err, domain, RV_ERR_SYSTEM_ERROR, "%s: %s", what ? what : "system error",
               strerror(errnum));
    free(what);
}

void rv_err_move(rv_err *dst, rv_err *src)
{
    rv_err_clear(dst);
    *dst = *src;
    memset(src, 0, sizeof(*src));
}
