/* The thread's last error (see last_error.h), and the library's
 * once-per-process setup, which the error's message key needs. */
#include "client/last_error.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "client/remvirt.h"
#include "common/log.h"

RV_LOG_CATEGORY("client.error");

static pthread_once_t lib_once = PTHREAD_ONCE_INIT;
static pthread_key_t message_key;   /* frees a thread's message when it exits */
static _Thread_local rv_error_info last_error;
static _Thread_local char *last_message;

static void lib_init(void)
{
    pthread_key_create(&message_key, free);
    /* A library has no main loop to flush a batch: write as we go. */
    rv_log_set_autoflush(1);
    rv_err err = { 0 };
    const char *filters = getenv("REMVIRT_LOG_FILTERS");
    const char *outputs = getenv("REMVIRT_LOG_OUTPUTS");
    if ((filters && rv_log_set_filters(filters, &err) < 0) ||
        (outputs && rv_log_set_outputs(outputs, &err) < 0))
        RV_WARN("ignoring the log settings from the environment: %s", err.message);
    rv_err_clear(&err);
}

void rvc_init_once(void)
{
    pthread_once(&lib_once, lib_init);
}

void rv_reset_last_error(void)
{
    if (!last_error.code)
        return;
    free(last_message);
    last_message = NULL;
    pthread_setspecific(message_key, NULL);
    memset(&last_error, 0, sizeof(last_error));
}

const rv_error_info *rv_last_error(void)
{
    return last_error.code ? &last_error : NULL;
}

void rvc_enter(void)
{
    if (__builtin_expect(last_error.code != 0, 0))
        rv_reset_last_error();
}

void rvc_set_last_error(rv_err *err)
{
    rvc_init_once();
    rv_reset_last_error();
    last_error.code = err->code ? err->code : RV_ERR_INTERNAL_ERROR;
    last_error.domain = err->domain;
    last_error.level = err->level ? err->level : RV_ERR_LEVEL_ERROR;
    last_message = err->message;
    err->message = NULL;
    last_error.message = last_message ? last_message : "out of memory describing an error";
    pthread_setspecific(message_key, last_message);
    rv_err_clear(err);
}

int rvc_fail(rv_err *err)
{
    rvc_set_last_error(err);
    return -1;
}

void *rvc_fail_null(rv_err *err)
{
    rvc_set_last_error(err);
    return NULL;
}

int rvc_report(int domain, int code, const char *fmt, ...)
{
    rv_err err = { 0 };
    va_list ap;
    va_start(ap, fmt);
    rv_err_setv(&err, domain, code, fmt, ap);
    va_end(ap);
    return rvc_fail(&err);
}

void *rvc_no_memory_null(void)
{
    rvc_report(RV_FROM_NONE, RV_ERR_NO_MEMORY, "out of memory");
    return NULL;
}
