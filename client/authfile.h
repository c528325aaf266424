/* The client's auth file, in libvirt's auth.conf format, so that one file
 * serves virsh (LIBVIRT_AUTH_FILE) and rvsh (REMVIRT_AUTH_FILE):
 *
 *   [credentials-NAME]        authname=, username=, password=, realm=
 *   [auth-SERVICE-HOST]       credentials=NAME
 *   [auth-SERVICE-default]    credentials=NAME   (any host without its own group)
 *
 * The syntax is GLib's key files, which libvirt reads it with: blank lines
 * and lines starting with '#' are comments, "[group]" starts a group,
 * "key = value" sets a key (spaces around '=' and before the value are
 * dropped; \s \t \n \r \\ escape a value's characters), a group named
 * twice is one group and a key set twice keeps its last value.  Errors
 * name the file and line. */
#ifndef RV_CLIENT_AUTHFILE_H
#define RV_CLIENT_AUTHFILE_H

#include <stddef.h>

#include "common/error.h"

#define RVC_AUTHFILE_ENV "REMVIRT_AUTH_FILE"
#define RVC_AUTHFILE_SYSTEM "/etc/remvirt/auth.conf"
/* Under $XDG_CONFIG_HOME (else $HOME/.config). */
#define RVC_AUTHFILE_USER "remvirt/auth.conf"
/* Bigger than any sane credentials file; reading stops past it. */
#define RVC_AUTHFILE_MAX (1024 * 1024)

typedef struct rvc_authfile rvc_authfile;

/* Which file to read, in this order: $REMVIRT_AUTH_FILE; the URI's
 * authfile= (uri_param, may be NULL); $XDG_CONFIG_HOME/remvirt/auth.conf;
 * /etc/remvirt/auth.conf.  A file named by the first two is taken whether
 * or not it exists (reading it then says what is wrong); a default one
 * only if it exists.  0 with *path malloc'd, or NULL when there is none;
 * -1 with err when out of memory. */
int rvc_authfile_locate(const char *uri_param, char **path, rv_err *err);

/* Read and parse path: any file but a directory (/dev/null reads as an
 * empty one).  RV_FROM_CONF errors: RV_ERR_SYSTEM_ERROR when it cannot be
 * read, RV_ERR_CONF_SYNTAX when it is a directory, larger than
 * RVC_AUTHFILE_MAX, or has a malformed line ("path:line: ..."). */
rvc_authfile *rvc_authfile_load(const char *path, rv_err *err);
/* Parse text of len bytes; name is what errors call it. */
rvc_authfile *rvc_authfile_parse(const char *name, const char *text, size_t len, rv_err *err);
void rvc_authfile_free(rvc_authfile *f);

/* The credential `key` ("authname", "password", ...) for service
 * ("libvirt") on host (NULL means "localhost"): the credentials named by
 * [auth-SERVICE-HOST], else by [auth-SERVICE-default].  0 with *value
 * pointing into f, or NULL when no group or key applies; -1 with err when
 * the auth group lacks credentials= or names a set that is not there. */
int rvc_authfile_lookup(const rvc_authfile *f, const char *service, const char *host,
                        const char *key, const char **value, rv_err *err);

/* The file's name, as given to load or parse. */
const char *rvc_authfile_name(const rvc_authfile *f);

#endif
