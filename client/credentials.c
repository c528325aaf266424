#include "client/credentials.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/authfile.h"
#include "client/connect.h"
#include "client/tty.h"
#include "common/log.h"

RV_LOG_CATEGORY("client.credentials");

struct rvc_creds {
    rv_sasl_credentials sasl;
    rvc_asker asker;
    int tty_refused;            /* the URI said no_tty, or rvc_never_prompt */
    char *host;                 /* for messages: the URI's, or "localhost" */
    char *authfile;             /* the file read, or NULL when there was none */
    char *username;             /* known before the exchange */
    char *password;
    char *asked_user;           /* a name given when asked (for messages) */
    char *problem;
};

static int param_on(const rvc_uri *u, const char *name)
{
    const char *v = rvc_uri_param_value(u, name);
    return v && strtol(v, NULL, 10) != 0;
}

static void wipe_free(char *secret)
{
    if (secret) {
        explicit_bzero(secret, strlen(secret));
        free(secret);
    }
}

void rvc_creds_free(rvc_creds *c)
{
    if (!c)
        return;
    free(c->host);
    free(c->authfile);
    free(c->username);
    wipe_free(c->password);
    free(c->asked_user);
    free(c->problem);
    free(c);
}

const rv_sasl_credentials *rvc_creds_sasl(rvc_creds *c)
{
    return &c->sasl;
}

const char *rvc_creds_problem(const rvc_creds *c)
{
    return c->problem;
}

/* Take the name and password the auth file has for this host.  The
 * password goes with the file's name: it is not used for another user. */
static int from_authfile(rvc_creds *c, const rvc_uri *uri, rv_err *err)
{
    if (rvc_authfile_locate(rvc_uri_param_value(uri, "authfile"), &c->authfile, err) < 0)
        return -1;
    if (!c->authfile)
        return 0;
    rvc_authfile *f = rvc_authfile_load(c->authfile, err);
    if (!f)
        return -1;
    const char *authname, *username, *password;
    int rc = -1;
    if (rvc_authfile_lookup(f, RVC_AUTH_SERVICE, uri->host, "authname", &authname, err) < 0 ||
        rvc_authfile_lookup(f, RVC_AUTH_SERVICE, uri->host, "username", &username, err) < 0 ||
        rvc_authfile_lookup(f, RVC_AUTH_SERVICE, uri->host, "password", &password, err) < 0)
        goto out;
    const char *file_user = authname ? authname : username;
    if (!c->username && file_user && !(c->username = strdup(file_user)))
        goto oom;
    if (password && (!file_user || strcmp(file_user, c->username ? c->username : "") == 0)) {
        if (!(c->password = strdup(password)))
            goto oom;
    } else if (password) {
        RV_DEBUG("%s: its password is for '%s', not '%s'", c->authfile, file_user, c->username);
    }
    RV_DEBUG("%s for %s: user %s, password %s", c->authfile, c->host,
             file_user ? file_user : "(none)", c->password ? "given" : "not given");
    rc = 0;
    goto out;
oom:
    rv_err_set(err, RV_FROM_REMOTE, RV_ERR_NO_MEMORY, "out of memory");
out:
    rvc_authfile_free(f);
    return rc;
}

/* Where the user could put what was missing; sets c->problem. */
static void explain_missing(rvc_creds *c, int echo, const char *why)
{
    const char *user = c->username ? c->username : c->asked_user;
    char file[600];
    if (c->authfile)
        snprintf(file, sizeof(file), "the auth file %s", c->authfile);
    else
        snprintf(file, sizeof(file), "an auth file ($%s or $XDG_CONFIG_HOME/%s)",
                 RVC_AUTHFILE_ENV, RVC_AUTHFILE_USER);
    /* Suggest the terminal only when nobody was asked for want of one. */
    const char *ask = "";
    if (!why && !c->asker.callback && c->asker.tty && !rvc_never_prompt)
        ask = c->tty_refused && rvc_tty_available() ? ", or drop no_tty=1 to be asked"
                                                    : " or run on a terminal";
    int n;
    free(c->problem);
    c->problem = NULL;
    if (echo)
        n = asprintf(&c->problem,
                     "no user name to log in to %s with: give one in the URI (user@%s), "
                     "set it in %s%s%s%s", c->host, c->host, file, ask, why ? ": " : "",
                     why ? why : "");
    else
        n = asprintf(&c->problem, "no password for user '%s' on %s: set it in %s%s%s%s",
                     user ? user : "?", c->host, file, ask, why ? ": " : "", why ? why : "");
    if (n < 0)
        c->problem = NULL;
}

/* rv_sasl_credentials.ask: the application's callback, else the
 * terminal, else nobody. */
static char *ask_someone(void *opaque, const char *prompt, int echo)
{
    rvc_creds *c = opaque;
    char *answer = NULL;
    if (c->asker.callback) {
        answer = c->asker.callback(echo ? RV_CRED_AUTHNAME : RV_CRED_PASSPHRASE, prompt,
                                   c->asker.opaque);
        if (!answer)
            explain_missing(c, echo, "the application gave none");
    } else if (c->asker.tty && !c->tty_refused && rvc_tty_available()) {
        char line[1024];
        snprintf(line, sizeof(line), "%s: ", prompt);
        rv_err err = { 0 };
        answer = rvc_tty_ask(line, echo, &err);
        if (!answer)
            explain_missing(c, echo, err.message ? err.message : "none was given");
        rv_err_clear(&err);
    } else {
        explain_missing(c, echo, NULL);
    }
    if (answer && echo) {
        free(c->asked_user);
        c->asked_user = strdup(answer);
    }
    return answer;
}

rvc_creds *rvc_creds_new(const rvc_uri *uri, const rvc_asker *asker, rv_err *err)
{
    rvc_creds *c = calloc(1, sizeof(*c));
    if (!c || !(c->host = strdup(uri->host && *uri->host ? uri->host : "localhost")) ||
        (uri->user && *uri->user && !(c->username = strdup(uri->user)))) {
        rvc_creds_free(c);
        rv_err_set(err, RV_FROM_REMOTE, RV_ERR_NO_MEMORY, "out of memory");
        return NULL;
    }
    c->asker = *asker;
    c->tty_refused = rvc_never_prompt || param_on(uri, "no_tty");
    if (from_authfile(c, uri, err) < 0) {
        rvc_creds_free(c);
        return NULL;
    }
    c->sasl.username = c->username;
    c->sasl.password = c->password;
    c->sasl.ask = ask_someone;
    c->sasl.opaque = c;
    return c;
}
