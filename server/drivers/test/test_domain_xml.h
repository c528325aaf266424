/* The test driver's domain definition: the common part read and written
 * by conf/domain_xml.c, its tuning and <devices>, checked as libvirt
 * checks them, in libvirt's order so the first error reported is the one
 * libvirtd reports, written back in libvirt's layout; and the
 * capabilities document. */
#ifndef RV_SERVER_DRIVERS_TEST_TEST_DOMAIN_XML_H
#define RV_SERVER_DRIVERS_TEST_TEST_DOMAIN_XML_H

#include <stddef.h>

#include "common/error.h"
#include "server/drivers/conf/domain_def.h"
#include "server/drivers/conf/xml_tree.h"

/* The largest domain XML accepted. */
#define RV_TEST_DOMAIN_XML_MAX (1024u * 1024)

enum { RV_TEST_MAX_VCPUS = 65535 };

/* What the test driver keeps of a domain definition: the part both
 * drivers keep (conf/domain_def.h), its <devices> as given (written back
 * verbatim), and the tuning its setters keep.  Elements it does not model
 * are dropped, as libvirt drops elements it does not know. */
typedef struct rv_test_def {
    RV_DOMAIN_BASE;
    rv_xml_node *devices;               /* NULL when absent */
    struct rv_domain_tune *tune;        /* <memtune>, <blkiotune>, ... (conf/domain_tune.h); NULL: none */
    struct test_tune *limits;           /* bandwidth and disk I/O limits (test_tune.c); NULL: none */
} rv_test_def;

/* Read domain XML, applying libvirt's defaults and checks in libvirt's
 * order so the first error reported is the one libvirtd reports. */
int rv_test_def_parse(const char *xml, rv_test_def **out, rv_err *err);
void rv_test_def_free(rv_test_def *def);

/* libvirt's layout; id >= 0 adds the running domain's id attribute.
 * Returns NULL only when out of memory. */
char *rv_test_def_format(const rv_test_def *def, int id);
/* The length of what rv_test_def_format writes, or -1 when out of memory. */
long long rv_test_def_format_len(const rv_test_def *def, int id);

/* The test driver's fixed capabilities document (malloc'd copy). */
char *rv_test_capabilities(void);

#endif
