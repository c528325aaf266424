/* The test driver through its vtable, with the values, states, orderings
 * and error codes/texts libvirtd 9.0's test:///default gives (observed
 * with virsh and python3-libvirt against it); the XML reader's syntax
 * errors as libvirt words them; bounds on hostile XML. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"
#include "server/drivers/test/test_driver.h"
#include "server/drivers/test/test_domain_xml.h"
#include "tests/unit/check.h"

/* The test driver's native interface; the wire slots are covered end to end. */
static const test_native *drv = &rv_test_native;
static rv_driver_conn *conn;
static rv_err err;

#define TEST_UUID "6695eb01-f6a4-8304-79aa-97f2502e193f"

/* ---------------------------------------------------------------- helpers */

static char *read_data_file(const char *name)
{
    const char *srcdir = getenv("srcdir");
    char path[4096];
    snprintf(path, sizeof(path), "%s/tests/data/test-driver/%s", srcdir ? srcdir : ".", name);
    FILE *f = fopen(path, "rb");
    if (!f)
        check_fail(__FILE__, __LINE__, "cannot open %s (set srcdir to the source tree)", path);
    static char buf[65536];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *copy = strdup(buf);
    CHECK(copy);
    return copy;
}

/* Start again from the driver's initial state. */
static void reset(void)
{
    if (conn)
        drv->close(conn);
    drv->cleanup();
    CHECK_INT_EQ(drv->open("test:///default", 0, &conn, &err), 0);
}

#define CHECK_OK(call) \
    do { \
        if ((call) < 0) \
            check_fail(__FILE__, __LINE__, "%s failed: %d %d %s", #call, err.code, \
                       err.domain, err.message ? err.message : "(null)"); \
    } while (0)

/* The call failed with exactly this libvirt error. */
#define CHECK_ERR(call, code_, domain_, message_) \
    do { \
        if ((call) >= 0) \
            check_fail(__FILE__, __LINE__, "%s succeeded", #call); \
        CHECK_INT_EQ(err.code, code_); \
        CHECK_INT_EQ(err.domain, domain_); \
        CHECK_STR_EQ(err.message, message_); \
        rv_err_clear(&err); \
    } while (0)

static rv_dom_ref lookup(const char *name)
{
    rv_dom_ref ref = { .id = -1 };
    CHECK_OK(drv->lookup_by_name(conn, name, &ref, &err));
    return ref;
}

static void check_state(const rv_dom_ref *ref, int state, int reason)
{
    int s = -1, r = -1;
    CHECK_OK(drv->get_state(conn, ref, 0, &s, &r, &err));
    CHECK_INT_EQ(s, state);
    CHECK_INT_EQ(r, reason);
}

static int current_id(const char *name)
{
    rv_dom_ref ref = lookup(name);
    int id = ref.id;
    rv_dom_ref_clear(&ref);
    return id;
}

static char *dumpxml(const rv_dom_ref *ref, unsigned int flags)
{
    char *xml = NULL;
    CHECK_OK(drv->get_xml_desc(conn, ref, flags, &xml, &err));
    return xml;
}

static char *simple_xml(const char *name, const char *uuid, const char *extra)
{
    char *xml;
    CHECK(asprintf(&xml, "<domain type='test'><name>%s</name>%s%s%s<memory>1024</memory>"
                   "<os><type>hvm</type></os>%s</domain>", name, uuid ? "<uuid>" : "",
                   uuid ? uuid : "", uuid ? "</uuid>" : "", extra ? extra : "") > 0);
    return xml;
}

static rv_dom_ref define(const char *name, const char *uuid, const char *extra)
{
    char *xml = simple_xml(name, uuid, extra);
    rv_dom_ref ref = { .id = -1 };
    CHECK_OK(drv->define_xml(conn, xml, 0, &ref, &err));
    free(xml);
    return ref;
}

static void start(const rv_dom_ref *ref)
{
    rv_dom_ref out = { .id = -1 };
    CHECK_OK(drv->create(conn, ref, 0, &out, &err));
    rv_dom_ref_clear(&out);
}

/* Replace the part between the first "<uuid>" and "</uuid>" by U. */
static void blank_uuid(char *xml)
{
    char *u = strstr(xml, "<uuid>");
    CHECK(u && strlen(u) > 42);
    memset(u + 6, 'U', 36);
}

/* ---------------------------------------------------------------- host and the start domain */

static void test_host(void)
{
    char *s = NULL, *doi = NULL;
    unsigned long long ver = 0;
    rv_driver_node_info info;

    CHECK_OK(drv->get_type(conn, &s, &err));
    CHECK_STR_EQ(s, "TEST");
    free(s);
    CHECK_OK(drv->get_version(conn, &ver, &err));
    CHECK_UINT_EQ(ver, 2);

    char host[256] = "";
    CHECK(gethostname(host, sizeof(host)) == 0);
    CHECK_OK(drv->get_hostname(conn, &s, &err));
    CHECK_STR_EQ(s, host);
    free(s);

    CHECK_OK(drv->node_get_info(conn, &info, &err));
    CHECK_STR_EQ(info.model, "i686");
    CHECK_UINT_EQ(info.memory_kib, 3145728);
    CHECK_INT_EQ(info.cpus, 16);
    CHECK_INT_EQ(info.mhz, 1400);
    CHECK_INT_EQ(info.nodes, 2);
    CHECK_INT_EQ(info.sockets, 2);
    CHECK_INT_EQ(info.cores, 2);
    CHECK_INT_EQ(info.threads, 2);

    CHECK_OK(drv->node_get_security_model(conn, &s, &doi, &err));
    CHECK_STR_EQ(s, "testSecurity");
    CHECK_STR_EQ(doi, "");
    free(s);
    free(doi);

    char *expected = read_data_file("capabilities.xml");
    CHECK_OK(drv->get_capabilities(conn, &s, &err));
    CHECK_STR_EQ(s, expected);
    free(s);
    free(expected);
}

static void test_start_domain(void)
{
    rv_dom_ref ref = lookup("test");
    char uuid[RV_UUID_STRING_LEN], *s = NULL;
    rv_dom_info info;
    int enforcing = -1;

    rv_uuid_format(ref.uuid, uuid);
    CHECK_STR_EQ(uuid, TEST_UUID);
    CHECK_INT_EQ(ref.id, 1);

    struct timespec before, after;
    clock_gettime(CLOCK_REALTIME, &before);
    CHECK_OK(drv->get_info(conn, &ref, &info, &err));
    clock_gettime(CLOCK_REALTIME, &after);
    CHECK_INT_EQ(info.state, RV_DOMAIN_RUNNING);
    CHECK_UINT_EQ(info.max_mem_kib, 8388608);
    CHECK_UINT_EQ(info.memory_kib, 2097152);
    CHECK_UINT_EQ(info.nr_vcpu, 2);
    /* the wall clock in ns at microsecond grain, like libvirt's */
    CHECK(info.cpu_time_ns % 1000 == 0);
    CHECK(info.cpu_time_ns / 1000000000ULL >= (unsigned long long)before.tv_sec);
    CHECK(info.cpu_time_ns / 1000000000ULL <= (unsigned long long)after.tv_sec);

    check_state(&ref, RV_DOMAIN_RUNNING, 0);        /* "running (unknown)" */
    CHECK_OK(drv->get_os_type(conn, &ref, &s, &err));
    CHECK_STR_EQ(s, "linux");
    free(s);
    int autostart = -1;
    CHECK_OK(drv->get_autostart(conn, &ref, &autostart, &err));
    CHECK_INT_EQ(autostart, 0);
    CHECK_INT_EQ(drv->is_active(conn, &ref, &err), 1);
    CHECK_INT_EQ(drv->is_persistent(conn, &ref, &err), 1);
    CHECK_INT_EQ(drv->has_managed_save_image(conn, &ref, 0, &err), 0);
    CHECK_OK(drv->managed_save_remove(conn, &ref, 0, &err));
    CHECK_INT_EQ(drv->snapshot_num(conn, &ref, 0x7ff, &err), 0);
    CHECK_OK(drv->get_security_label(conn, &ref, &s, &enforcing, &err));
    CHECK_STR_EQ(s, "libvirt-test");
    CHECK_INT_EQ(enforcing, 1);
    free(s);
    char *sentinel = NULL, **msgs = &sentinel;
    CHECK_INT_EQ(drv->get_messages(conn, &ref, 0, &msgs, &err), 0);
    CHECK(msgs == NULL);

    char *expected = read_data_file("domain-test.xml");
    s = dumpxml(&ref, 0);
    CHECK_STR_EQ(s, expected);
    free(s);
    /* inactive form: the same without the id attribute */
    s = dumpxml(&ref, 2);
    CHECK_STR_EQ(s + strlen("<domain type='test'>"),
                 expected + strlen("<domain type='test' id='1'>"));
    free(s);
    free(expected);

    rv_dom_ref by_id = { .id = -1 }, by_uuid = { .id = -1 };
    CHECK_OK(drv->lookup_by_id(conn, 1, &by_id, &err));
    CHECK_STR_EQ(by_id.name, "test");
    CHECK_OK(drv->lookup_by_uuid(conn, ref.uuid, &by_uuid, &err));
    CHECK_STR_EQ(by_uuid.name, "test");
    CHECK_INT_EQ(by_uuid.id, 1);
    rv_dom_ref_clear(&by_id);
    rv_dom_ref_clear(&by_uuid);
    rv_dom_ref_clear(&ref);
}

static void test_lookup_errors(void)
{
    rv_dom_ref ref = { .id = -1 };
    unsigned char uuid[16] = { 0x11 };
    CHECK_ERR(drv->lookup_by_name(conn, "nope", &ref, &err), 42, 12, "Domain not found");
    CHECK_ERR(drv->lookup_by_id(conn, 7, &ref, &err), 42, 12, "Domain not found");
    CHECK_ERR(drv->lookup_by_id(conn, 0, &ref, &err), 42, 12, "Domain not found");
    CHECK_ERR(drv->lookup_by_uuid(conn, uuid, &ref, &err), 42, 12, "Domain not found");
    CHECK_ERR(drv->lookup_by_id(conn, -1, &ref, &err), 8, 20,
              "id in virDomainLookupByID must be zero or greater");
    CHECK(ref.name == NULL);
}

/* ---------------------------------------------------------------- lifecycle */

static const char minimal_inactive_xml[] =
    "<domain type='test'>\n"
    "  <name>a1</name>\n"
    "  <uuid>UUUUUUUUUUUUUUUUUUUUUUUUUUUUUUUUUUUU</uuid>\n"
    "  <memory unit='KiB'>1024</memory>\n"
    "  <currentMemory unit='KiB'>1024</currentMemory>\n"
    "  <vcpu placement='static'>1</vcpu>\n"
    "  <os>\n"
    "    <type arch='i686'>hvm</type>\n"
    "    <boot dev='hd'/>\n"
    "  </os>\n"
    "  <clock offset='utc'/>\n"
    "  <on_poweroff>destroy</on_poweroff>\n"
    "  <on_reboot>restart</on_reboot>\n"
    "  <on_crash>destroy</on_crash>\n"
    "  <devices>\n"
    "  </devices>\n"
    "</domain>\n";

static void test_lifecycle(void)
{
    rv_dom_ref a1 = define("a1", NULL, NULL), gone = { .id = -1 };
    char *xml, *label = NULL;
    int enforcing = -1;
    rv_dom_info info;

    CHECK_INT_EQ(a1.id, -1);
    check_state(&a1, RV_DOMAIN_SHUTOFF, 0);
    xml = dumpxml(&a1, 0);
    blank_uuid(xml);
    CHECK_STR_EQ(xml, minimal_inactive_xml);
    free(xml);
    CHECK_OK(drv->get_info(conn, &a1, &info, &err));
    CHECK_INT_EQ(info.state, RV_DOMAIN_SHUTOFF);
    CHECK_UINT_EQ(info.max_mem_kib, 1024);
    CHECK_UINT_EQ(info.nr_vcpu, 1);
    CHECK(info.cpu_time_ns > 0);        /* libvirt reports the clock here too */
    CHECK_OK(drv->get_security_label(conn, &a1, &label, &enforcing, &err));
    CHECK_STR_EQ(label, "");
    CHECK_INT_EQ(enforcing, 0);
    free(label);

    /* errors of an inactive domain */
    CHECK_ERR(drv->suspend(conn, &a1, &err), 1, 12, "internal error: domain 'a1' not running");
    CHECK_ERR(drv->resume(conn, &a1, &err), 1, 12, "internal error: domain 'a1' not paused");
    CHECK_ERR(drv->shutdown(conn, &a1, 0, &err), 1, 12, "internal error: domain 'a1' not running");
    CHECK_ERR(drv->destroy(conn, &a1, 0, &err), 55, 20,
              "Requested operation is not valid: domain is not running");
    CHECK_ERR(drv->reboot(conn, &a1, 0, &err), 55, 20,
              "Requested operation is not valid: domain is not running");

    /* start: ids follow on from the start domain's 1 */
    rv_dom_ref out = { .id = -1 };
    CHECK_OK(drv->create(conn, &a1, 0, &out, &err));
    CHECK_INT_EQ(out.id, 2);
    rv_dom_ref_clear(&out);
    check_state(&a1, RV_DOMAIN_RUNNING, 1);             /* booted */
    xml = dumpxml(&a1, 0);
    CHECK(strncmp(xml, "<domain type='test' id='2'>\n", 28) == 0);
    free(xml);
    CHECK_ERR(drv->create(conn, &a1, 0, &out, &err), 1, 12,
              "internal error: Domain 'a1' is already running");

    CHECK_OK(drv->suspend(conn, &a1, &err));
    check_state(&a1, RV_DOMAIN_PAUSED, 1);              /* user */
    CHECK_ERR(drv->suspend(conn, &a1, &err), 1, 12, "internal error: domain 'a1' not running");
    CHECK_INT_EQ(drv->is_active(conn, &a1, &err), 1);
    CHECK_OK(drv->resume(conn, &a1, &err));
    check_state(&a1, RV_DOMAIN_RUNNING, 5);             /* unpaused */
    CHECK_ERR(drv->resume(conn, &a1, &err), 1, 12, "internal error: domain 'a1' not paused");
    CHECK_OK(drv->reboot(conn, &a1, 0, &err));
    check_state(&a1, RV_DOMAIN_RUNNING, 1);
    CHECK_INT_EQ(current_id("a1"), 2);                  /* a reboot keeps the id */
    CHECK_OK(drv->shutdown(conn, &a1, 0, &err));
    check_state(&a1, RV_DOMAIN_SHUTOFF, 1);             /* shutdown */
    CHECK_INT_EQ(current_id("a1"), -1);

    start(&a1);
    CHECK_INT_EQ(current_id("a1"), 3);
    CHECK_OK(drv->destroy(conn, &a1, 0, &err));
    check_state(&a1, RV_DOMAIN_SHUTOFF, 2);             /* destroyed */

    /* undefining a running domain makes it transient; it goes at the stop */
    start(&a1);
    CHECK_INT_EQ(current_id("a1"), 4);
    CHECK_OK(drv->undefine(conn, &a1, 0, &err));
    CHECK_INT_EQ(drv->is_persistent(conn, &a1, &err), 0);
    CHECK_OK(drv->undefine(conn, &a1, 0, &err));       /* libvirt allows it again */
    CHECK_OK(drv->destroy(conn, &a1, 0, &err));
    CHECK_ERR(drv->lookup_by_name(conn, "a1", &gone, &err), 42, 12, "Domain not found");

    char expect[200], uuid[RV_UUID_STRING_LEN];
    rv_uuid_format(a1.uuid, uuid);
    snprintf(expect, sizeof(expect),
             "Domain not found: no domain with matching uuid '%s' (a1)", uuid);
    int s, r;
    CHECK_ERR(drv->get_state(conn, &a1, 0, &s, &r, &err), 42, 12, expect);
    CHECK_ERR(drv->get_info(conn, &a1, &info, &err), 42, 12, expect);
    CHECK_ERR(drv->undefine(conn, &a1, 0, &err), 42, 12, expect);
    rv_dom_ref_clear(&a1);
}

static void test_transient(void)
{
    char *xml = simple_xml("t1", NULL, NULL);
    rv_dom_ref t1 = { .id = -1 }, gone = { .id = -1 };
    CHECK_OK(drv->create_xml(conn, xml, 0, &t1, &err));
    free(xml);
    CHECK_INT_EQ(t1.id, 2);
    check_state(&t1, RV_DOMAIN_RUNNING, 1);
    CHECK_INT_EQ(drv->is_persistent(conn, &t1, &err), 0);
    CHECK_OK(drv->suspend(conn, &t1, &err));
    CHECK_OK(drv->shutdown(conn, &t1, 0, &err));       /* paused may shut down */
    CHECK_ERR(drv->lookup_by_name(conn, "t1", &gone, &err), 42, 12, "Domain not found");
    rv_dom_ref_clear(&t1);

    /* on_poweroff restart: a shutdown boots it again, same id */
    xml = simple_xml("t2", NULL, "<on_poweroff>restart</on_poweroff>");
    CHECK_OK(drv->create_xml(conn, xml, 0, &t1, &err));
    free(xml);
    CHECK_OK(drv->shutdown(conn, &t1, 0, &err));
    check_state(&t1, RV_DOMAIN_RUNNING, 1);
    CHECK_INT_EQ(current_id("t2"), 3);
    /* on_reboot destroy: a reboot stops it, and a transient one goes */
    rv_dom_ref_clear(&t1);
    xml = simple_xml("t3", NULL, "<on_reboot>destroy</on_reboot>");
    CHECK_OK(drv->create_xml(conn, xml, 0, &t1, &err));
    free(xml);
    CHECK_OK(drv->reboot(conn, &t1, 0, &err));
    CHECK_ERR(drv->lookup_by_name(conn, "t3", &gone, &err), 42, 12, "Domain not found");
    rv_dom_ref_clear(&t1);

    xml = simple_xml("t4", NULL, NULL);
    CHECK_ERR(drv->create_xml(conn, xml, 1, &t1, &err), 8, 12,
              "unsupported flags (0x1) in function testDomainCreateXML");
    CHECK_OK(drv->create_xml(conn, xml, 0x10, &t1, &err));     /* VALIDATE is taken */
    free(xml);
    rv_dom_ref_clear(&t1);
}

#define U1 "11111111-2222-3333-4444-555555555555"

static void test_redefine(void)
{
    rv_dom_ref m1 = define("m1", U1, NULL), out = { .id = -1 };
    rv_dom_info info;
    char *xml;

    start(&m1);
    /* a new definition of a running domain waits for it to stop */
    char *bigger = strdup("<domain type='test'><name>m1</name><uuid>" U1 "</uuid>"
                          "<memory>2048</memory><os><type>hvm</type></os></domain>");
    CHECK_OK(drv->define_xml(conn, bigger, 0, &out, &err));
    rv_dom_ref_clear(&out);
    CHECK_OK(drv->get_info(conn, &m1, &info, &err));
    CHECK_UINT_EQ(info.max_mem_kib, 1024);
    xml = dumpxml(&m1, 2);
    CHECK_STR_HAS(xml, "<memory unit='KiB'>2048</memory>");
    CHECK(strstr(xml, " id=") == NULL);
    free(xml);
    xml = dumpxml(&m1, 0);
    CHECK_STR_HAS(xml, "<memory unit='KiB'>1024</memory>");
    free(xml);

    /* the same uuid must keep its name; a taken name its uuid */
    char *renamed = simple_xml("m2", U1, NULL);
    CHECK_ERR(drv->define_xml(conn, renamed, 0, &out, &err), 9, 20,
              "operation failed: domain 'm1' is already defined with uuid " U1);
    CHECK_ERR(drv->create_xml(conn, renamed, 0, &out, &err), 9, 20,
              "operation failed: domain 'm1' is already defined with uuid " U1);
    free(renamed);
    char *clash = simple_xml("test", NULL, NULL);
    CHECK_ERR(drv->define_xml(conn, clash, 0, &out, &err), 9, 20,
              "operation failed: domain 'test' already exists with uuid " TEST_UUID);
    CHECK_ERR(drv->create_xml(conn, clash, 0, &out, &err), 9, 20,
              "operation failed: domain 'test' already exists with uuid " TEST_UUID);
    free(clash);
    CHECK_ERR(drv->create_xml(conn, bigger, 0, &out, &err), 55, 20,
              "Requested operation is not valid: domain 'm1' is already active");

    CHECK_OK(drv->destroy(conn, &m1, 0, &err));
    CHECK_OK(drv->get_info(conn, &m1, &info, &err));
    CHECK_UINT_EQ(info.max_mem_kib, 2048);

    /* create_xml over a defined, stopped domain runs the new definition
     * and keeps the persistent one for after */
    char *live = simple_xml("m1", U1, "<vcpu>3</vcpu>");
    CHECK_OK(drv->create_xml(conn, live, 0, &out, &err));
    free(live);
    CHECK_INT_EQ(out.id, 3);
    rv_dom_ref_clear(&out);
    CHECK_INT_EQ(drv->is_persistent(conn, &m1, &err), 1);
    CHECK_OK(drv->get_info(conn, &m1, &info, &err));
    CHECK_UINT_EQ(info.nr_vcpu, 3);
    CHECK_OK(drv->destroy(conn, &m1, 0, &err));
    CHECK_OK(drv->get_info(conn, &m1, &info, &err));
    CHECK_UINT_EQ(info.nr_vcpu, 1);
    CHECK_UINT_EQ(info.max_mem_kib, 2048);

    /* redefining a stopped domain replaces its definition */
    CHECK_OK(drv->define_xml(conn, bigger, 0, &out, &err));
    rv_dom_ref_clear(&out);
    free(bigger);

    /* defining a running transient domain makes it persistent */
    char *t = simple_xml("t1", NULL, NULL);
    rv_dom_ref t1 = { .id = -1 };
    CHECK_OK(drv->create_xml(conn, t, 0, &t1, &err));
    free(t);
    char uuid[RV_UUID_STRING_LEN];
    rv_uuid_format(t1.uuid, uuid);
    t = simple_xml("t1", uuid, NULL);
    CHECK_OK(drv->define_xml(conn, t, 0, &out, &err));
    free(t);
    rv_dom_ref_clear(&out);
    CHECK_INT_EQ(drv->is_persistent(conn, &t1, &err), 1);
    CHECK_OK(drv->destroy(conn, &t1, 0, &err));
    check_state(&t1, RV_DOMAIN_SHUTOFF, 2);
    rv_dom_ref_clear(&t1);
    rv_dom_ref_clear(&m1);
}

static void test_flags(void)
{
    rv_dom_ref ref = lookup("test"), out = { .id = -1 };
    char *xml = NULL;
    int s, r;
    CHECK_ERR(drv->get_state(conn, &ref, 1, &s, &r, &err), 8, 12,
              "unsupported flags (0x1) in function testDomainGetState");
    CHECK_ERR(drv->get_xml_desc(conn, &ref, 0x1004, &xml, &err), 8, 12,
              "unsupported flags (0x1004) in function testDomainGetXMLDesc");
    CHECK_ERR(drv->shutdown(conn, &ref, 1, &err), 8, 12,
              "unsupported flags (0x1) in function testDomainShutdownFlags");
    CHECK_ERR(drv->destroy(conn, &ref, 2, &err), 8, 12,
              "unsupported flags (0x2) in function testDomainDestroyFlags");
    CHECK_ERR(drv->reboot(conn, &ref, 0x20, &err), 8, 12,
              "unsupported flags (0x20) in function testDomainReboot");
    CHECK_ERR(drv->undefine(conn, &ref, 4, &err), 8, 12,
              "unsupported flags (0x4) in function testDomainUndefineFlags");
    CHECK_ERR(drv->create(conn, &ref, 1, &out, &err), 8, 12,
              "unsupported flags (0x1) in function testDomainCreateWithFlags");
    CHECK_ERR(drv->has_managed_save_image(conn, &ref, 1, &err), 8, 12,
              "unsupported flags (0x1) in function testDomainHasManagedSaveImage");
    CHECK_ERR(drv->managed_save_remove(conn, &ref, 1, &err), 8, 12,
              "unsupported flags (0x1) in function testDomainManagedSaveRemove");
    CHECK_ERR(drv->snapshot_num(conn, &ref, 1u << 31, &err), 8, 12,
              "unsupported flags (0x80000000) in function testDomainSnapshotNum");
    CHECK_ERR(drv->define_xml(conn, "<domain/>", 2, &out, &err), 8, 12,
              "unsupported flags (0x2) in function testDomainDefineXMLFlags");
    rv_dom_ref *doms = NULL;
    CHECK_ERR(drv->list_all_domains(conn, 1 << 16, &doms, &err), 8, 12,
              "unsupported flags (0x10000) in function testConnectListAllDomains");
    /* accepted flags */
    CHECK_OK(drv->get_xml_desc(conn, &ref, 1 | 2 | 8, &xml, &err));
    free(xml);
    CHECK_OK(drv->reboot(conn, &ref, 0x1f, &err));
    CHECK_OK(drv->destroy(conn, &ref, 1, &err));
    rv_dom_ref_clear(&ref);
}

/* ---------------------------------------------------------------- lists and stats */

static void check_list(unsigned int flags, const char *expected)
{
    rv_dom_ref *doms = NULL;
    int n = drv->list_all_domains(conn, flags, &doms, &err);
    CHECK_OK(n);
    char got[512] = "";
    for (int i = 0; i < n; i++) {
        char item[80];
        snprintf(item, sizeof(item), "%s%s:%d", i ? " " : "", doms[i].name, doms[i].id);
        strcat(got, item);
    }
    if (strcmp(got, expected) != 0)
        check_fail(__FILE__, __LINE__, "list flags 0x%x: got \"%s\", expected \"%s\"", flags,
                   got, expected);
    rv_dom_refs_free(doms, (size_t)n);
}

static void test_lists(void)
{
    const char *names[] = { "zeta", "alpha", "Beta", "beta", "run2", "run1" };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        rv_dom_ref ref = define(names[i], NULL, NULL);
        if (strncmp(names[i], "run", 3) == 0 || strcmp(names[i], "Beta") == 0)
            start(&ref);
        if (strcmp(names[i], "Beta") == 0)
            CHECK_OK(drv->suspend(conn, &ref, &err));
        rv_dom_ref_clear(&ref);
    }
    char *xml = simple_xml("tr", NULL, NULL);
    rv_dom_ref tr = { .id = -1 };
    CHECK_OK(drv->create_xml(conn, xml, 0, &tr, &err));
    rv_dom_ref_clear(&tr);
    free(xml);

    /* running by id, then the rest by name */
    const char *all = "test:1 Beta:2 run2:3 run1:4 tr:5 alpha:-1 beta:-1 zeta:-1";
    check_list(0, all);
    check_list(RV_LIST_DOMAINS_ACTIVE, "test:1 Beta:2 run2:3 run1:4 tr:5");
    check_list(RV_LIST_DOMAINS_INACTIVE, "alpha:-1 beta:-1 zeta:-1");
    check_list(RV_LIST_DOMAINS_ACTIVE | RV_LIST_DOMAINS_INACTIVE, all);
    check_list(RV_LIST_DOMAINS_PERSISTENT, "test:1 Beta:2 run2:3 run1:4 alpha:-1 beta:-1 zeta:-1");
    check_list(RV_LIST_DOMAINS_TRANSIENT, "tr:5");
    check_list(RV_LIST_DOMAINS_RUNNING, "test:1 run2:3 run1:4 tr:5");
    check_list(RV_LIST_DOMAINS_PAUSED, "Beta:2");
    check_list(RV_LIST_DOMAINS_SHUTOFF, "alpha:-1 beta:-1 zeta:-1");
    check_list(RV_LIST_DOMAINS_PAUSED | RV_LIST_DOMAINS_SHUTOFF,
               "Beta:2 alpha:-1 beta:-1 zeta:-1");
    check_list(RV_LIST_DOMAINS_OTHER, "");
    check_list(RV_LIST_DOMAINS_MANAGEDSAVE, "");
    check_list(RV_LIST_DOMAINS_NO_MANAGEDSAVE, all);
    check_list(RV_LIST_DOMAINS_AUTOSTART, "");
    check_list(RV_LIST_DOMAINS_NO_AUTOSTART, all);
    check_list(RV_LIST_DOMAINS_HAS_SNAPSHOT, "");
    check_list(RV_LIST_DOMAINS_NO_SNAPSHOT, all);
    check_list(RV_LIST_DOMAINS_HAS_CHECKPOINT, "");
    check_list(RV_LIST_DOMAINS_NO_CHECKPOINT, all);
    check_list(RV_LIST_DOMAINS_INACTIVE | RV_LIST_DOMAINS_TRANSIENT, "");

    CHECK_INT_EQ(drv->num_of_domains(conn, &err), 5);
    int ids[8] = { 0 };
    CHECK_INT_EQ(drv->list_domain_ids(conn, ids, 8, &err), 5);
    CHECK_INT_EQ(ids[0], 1);
    CHECK_INT_EQ(ids[4], 5);
    CHECK_INT_EQ(drv->list_domain_ids(conn, ids, 2, &err), 2);
    CHECK_INT_EQ(drv->list_domain_ids(conn, ids, 0, &err), 0);
    CHECK_ERR(drv->list_domain_ids(conn, ids, -1, &err), 8, 20,
              "maxids in virConnectListDomains must be zero or greater");

    rv_dom_ref by_id = { .id = -1 };
    CHECK_OK(drv->lookup_by_id(conn, 4, &by_id, &err));
    CHECK_STR_EQ(by_id.name, "run1");
    rv_dom_ref_clear(&by_id);
}

static void check_stats_entry(const rv_dom_stats *s, const char *name, int state, int reason)
{
    CHECK_STR_EQ(s->dom.name, name);
    CHECK_UINT_EQ(s->nparams, 2);
    CHECK_STR_EQ(s->params[0].field, "state.state");
    CHECK_INT_EQ(s->params[0].type, 1);
    CHECK_INT_EQ(s->params[0].v.i, state);
    CHECK_STR_EQ(s->params[1].field, "state.reason");
    CHECK_INT_EQ(s->params[1].v.i, reason);
}

static void test_stats(void)
{
    rv_dom_stats *stats = NULL;
    rv_dom_ref off = define("off", NULL, NULL);
    int n = drv->get_all_domain_stats(conn, NULL, 0, 0, 0, &stats, &err);
    CHECK_INT_EQ(n, 2);
    check_stats_entry(&stats[0], "test", RV_DOMAIN_RUNNING, 0);
    check_stats_entry(&stats[1], "off", RV_DOMAIN_SHUTOFF, 0);
    rv_dom_stats_free(stats, (size_t)n);

    /* list filters apply; a group it lacks gives an empty entry */
    n = drv->get_all_domain_stats(conn, NULL, 0, 2, RV_LIST_DOMAINS_INACTIVE, &stats, &err);
    CHECK_INT_EQ(n, 1);
    CHECK_STR_EQ(stats[0].dom.name, "off");
    CHECK_UINT_EQ(stats[0].nparams, 0);
    rv_dom_stats_free(stats, (size_t)n);

    /* named domains in the order given; a vanished one is skipped */
    rv_dom_ref test = lookup("test"), refs[3];
    refs[0] = off;
    refs[1] = test;
    refs[2] = test;
    memset(refs[2].uuid, 0x42, 16);
    n = drv->get_all_domain_stats(conn, refs, 3, 1, 0, &stats, &err);
    CHECK_INT_EQ(n, 2);
    check_stats_entry(&stats[0], "off", RV_DOMAIN_SHUTOFF, 0);
    check_stats_entry(&stats[1], "test", RV_DOMAIN_RUNNING, 0);
    rv_dom_stats_free(stats, (size_t)n);

    CHECK_ERR(drv->get_all_domain_stats(conn, NULL, 0, 6, 1u << 31, &stats, &err), 74, 12,
              "argument unsupported: Stats types bits 0x6 are not supported by this daemon");
    CHECK_ERR(drv->get_all_domain_stats(conn, NULL, 0, 0, 1 << 8, &stats, &err), 8, 12,
              "unsupported flags (0x100) in function testConnectGetAllDomainStats");
    n = drv->get_all_domain_stats(conn, NULL, 0, 1, 1u << 31, &stats, &err);
    CHECK_INT_EQ(n, 2);
    rv_dom_stats_free(stats, (size_t)n);
    rv_dom_ref_clear(&off);
    rv_dom_ref_clear(&test);
}

/* ---------------------------------------------------------------- domain XML */

typedef struct bad_xml {
    const char *xml;
    int code, domain;
    const char *message;
} bad_xml;

/* Each as libvirtd 9.0's test driver answers it. */
static const bad_xml bad_xmls[] = {
    { "", 35, 20, "(domain_definition):1: Document is empty\n(null)\n^" },
    { "hello", 35, 20, "(domain_definition):1: Start tag expected, '<' not found\nhello\n^" },
    { "<domain type='test'><name>x</name>", 35, 20,
      "(domain_definition):1: Premature end of data in tag domain line 1\n"
      "<domain type='test'><name>x</name>\n----------------------------------^" },
    { "<domain type='test'><name>x</nam></domain>", 35, 20,
      "(domain_definition):1: Opening and ending tag mismatch: name line 1 and nam\n"
      "<domain type='test'><name>x</nam></domain>\n---------------------------------^" },
    { "<domain type='test'>\n<name>x</name>\n</domainx>", 35, 20,
      "(domain_definition):3: Opening and ending tag mismatch: domain line 1 and domainx\n"
      "</domainx>\n----------^" },
    { "<domain/><x/>", 35, 20,
      "(domain_definition):1: Extra content at the end of the document\n"
      "<domain/><x/>\n---------^" },
    { "<domain><name>a&foo;b</name></domain>", 35, 20,
      "(domain_definition):1: Entity 'foo' not defined\n"
      "<domain><name>a&foo;b</name></domain>\n--------------------^" },
    { "<domain a='1' a='2'/>", 35, 20,
      "(domain_definition):1: Attribute a redefined\n<domain a='1' a='2'/>\n-------------------^" },
    { "<domain type=test/>", 35, 20,
      "(domain_definition):1: AttValue: \" or ' expected\n<domain type=test/>\n-------------^" },
    { "<domain a='x<'/>", 35, 20,
      "(domain_definition):1: Unescaped '<' not allowed in attributes values\n"
      "<domain a='x<'/>\n------------^" },
    { "<domain>\t\x01</domain>", 35, 20,
      "(domain_definition):1: PCDATA invalid Char value 1\n<domain>\t\x01</domain>\n--------\t^" },
    { "<domain>\xff</domain>", 35, 20,
      "(domain_definition):1: Input is not proper UTF-8, indicate encoding !\n"
      "Bytes: 0xFF 0x3C 0x2F 0x64\n<domain>\xff</domain>\n--------^" },
    { "<domain>\xef\xbf\xbe</domain>", 35, 20,
      "(domain_definition):1: Char 0xFFFE out of allowed range\n"
      "<domain>\xef\xbf\xbe</domain>\n--------^" },
    { "<domain><![CDATA[ abc </domain>", 35, 20,
      "(domain_definition):1: CData section not finished\n abc </domai\n"
      "<domain><![CDATA[ abc </domain>\n-------------------------------^" },
    { "<domain><!-- a -- b --></domain>", 35, 20,
      "(domain_definition):1: Double hyphen within comment: <!-- a \n"
      "<domain><!-- a -- b --></domain>\n---------------^" },
    { "<domain>&#0;</domain>", 35, 20,
      "(domain_definition):1: xmlParseCharRef: invalid xmlChar value 0\n"
      "<domain>&#0;</domain>\n------------^" },
    { "<?xml version='2.0'?><domain/>", 35, 20,
      "(domain_definition):1: Unsupported version '2.0'\n"
      "<?xml version='2.0'?><domain/>\n-------------------^" },
    { "<domain><?xml version='1.0'?></domain>", 35, 20,
      "(domain_definition):1: XML declaration allowed only at the start of the document\n"
      "<domain><?xml version='1.0'?></domain>\n-------------^" },
    { "<!DOCTYPE d [<!ENTITY x 'y'>]><domain/>", 27, 20,
      "XML error: domain XML may not have a DOCTYPE (DTDs and entities are refused)" },
    { "<foo/>", 27, 5, "XML error: expecting root element of 'domain', not 'foo'" },
    { "<domain><memory>x</memory></domain>", 21, 20, "missing name information" },
    { "<domain type='test'><name></name></domain>", 21, 20, "missing name information" },
    { "<domain type='test'><name>n</name><uuid>zz</uuid></domain>", 1, 20,
      "internal error: malformed uuid element" },
    { "<domain><name>n</name></domain>", 1, 20, "internal error: missing domain type attribute" },
    { "<domain type='bogus'><name>n</name></domain>", 67, 20,
      "unsupported configuration: invalid domain type bogus" },
    { "<domain type='test'><name>n</name><memory>1</memory></domain>", 27, 20,
      "XML error: an os <type> must be specified" },
    { "<domain type='test'><name>n</name><os><type>foo</type></os></domain>", 67, 20,
      "unsupported configuration: unknown OS type 'foo'" },
    { "<domain type='test'><name>n</name><os><type arch='zzz'>hvm</type></os></domain>", 67, 20,
      "unsupported configuration: Unknown architecture zzz" },
    { "<domain type='test'><name>n</name><title>a\nb</title><os><type>hvm</type></os></domain>",
      27, 20, "XML error: Domain title can't contain newlines" },
    { "<domain type='test'><name>n</name><memory>abc</memory><os><type>hvm</type></os></domain>",
      27, 5, "XML error: Invalid value 'abc' for element or attribute './memory[1]'" },
    { "<domain type='test'><name>n</name><memory>-5</memory><os><type>hvm</type></os></domain>",
      27, 5, "XML error: Invalid value '-5' for element or attribute './memory[1]'" },
    { "<domain type='test'><name>n</name><memory unit='foo'>5</memory>"
      "<os><type>hvm</type></os></domain>", 8, 0, "invalid argument: unknown suffix 'foo'" },
    { "<domain type='test'><name>n</name><memory unit='KiB'>9007199254740992</memory>"
      "<os><type>hvm</type></os></domain>", 82, 0,
      "numerical overflow: value too large: 9007199254740992KiB" },
    { "<domain type='test'><name>n</name><vcpu>x</vcpu><os><type>hvm</type></os></domain>",
      27, 20, "XML error: maximum vcpus count must be an integer" },
    { "<domain type='test'><name>n</name><vcpu>0</vcpu><os><type>hvm</type></os></domain>",
      1, 20, "internal error: CPU IDs in <numa> exceed the <vcpu> count" },
    { "<domain type='test'><name>n</name><vcpu current='5'>4</vcpu><os><type>hvm</type></os>"
      "</domain>", 67, 20,
      "unsupported configuration: maximum vCPU count must not be less than current vCPU count" },
    { "<domain type='test'><name>n</name><vcpu placement='x'>1</vcpu>"
      "<os><type>hvm</type></os></domain>", 27, 5,
      "XML error: Invalid value for attribute 'placement' in element 'vcpu': 'x'." },
    { "<domain type='test'><name>n</name><os><type>hvm</type></os>"
      "<on_poweroff>bogus</on_poweroff></domain>", 67, 20,
      "unsupported configuration: unknown on_poweroff action: bogus" },
    { "<domain type='test'><name>n</name><os><type>hvm</type><boot dev='x'/></os></domain>",
      27, 5, "XML error: Invalid value for attribute 'dev' in element 'boot': 'x'." },
    { "<domain type='test'><name>n</name><os><type>hvm</type></os></domain>", 27, 20,
      "XML error: Memory size must be specified via <memory> or in the <numa> configuration" },
    { "<domain type='test'><name>a/b</name><memory>1</memory><os><type>hvm</type></os></domain>",
      27, 20, "XML error: name a/b cannot contain '/'" },
    { "<domain type='test'><name>a\nb</name><memory>1</memory><os><type>hvm</type></os></domain>",
      35, 5, "invalid char in name: \n" },
};

static void test_bad_xml(void)
{
    for (size_t i = 0; i < sizeof(bad_xmls) / sizeof(bad_xmls[0]); i++) {
        const bad_xml *b = &bad_xmls[i];
        rv_dom_ref out = { .id = -1 };
        if (drv->define_xml(conn, b->xml, 0, &out, &err) == 0)
            check_fail(__FILE__, __LINE__, "bad XML #%zu accepted: %s", i, b->xml);
        if (err.code != b->code || err.domain != b->domain || strcmp(err.message, b->message))
            check_fail(__FILE__, __LINE__, "bad XML #%zu: got %d %d \"%s\", expected %d %d \"%s\"",
                       i, err.code, err.domain, err.message, b->code, b->domain, b->message);
        rv_err_clear(&err);
        CHECK_ERR(drv->create_xml(conn, b->xml, 0, &out, &err), b->code, b->domain, b->message);
    }
    CHECK_INT_EQ(drv->num_of_domains(conn, &err), 1);
}

/* Everything modelled, written back the way libvirt writes it. */
static const char full_xml[] =
    "<domain type='kvm'>\n"
    "  <name>full &amp; &lt;x&gt;</name>\n"
    "  <uuid>11111111-2222-3333-4444-555555555555</uuid>\n"
    "  <title>T &apos;t&apos;</title>\n"
    "  <description>line 1\n"
    "line 2</description>\n"
    "  <memory unit='KiB'>2097152</memory>\n"
    "  <currentMemory unit='KiB'>102400</currentMemory>\n"
    "  <vcpu placement='auto' current='2'>4</vcpu>\n"
    "  <numatune>\n"
    "    <memory mode='strict' placement='auto'/>\n"
    "  </numatune>\n"
    "  <os>\n"
    "    <type arch='x86_64' machine='pc'>hvm</type>\n"
    "    <boot dev='cdrom'/>\n"
    "    <boot dev='network'/>\n"
    "  </os>\n"
    "  <clock offset='localtime'/>\n"
    "  <on_poweroff>preserve</on_poweroff>\n"
    "  <on_reboot>rename-restart</on_reboot>\n"
    "  <on_crash>coredump-destroy</on_crash>\n"
    "  <devices>\n"
    "    <disk type='file' device='disk'>\n"
    "      <source file='/a&amp;b'/>\n"
    "      <target dev='vdb' bus='virtio'/>\n"
    "    </disk>\n"
    "    <emulator>/usr/bin/x</emulator>\n"
    "  </devices>\n"
    "</domain>\n";

static void test_round_trip(void)
{
    /* the same input in another shape: units, entities, CDATA, comments */
    const char *input =
        "<?xml version='1.0' encoding='UTF-8'?>\n<!-- c -->\n"
        "<domain type=\"kvm\"><name>full &amp; <![CDATA[<x>]]></name>"
        "<uuid> 11111111 2222-3333-4444-555555555555 </uuid>"
        "<title>T 't'</title><description>line 1\r\nline 2</description>"
        "<memory unit='GiB'>2</memory><currentMemory unit='MiB'>100</currentMemory>"
        "<vcpu current='2' placement='auto'>4</vcpu>"
        "<os><type arch='x86_64' machine='pc'>hvm</type><boot dev='cdrom'/>"
        "<boot dev='network'/></os><clock offset='localtime'/>"
        "<on_poweroff>preserve</on_poweroff><on_reboot>rename-restart</on_reboot>"
        "<on_crash>coredump-destroy</on_crash><unknown>dropped</unknown>"
        "<devices>\n <disk type='file'\tdevice='disk'><!-- x -->"
        "<source file='/a&#38;b' />\n<target dev='vdb' bus='virtio'/></disk>"
        "<emulator>/usr/bin/x</emulator></devices></domain><?pi after?>\n";
    rv_test_def *def = NULL;
    CHECK_OK(rv_test_def_parse(input, &def, &err));
    char *xml = rv_test_def_format(def, -1);
    CHECK_STR_EQ(xml, full_xml);
    rv_test_def_free(def);
    /* and its own output reads back to the same */
    CHECK_OK(rv_test_def_parse(xml, &def, &err));
    char *again = rv_test_def_format(def, -1);
    CHECK_STR_EQ(again, full_xml);
    free(again);
    free(xml);
    rv_test_def_free(def);

    /* dumpxml of the start domain, undefined and defined back: the same */
    rv_dom_ref ref = lookup("test"), out = { .id = -1 };
    xml = dumpxml(&ref, 2);
    CHECK_OK(drv->destroy(conn, &ref, 0, &err));
    CHECK_OK(drv->undefine(conn, &ref, 0, &err));
    CHECK_OK(drv->define_xml(conn, xml, 0, &out, &err));
    again = dumpxml(&out, 0);
    CHECK_STR_EQ(again, xml);
    free(xml);
    free(again);
    rv_dom_ref_clear(&out);
    rv_dom_ref_clear(&ref);
}

/* ---------------------------------------------------------------- bounds */

static char *repeat(const char *head, const char *unit, size_t n, const char *tail)
{
    size_t hl = strlen(head), ul = strlen(unit), tl = strlen(tail);
    char *s = malloc(hl + ul * n + tl + 1);
    CHECK(s);
    memcpy(s, head, hl);
    for (size_t i = 0; i < n; i++)
        memcpy(s + hl + i * ul, unit, ul);
    memcpy(s + hl + ul * n, tail, tl + 1);
    return s;
}

/* The shared reader's bounds as the test driver meets them: libxml2's
 * depth limit, its errors in libvirt's form, references resolved. */
static rv_xml_node *read_doc(const char *xml, const char *root)
{
    return rv_xml_tree_read(xml, RV_TEST_DOMAIN_XML_MAX, root, "t", RV_FROM_DOMAIN, &err);
}

static void test_xml_bounds(void)
{
    /* 257 open elements are fine (libxml2's limit); the 258th is not */
    enum { DEPTH = 257 };
    char *open = repeat("", "<a>", DEPTH, "");
    char *close = repeat(open, "</a>", DEPTH, "");
    rv_xml_node *root = read_doc(close, "a");
    CHECK(root);
    rv_xml_free(root);
    free(close);
    close = repeat(open, "<a>", 1, "");
    CHECK(read_doc(close, "a") == NULL);
    CHECK_INT_EQ(err.code, RV_ERR_XML_DETAIL);
    CHECK_STR_HAS(err.message, "(t):1: Excessive depth in document: 256 use XML_PARSE_HUGE option\n");
    rv_err_clear(&err);
    free(close);
    free(open);

    /* a million nested tags (deeper than any stack would take recursion) */
    char *deep = repeat("", "<a>", 1000000, "");
    CHECK(read_doc(deep, "a") == NULL);
    CHECK_STR_HAS(err.message, "over the limit");
    rv_err_clear(&err);
    free(deep);
    deep = repeat("", "<a>", 300000, "");
    CHECK(read_doc(deep, "a") == NULL);
    CHECK_STR_HAS(err.message, "Excessive depth");
    rv_err_clear(&err);
    free(deep);

    char *attrs = repeat("<domain", " a='1'", 2, "/>");
    CHECK(read_doc(attrs, "domain") == NULL);
    CHECK_STR_HAS(err.message, "Attribute a redefined");
    rv_err_clear(&err);
    free(attrs);

    /* references and normalisation; comments go, CDATA is text, namespace
     * declarations are attributes (first) */
    root = read_doc("<r a='&lt;&#65;&#x42;&gt;\t&quot;&apos;&amp;\r\n' xmlns:p='urn:x'>"
                    "x&#x1F600;<![CDATA[&lt;]]><!-- c -->\r\n<p:k p:b='2'/></r>", "r");
    CHECK(root);
    CHECK_STR_EQ(rv_xml_attr_get(root, "a"), "<AB> \"'& ");
    CHECK_STR_EQ(root->attrs[0].name, "xmlns:p");
    CHECK_STR_EQ(rv_xml_attr_get(rv_xml_child(root, "p:k"), "p:b"), "2");
    char *text = rv_xml_string(root);
    CHECK_STR_EQ(text, "x\xf0\x9f\x98\x80&lt;\n");
    free(text);
    rv_xml_free(root);
}

/* Hundreds of domains: lookups stay exact, and everything is freed. */
static void test_many_domains(void)
{
    enum { N = 600 };
    for (int i = 0; i < N; i++) {
        char name[32];
        snprintf(name, sizeof(name), "dom%03d", i);
        rv_dom_ref ref = define(name, NULL, NULL);
        if (i % 2)
            start(&ref);
        rv_dom_ref_clear(&ref);
    }
    CHECK_INT_EQ(drv->num_of_domains(conn, &err), N / 2 + 1);
    for (int i = 0; i < N; i++) {
        char name[32];
        snprintf(name, sizeof(name), "dom%03d", i);
        rv_dom_ref ref = lookup(name), by_uuid = { .id = -1 };
        rv_dom_info info;
        CHECK_OK(drv->lookup_by_uuid(conn, ref.uuid, &by_uuid, &err));
        CHECK_STR_EQ(by_uuid.name, name);
        CHECK_OK(drv->get_info(conn, &ref, &info, &err));
        CHECK_INT_EQ(info.state, i % 2 ? RV_DOMAIN_RUNNING : RV_DOMAIN_SHUTOFF);
        if (i % 3 == 0)
            CHECK_OK(drv->undefine(conn, &ref, 0, &err));
        rv_dom_ref_clear(&by_uuid);
        rv_dom_ref_clear(&ref);
    }
    rv_dom_ref *doms = NULL;
    int n = drv->list_all_domains(conn, 0, &doms, &err);
    CHECK_INT_EQ(n, N + 1 - N / 3 / 2);     /* stopped ones divisible by 3 went */
    rv_dom_refs_free(doms, (size_t)n);
}

static void test_state_lasts(void)
{
    /* state belongs to the driver, not to a connection */
    rv_driver_conn *second = NULL;
    rv_dom_ref keep = define("keep", NULL, NULL);
    drv->close(conn);
    CHECK_OK(drv->open("test:///default", 0, &second, &err));
    conn = second;
    rv_dom_ref again = lookup("keep");
    CHECK(memcmp(again.uuid, keep.uuid, 16) == 0);
    rv_dom_ref_clear(&again);
    rv_dom_ref_clear(&keep);

    rv_driver_conn *other = NULL;
    CHECK_ERR(drv->open("test:///etc/passwd", 0, &other, &err), 5, 12,
              "remvirt's test driver serves only test:///default, not test:///etc/passwd");
    CHECK_INT_EQ(drv->probe("test:///default"), 1);
    CHECK_INT_EQ(drv->probe("qemu:///system"), 0);
}

int main(void)
{
    reset();
    test_host();
    test_start_domain();
    test_lookup_errors();
    reset();
    test_lifecycle();
    reset();
    test_transient();
    reset();
    test_redefine();
    reset();
    test_flags();
    reset();
    test_lists();
    reset();
    test_stats();
    reset();
    test_bad_xml();
    test_round_trip();
    test_xml_bounds();
    reset();
    test_many_domains();
    reset();
    test_state_lasts();
    drv->close(conn);
    drv->cleanup();
    printf("test-driver: all checks passed\n");
    return 0;
}
