/* Allow lists of shell globs (tls_allowed_dn_list,
 * sasl_allowed_username_list). */
#ifndef RV_AUTH_GLOB_H
#define RV_AUTH_GLOB_H

/* 1 if name matches one of the NULL-terminated fnmatch globs, else 0.  An
 * empty list matches nothing; NULL (no list configured) matches anything. */
int rv_glob_list_match(const char *const *globs, const char *name);

#endif
