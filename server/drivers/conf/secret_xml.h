/* A secret's definition, as libvirt's secret XML has it: read with the
 * checks and errors of libvirt's parser, written as libvirtd writes it. */
#ifndef RV_SERVER_DRIVERS_CONF_SECRET_XML_H
#define RV_SERVER_DRIVERS_CONF_SECRET_XML_H

#include <stdbool.h>

#include "common/error.h"

/* The usage types (virSecretUsageType). */
enum {
    RV_SECRET_USAGE_NONE, RV_SECRET_USAGE_VOLUME, RV_SECRET_USAGE_CEPH, RV_SECRET_USAGE_ISCSI,
    RV_SECRET_USAGE_TLS, RV_SECRET_USAGE_VTPM, RV_SECRET_USAGE_COUNT,
};

/* The longest secret XML read (libvirt's are tiny). */
#define RV_SECRET_XML_MAX (64 * 1024)

typedef struct rv_secret_def {
    unsigned char uuid[16];
    bool ephemeral, is_private;
    int usage_type;             /* RV_SECRET_USAGE_* */
    char *usage_id;             /* "" for none */
    char *description;          /* NULL: none */
} rv_secret_def;

/* The definition in xml (a UUID generated when it has none); -1 with
 * libvirt's error, def cleared. */
int rv_secret_def_parse(const char *xml, rv_secret_def *def, rv_err *err);
/* def's XML, malloc'd; NULL when memory is short. */
char *rv_secret_def_format(const rv_secret_def *def);
void rv_secret_def_clear(rv_secret_def *def);
/* "volume", "ceph", ...: a usage type's word. */
const char *rv_secret_usage_word(int type);

#endif
