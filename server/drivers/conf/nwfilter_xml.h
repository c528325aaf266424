/* A network filter's definition: read with the checks and errors of
 * libvirt's parser and written as libvirtd writes it, in one pass (the
 * rules and filter references are kept as they are written, not as a
 * model of their own: nothing applies them). */
#ifndef RV_SERVER_DRIVERS_CONF_NWFILTER_XML_H
#define RV_SERVER_DRIVERS_CONF_NWFILTER_XML_H

#include "common/error.h"

/* The longest filter XML read. */
#define RV_NWFILTER_XML_MAX (1 << 20)

/* Parse a filter's XML and format it as libvirtd does (*xml, malloc'd),
 * with its name (*name, malloc'd) and uuid (generated when it has none);
 * -1 with libvirt's error and nothing to free. */
int rv_nwfilter_parse(const char *text, char **name, unsigned char uuid[16], char **xml,
                      rv_err *err);

#endif
