/* SIGHUP: the daemon keeps serving and keeps its clients.  Log files are
 * reopened by name (after logrotate's rename); the logging keys of
 * remvirtd.conf that changed since they were applied are applied, each
 * change logged (a setting changed through virt-admin stays unless the
 * file changes that key); the TLS files are re-read for new clients.  A
 * file that no longer parses changes nothing. */
#include "server/reload.h"

#include <stdlib.h>
#include <string.h>

#include "common/log.h"

RV_LOG_CATEGORY("server.reload");

static int same_text(const char *a, const char *b)
{
    return (a == NULL) == (b == NULL) && (!a || strcmp(a, b) == 0);
}

/* One string key: applied when the file sets it to something new. */
static void reload_key(const char *key, char **applied, char **fresh,
                       int (*apply)(const char *spec, rv_err *err))
{
    if (!*fresh || same_text(*applied, *fresh))
        return;
    rv_err err = { 0 };
    if (apply(*fresh, &err) < 0) {
        RV_ERROR("SIGHUP: %s not changed: %s", key, err.message);
        rv_err_clear(&err);
        return;
    }
    RV_INFO("SIGHUP: %s changed from \"%s\" to \"%s\"", key, *applied ? *applied : "",
            *fresh);
    free(*applied);
    *applied = *fresh;
    *fresh = NULL;
}

static void reload_logging(rvs_config *applied, rvs_config *fresh)
{
    if (fresh->log_level && fresh->log_level != applied->log_level) {
        rv_err err = { 0 };
        if (rv_log_set_level(fresh->log_level, &err) == 0) {
            RV_INFO("SIGHUP: log_level changed from %d to %d", applied->log_level,
                    fresh->log_level);
            applied->log_level = fresh->log_level;
        }
        rv_err_clear(&err);
    }
    reload_key("log_filters", &applied->log_filters, &fresh->log_filters, rv_log_set_filters);
    reload_key("log_outputs", &applied->log_outputs, &fresh->log_outputs, rv_log_set_outputs);
}

void rvs_reload(rvs_server *srv, void *opaque)
{
    rvs_reload_ctx *ctx = opaque;
    rv_err err = { 0 };
    if (rv_log_reopen(&err) < 0) {
        RV_ERROR("SIGHUP: %s", err.message);
        rv_err_clear(&err);
    }
    if (ctx->config_path) {
        rvs_config fresh;
        rvs_config_init(&fresh);
        if (rvs_config_load(&fresh, ctx->config_path, &err) < 0) {
            RV_ERROR("SIGHUP: %s; the logging settings stay as they are", err.message);
            rv_err_clear(&err);
        } else {
            reload_logging(ctx->applied, &fresh);
        }
        rvs_config_free(&fresh);
    }
    if (rvs_server_has_tls(srv)) {
        if (rvs_server_update_tls(srv, &err) < 0) {
            RV_ERROR("SIGHUP: the TLS files stay as they were: %s", err.message);
            rv_err_clear(&err);
        }
    }
    RV_INFO("SIGHUP: done; %d clients still connected", rvs_server_nclients(srv));
}
