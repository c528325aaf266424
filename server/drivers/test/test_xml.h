/* Domain XML for the test driver: a small strict XML reader, the domain
 * definition read from it, and the writers for domain and capabilities
 * XML.  libxml2 is not a dependency; the reader takes only what domain
 * XML needs (elements, attributes, text, CDATA, comments, processing
 * instructions, the five predefined entities and character references)
 * and rejects the rest.  Syntax errors read like libvirt's (which come
 * from libxml2): "NAME:LINE: message", the offending line and a pointer. */
#ifndef RV_TEST_XML_H
#define RV_TEST_XML_H

#include <stddef.h>

#include "common/error.h"

/* Hostile input cannot blow the stack or memory: nesting is bounded as
 * libxml2 bounds it by default, and so is the number of nodes. */
enum {
    RV_XML_MAX_DEPTH = 257,             /* open elements at once */
    RV_XML_MAX_NODES = 50000,           /* elements, attributes and text nodes */
    RV_XML_MAX_ATTRS = 256,             /* on one element (duplicates are looked for) */
};

typedef struct rv_xml_attr {
    char *name;
    char *value;                        /* entities and references resolved */
} rv_xml_attr;

typedef struct rv_xml_node rv_xml_node;
struct rv_xml_node {
    char *name;                         /* NULL for a text node */
    char *text;                         /* a text node's content */
    rv_xml_attr *attrs;
    size_t nattrs;
    rv_xml_node **kids;                 /* entries may be NULL once taken */
    size_t nkids, kids_cap;
};

/* Parse a NUL-terminated document.  docname names it in messages.  On
 * error returns NULL with err set to VIR_ERR_XML_DETAIL (from DOMAIN). */
rv_xml_node *rv_xml_parse(const char *doc, const char *docname, rv_err *err);
void rv_xml_free(rv_xml_node *node);

/* The attribute's value, or NULL. */
const char *rv_xml_attr_get(const rv_xml_node *el, const char *name);
/* The first child element called name, or NULL. */
rv_xml_node *rv_xml_child(const rv_xml_node *el, const char *name);
/* All text below el, concatenated (XPath's string()); malloc'd. */
char *rv_xml_string(const rv_xml_node *el);

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

/* A virtual network definition: its identity and bridge, and the parsed
 * document, written back in libvirt's element order and layout. */
typedef struct rv_test_net_def {
    char *name;
    unsigned char uuid[16];             /* generated when the XML has none */
    char *bridge;                       /* <bridge name>; NULL when absent */
    rv_xml_node *root;
} rv_test_net_def;

int rv_test_net_def_parse(const char *xml, rv_test_net_def **out, rv_err *err);
void rv_test_net_def_free(rv_test_net_def *def);
/* NULL only when out of memory. */
char *rv_test_net_def_format(const rv_test_net_def *def);

#endif
