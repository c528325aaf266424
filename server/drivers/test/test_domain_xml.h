/* The test driver's domain definition: what it keeps of domain XML (read
 * with the shared reader, server/drivers/conf/xml_read.h, checked as
 * libvirt checks it, in libvirt's order so the first error reported is
 * the one libvirtd reports), written back in libvirt's layout; and the
 * capabilities document. */
#ifndef RV_SERVER_DRIVERS_TEST_TEST_DOMAIN_XML_H
#define RV_SERVER_DRIVERS_TEST_TEST_DOMAIN_XML_H

#include <stddef.h>

#include "common/error.h"
#include "server/drivers/conf/xml_tree.h"

/* The largest domain XML accepted. */
#define RV_TEST_DOMAIN_XML_MAX (1024u * 1024)

/* Lifecycle actions (<on_poweroff> and friends). */
enum {
    RV_TEST_ACTION_DESTROY,
    RV_TEST_ACTION_RESTART,
    RV_TEST_ACTION_RENAME_RESTART,
    RV_TEST_ACTION_PRESERVE,
    RV_TEST_ACTION_COREDUMP_DESTROY,
    RV_TEST_ACTION_COREDUMP_RESTART,
};

enum { RV_TEST_MAX_BOOT = 4, RV_TEST_MAX_VCPUS = 65535 };

/* What the test driver keeps of a domain definition.  Elements it does not
 * model are dropped, as libvirt drops elements it does not know; <devices>
 * is kept as given and written back verbatim. */
typedef struct rv_test_def {
    char *virt_type;                    /* <domain type='...'> */
    char *name;
    unsigned char uuid[16];
    char *title;                        /* NULL when absent */
    char *description;                  /* NULL when absent */
    unsigned long long max_mem_kib;
    unsigned long long cur_mem_kib;
    unsigned int vcpus;                 /* maximum */
    unsigned int vcpus_current;         /* what runs; may be below vcpus */
    int placement_auto;                 /* <vcpu placement='auto'> */
    char *os_type;
    char *arch;
    char *machine;                      /* NULL when absent */
    int boot[RV_TEST_MAX_BOOT];         /* index into the boot device names */
    size_t nboot;
    int clock_localtime;                /* else utc */
    int on_poweroff, on_reboot, on_crash;   /* RV_TEST_ACTION_* */
    rv_xml_node *devices;               /* NULL when absent */
    struct test_tune *tune;             /* tuning set by the setters (test_tune.c); NULL: none */
} rv_test_def;

/* Read domain XML, applying libvirt's defaults and checks in libvirt's
 * order so the first error reported is the one libvirtd reports. */
int rv_test_def_parse(const char *xml, rv_test_def **out, rv_err *err);
void rv_test_def_free(rv_test_def *def);

/* libvirt's layout; id >= 0 adds the running domain's id attribute.
 * Returns NULL only when out of memory. */
char *rv_test_def_format(const rv_test_def *def, int id);

/* The test driver's fixed capabilities document (malloc'd copy). */
char *rv_test_capabilities(void);

#endif
