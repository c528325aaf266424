/* The in-memory test driver, serving test:///default the way libvirt 9.0's
 * test driver does, so virsh prints the same against remvirtd: the same
 * starting domain, states and reasons, error codes and texts.  Unlike
 * libvirt's, its state lasts for the daemon's life instead of resetting
 * when the last client leaves.
 *
 * The daemon runs one thread, so the table needs no lock.  The domains
 * are in the drivers' shared domain list (conf/domlist.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "common/util.h"
#include "rv_packet.h"
#include "server/drivers/conf/domlist.h"
#include "server/drivers/test/test_driver.h"
#include "server/drivers/test/test_network.h"
#include "server/drivers/test/test_nodedev.h"
#include "server/drivers/test/test_snapshot.h"
#include "server/drivers/test/test_storage.h"
#include "server/drivers/test/test_domain_xml.h"

RV_LOG_CATEGORY("drivers.test");

/* The reasons and flags come from the public header (rv_values.x); the
 * masks and the flags rv_values.x does not list are spelled here. */
enum {
    DEFINE_VALIDATE = 1 << 0,                   /* virDomainDefineFlags */
    REBOOT_ALL_METHODS = 0x1f,                  /* every RV_DOMAIN_REBOOT_* method */
    UNDEFINE_MANAGED_SAVE_AND_SNAPSHOTS = 0x3,  /* the two libvirt's test driver takes */
    MESSAGE_ALL = 0x3,                          /* every RV_DOMAIN_MESSAGE_* */
    LIST_ALL_FILTERS = 0xffff,
    STATS_FILTERS = 0xff,
    STATS_NOWAIT = 1u << 29, STATS_BACKING = 1u << 30, STATS_ENFORCE = 1u << 31,
    TYPED_PARAM_INT = 1,
};

enum { TEST_MAX_DOMAINS = 16384 };             /* the wire's longest domain list */
#define TEST_HV_VERSION 2ULL                   /* "0.0.2" */
#define TEST_LABEL "libvirt-test"

/* libvirt's test:///default starts with this domain, running as id 1. */
static const char default_domain_xml[] =
    "<domain type='test'>"
    "<name>test</name>"
    "<uuid>6695eb01-f6a4-8304-79aa-97f2502e193f</uuid>"
    "<memory>8388608</memory>"
    "<currentMemory>2097152</currentMemory>"
    "<vcpu>2</vcpu>"
    "<os><type>hvm</type></os>"
    "<devices>"
    "<disk type='file' device='disk'>"
    "<source file='/guest/diskimage1'/>"
    "<target dev='vda' bus='virtio'/>"
    "<address type='pci' domain='0x0000' bus='0x01' slot='0x00' function='0x0'/>"
    "</disk>"
    "<interface type='network'>"
    "<mac address='aa:bb:cc:dd:ee:ff'/>"
    "<source network='default'/>"
    "<target dev='testnet0'/>"
    "<address type='pci' domain='0x0000' bus='0x00' slot='0x01' function='0x0'/>"
    "</interface>"
    "<memballoon model='virtio'>"
    "<address type='pci' domain='0x0000' bus='0x00' slot='0x02' function='0x0'/>"
    "</memballoon>"
    "</devices>"
    "</domain>";


static const char *dom_name(const void *obj);
static const unsigned char *dom_uuid(const void *obj);
static void dom_status(const void *obj, rv_dom_status *st);
static int dom_id(const void *obj);

static const rv_dom_kind dom_kind = {
    .from = RV_FROM_TEST, .terse_not_found = true, .name_of = dom_name, .uuid_of = dom_uuid,
    .status_of = dom_status, .id_of = dom_id,
};

/* Every connection sees these domains, for the daemon's life. */
static struct {
    rv_dom_list doms;
    bool ready;                 /* the default domain is made at the first open */
    int next_id;
    int ids_wrapped;            /* past INT_MAX: new ids must skip used ones */
} table = { .doms = { .kind = &dom_kind } };

/* The test driver keeps nothing per connection. */
struct rv_driver_conn {
    char unused;
};

/* ================================================================ errors */

#define fail rv_err_fail

int test_fail_oom(rv_err *err)
{
    return fail(err, RV_FROM_TEST, RV_ERR_NO_MEMORY, "out of memory");
}

int test_check_flags(unsigned int flags, unsigned int known, const char *func, rv_err *err)
{
    return rv_driver_check_flags(RV_FROM_TEST, flags, known, func, err);
}

#define fail_oom test_fail_oom
#define check_flags test_check_flags

/* ================================================================ the table */

static const char *dom_name(const void *obj)
{
    return ((const test_dom *)obj)->def->name;
}

static const unsigned char *dom_uuid(const void *obj)
{
    return ((const test_dom *)obj)->def->uuid;
}

static int dom_id(const void *obj)
{
    return ((const test_dom *)obj)->id;
}

static void dom_status(const void *obj, rv_dom_status *st)
{
    const test_dom *d = obj;
    st->state = d->state;
    st->active = d->id >= 0;
    st->persistent = d->persistent;
    st->autostart = d->autostart;
    st->managed_save = d->managed_save;
    st->has_snapshot = test_snaps_count(d->snaps) > 0;
    st->has_checkpoint = test_snaps_count(d->checkpoints) > 0;
}

static void dom_free(test_dom *d)
{
    rv_test_def_free(d->def);
    rv_test_def_free(d->next_def);
    test_snaps_free(d->snaps);
    test_checkpoints_free(d->checkpoints);
    free(d);
}

/* A new inactive domain holding def (taken, freed on failure). */
static test_dom *dom_add(rv_test_def *def, rv_err *err)
{
    test_dom *d = NULL;
    if (rv_dom_list_size(&table.doms) >= TEST_MAX_DOMAINS) {
        fail(err, RV_FROM_TEST, RV_ERR_OPERATION_FAILED,
             "operation failed: the test driver holds at most %d domains", TEST_MAX_DOMAINS);
        goto fail;
    }
    if (!(d = calloc(1, sizeof(*d)))) {
        fail_oom(err);
        goto fail;
    }
    d->def = def;
    d->id = -1;
    d->state = RV_DOMAIN_SHUTOFF;
    d->reason = RV_DOMAIN_SHUTOFF_UNKNOWN;
    if (rv_dom_list_add(&table.doms, d, def->name, def->uuid, err) == 0)
        return d;
    free(d);
fail:
    rv_test_def_free(def);
    return NULL;
}

static void dom_remove(test_dom *d)
{
    RV_DEBUG("domain '%s' removed", d->def->name);
    rv_dom_list_remove(&table.doms, d);
    dom_free(d);
}

static void dom_free_obj(void *obj)
{
    dom_free(obj);
}

static void table_free(void)
{
    rv_dom_list_clear(&table.doms, dom_free_obj);
    table.ready = false;
}

/* ================================================================ lifecycle */

/* Ids grow with every start, as libvirt's do; after INT_MAX they wrap and
 * skip ids still running. */
static int take_id(void)
{
    for (;;) {
        int id = table.next_id;
        table.next_id = id == INT_MAX ? 1 : id + 1;
        table.ids_wrapped |= id == INT_MAX;
        if (!table.ids_wrapped || !rv_dom_list_find_id(&table.doms, id))
            return id;
    }
}

/* Tell the subscribers (through the daemon) what just happened to d. */
static void emit(const test_dom *d, int event, int detail)
{
    rv_dom_ref ref = { .name = d->def->name, .id = d->id };
    memcpy(ref.uuid, d->def->uuid, sizeof(ref.uuid));
    rv_driver_lifecycle_event(&rv_test_driver, &ref, event, detail);
}

void test_dom_emit(const test_dom *d, int event, int detail)
{
    emit(d, event, detail);
}

void test_dom_set_running(test_dom *d, int reason)
{
    if (d->id < 0)
        d->id = take_id();
    d->state = RV_DOMAIN_RUNNING;
    d->reason = reason;
}

void test_dom_set_stopped(test_dom *d, int reason)
{
    d->id = -1;
    d->state = RV_DOMAIN_SHUTOFF;
    d->reason = reason;
}

/* detail: the STARTED event's (RV_EVENT_STARTED_*). */
static void dom_start_detail(test_dom *d, int reason, int detail)
{
    d->id = take_id();
    d->state = RV_DOMAIN_RUNNING;
    d->reason = reason;
    RV_DEBUG("domain '%s' running as id %d", d->def->name, d->id);
    emit(d, RV_EVENT_STARTED, detail);
}

static void dom_start(test_dom *d, int reason)
{
    dom_start_detail(d, reason, RV_EVENT_STARTED_BOOTED);
}

/* Stop d: a transient domain goes away, a waiting definition takes over. */
void test_dom_stop(test_dom *d, int reason, int detail)
{
    RV_DEBUG("domain '%s' (id %d) stopped, reason %d", d->def->name, d->id, reason);
    d->id = -1;
    d->state = RV_DOMAIN_SHUTOFF;
    d->reason = reason;
    emit(d, RV_EVENT_STOPPED, detail);
    if (!d->persistent) {
        dom_remove(d);
        return;
    }
    if (d->next_def) {
        rv_test_def_free(d->def);
        d->def = d->next_def;
        d->next_def = NULL;
    }
}

static void dom_stop(test_dom *d, int reason)
{
    test_dom_stop(d, reason, reason == RV_DOMAIN_SHUTOFF_DESTROYED ? RV_EVENT_STOPPED_DESTROYED
                                                                   : RV_EVENT_STOPPED_SHUTDOWN);
}

/* What a guest's own poweroff or reboot leads to (<on_poweroff>,
 * <on_reboot>): the test driver restarts in place or stops. */
static void dom_apply_action(test_dom *d, int action)
{
    if (action == RV_DOMAIN_ACTION_RESTART || action == RV_DOMAIN_ACTION_RENAME_RESTART) {
        d->state = RV_DOMAIN_RUNNING;
        d->reason = RV_DOMAIN_RUNNING_BOOTED;
    } else {
        dom_stop(d, RV_DOMAIN_SHUTOFF_SHUTDOWN);
    }
}

static int dom_active(const test_dom *d)
{
    return d->id >= 0;
}

/* The domain a wire reference names (by uuid), or NULL with libvirt's
 * error for a domain that went away. */
static test_dom *dom_get(const rv_dom_ref *ref, rv_err *err)
{
    return rv_dom_list_get(&table.doms, ref->uuid, ref->name, err);
}

test_dom *test_dom_get(const rv_dom_ref *ref, rv_err *err)
{
    return dom_get(ref, err);
}

static int ref_fill(const test_dom *d, rv_dom_ref *out, rv_err *err)
{
    return rv_dom_list_ref(&table.doms, d, out, err);
}

/* libvirt's rule for an incoming definition; *out is the domain def
 * updates, or NULL for a new one. */
static int find_existing(const rv_test_def *def, test_dom **out, rv_err *err)
{
    void *same;
    int rc = rv_dom_list_check_clash(&table.doms, def->name, def->uuid, &same, err);
    *out = same;
    return rc;
}

static int table_init(rv_err *err)
{
    rv_test_def *def;
    if (table.ready)
        return 0;
    table.ready = true;
    table.next_id = 1;
    table.ids_wrapped = 0;
    test_dom *d = NULL;
    if (rv_test_def_parse(default_domain_xml, &def, err) == 0)
        d = dom_add(def, err);
    if (!d) {
        table_free();
        return -1;
    }
    d->persistent = 1;
    dom_start(d, RV_DOMAIN_RUNNING_UNKNOWN);
    return 0;
}

/* ================================================================ connection */

int test_probe(const char *uri)
{
    return uri && strncmp(uri, "test:", 5) == 0;
}

int test_open(const char *uri, unsigned int flags, rv_driver_conn **out, rv_err *err)
{
    (void)flags;                /* read-only is enforced by the dispatcher */
    if (uri && strcmp(uri, "test:///default") != 0)
        return fail(err, RV_FROM_TEST, RV_ERR_NO_CONNECT,
                    "remvirt's test driver serves only test:///default, not %s", uri);
    if (table_init(err) < 0)
        return -1;
    *out = calloc(1, sizeof(**out));
    return *out ? 0 : fail_oom(err);
}

void test_close(rv_driver_conn *c)
{
    free(c);
}

void test_cleanup(void)
{
    table_free();
    test_net_cleanup();
    test_storage_cleanup();
    test_nodedev_cleanup();
}

/* ================================================================ host */

static int test_get_type(rv_driver_conn *c, char **type, rv_err *err)
{
    (void)c;
    *type = strdup("TEST");
    return *type ? 0 : fail_oom(err);
}

static int test_get_version(rv_driver_conn *c, unsigned long long *ver, rv_err *err)
{
    (void)c, (void)err;
    *ver = TEST_HV_VERSION;
    return 0;
}

/* The machine's name as gethostname gives it.  (libvirt also asks the
 * resolver for a canonical name when it has no dot; that can block, and
 * this loop must not.) */
static int test_get_hostname(rv_driver_conn *c, char **hostname, rv_err *err)
{
    char name[HOST_NAME_MAX + 1];
    (void)c;
    if (gethostname(name, sizeof(name)) < 0)
        return fail(err, RV_FROM_TEST, RV_ERR_SYSTEM_ERROR, "failed to determine host name");
    name[HOST_NAME_MAX] = '\0';
    *hostname = strdup(name);
    return *hostname ? 0 : fail_oom(err);
}

static int test_get_capabilities(rv_driver_conn *c, char **xml, rv_err *err)
{
    (void)c;
    *xml = rv_test_capabilities();
    return *xml ? 0 : fail_oom(err);
}

static int native_node_get_info(rv_driver_conn *c, rv_driver_node_info *info, rv_err *err)
{
    (void)c, (void)err;
    memset(info, 0, sizeof(*info));
    strcpy(info->model, "i686");
    info->memory_kib = 3145728;
    info->cpus = 16;
    info->mhz = 1400;
    info->nodes = 2;
    info->sockets = 2;
    info->cores = 2;
    info->threads = 2;
    return 0;
}

static int native_node_get_security_model(rv_driver_conn *c, char **model, char **doi,
                                        rv_err *err)
{
    (void)c;
    *model = strdup("testSecurity");
    *doi = strdup("");
    if (*model && *doi)
        return 0;
    free(*model);
    free(*doi);
    *model = *doi = NULL;
    return fail_oom(err);
}

/* ================================================================ lists */

const rv_dom_list *test_doms(void)
{
    return &table.doms;
}

static int test_num_of_domains(rv_driver_conn *c, rv_err *err)
{
    (void)c, (void)err;
    return rv_dom_list_num_active(&table.doms);
}

static int test_list_domain_ids(rv_driver_conn *c, int *ids, int max, rv_err *err)
{
    (void)c;
    return rv_dom_list_ids(&table.doms, ids, max, err);
}

static int test_list_all_domains(rv_driver_conn *c, unsigned int flags, rv_dom_ref **out,
                                 rv_err *err)
{
    (void)c;
    *out = NULL;
    if (check_flags(flags, LIST_ALL_FILTERS, "testConnectListAllDomains", err) < 0)
        return -1;
    return rv_dom_list_all(&table.doms, flags, out, err);
}

static int test_lookup_by_id(rv_driver_conn *c, int id, rv_dom_ref *out, rv_err *err)
{
    (void)c;
    return rv_dom_list_lookup_id(&table.doms, id, out, err);
}

static int test_lookup_by_name(rv_driver_conn *c, const char *name, rv_dom_ref *out,
                               rv_err *err)
{
    (void)c;
    return rv_dom_list_lookup_name(&table.doms, name, out, err);
}

static int test_lookup_by_uuid(rv_driver_conn *c, const unsigned char uuid[16],
                               rv_dom_ref *out, rv_err *err)
{
    (void)c;
    return rv_dom_list_lookup_uuid(&table.doms, uuid, out, err);
}

/* ================================================================ definition */

/* Escaping and indentation make the written-back XML larger than what was
 * sent; a domain whose XML could not be sent back must not be defined. */
static int check_dumpable(const rv_test_def *def, rv_err *err)
{
    char *xml = rv_test_def_format(def, INT_MAX);
    if (!xml)
        return fail_oom(err);
    size_t len = strlen(xml);
    free(xml);
    if (len > RV_STRING_MAX)
        return fail(err, RV_FROM_DOMAIN, RV_ERR_CONFIG_UNSUPPORTED,
                    "unsupported configuration: the domain XML would be %zu bytes once "
                    "written back, over the protocol's limit of %d", len, RV_STRING_MAX);
    return 0;
}

static int test_define_xml(rv_driver_conn *c, const char *xml, unsigned int flags,
                           rv_dom_ref *out, rv_err *err)
{
    rv_test_def *def;
    test_dom *d;
    (void)c;
    if (check_flags(flags, DEFINE_VALIDATE, "testDomainDefineXMLFlags", err) < 0 ||
        rv_test_def_parse(xml, &def, err) < 0)
        return -1;
    if (check_dumpable(def, err) < 0 || find_existing(def, &d, err) < 0) {
        rv_test_def_free(def);
        return -1;
    }
    int added = !d;
    if (!d) {
        if (!(d = dom_add(def, err)))
            return -1;
    } else if (dom_active(d)) {     /* the new definition waits for the stop */
        rv_test_def_free(d->next_def);
        d->next_def = def;
    } else {
        rv_test_def_free(d->def);
        d->def = def;
    }
    d->persistent = 1;
    RV_DEBUG("domain '%s' defined", d->def->name);
    emit(d, RV_EVENT_DEFINED, added ? RV_EVENT_DEFINED_ADDED : RV_EVENT_DEFINED_UPDATED);
    return ref_fill(d, out, err);
}

/* The domain that is to run def (taken, freed on failure): a new one, or
 * the inactive one def names, whose persistent definition waits. */
static test_dom *dom_to_run(rv_test_def *def, rv_err *err)
{
    test_dom *d;
    if (find_existing(def, &d, err) < 0 ||
        (d && dom_active(d) &&
         fail(err, RV_FROM_DOMAIN, RV_ERR_OPERATION_INVALID,
              "Requested operation is not valid: domain '%s' is already active",
              d->def->name) < 0)) {
        rv_test_def_free(def);
        return NULL;
    }
    if (!d)
        return dom_add(def, err);
    d->next_def = d->def;
    d->def = def;
    return d;
}

static int test_create_xml(rv_driver_conn *c, const char *xml, unsigned int flags,
                           rv_dom_ref *out, rv_err *err)
{
    rv_test_def *def;
    test_dom *d;
    (void)c;
    if (check_flags(flags, RV_DOMAIN_START_VALIDATE, "testDomainCreateXML", err) < 0 ||
        rv_test_def_parse(xml, &def, err) < 0)
        return -1;
    if (check_dumpable(def, err) < 0) {
        rv_test_def_free(def);
        return -1;
    }
    if (!(d = dom_to_run(def, err)))
        return -1;
    dom_start(d, RV_DOMAIN_RUNNING_BOOTED);
    return ref_fill(d, out, err);
}

static int test_undefine(rv_driver_conn *c, const rv_dom_ref *dom, unsigned int flags,
                         rv_err *err)
{
    test_dom *d;
    (void)c;
    if (check_flags(flags, UNDEFINE_MANAGED_SAVE_AND_SNAPSHOTS, "testDomainUndefineFlags",
                    err) < 0 || !(d = dom_get(dom, err)))
        return -1;
    if (d->managed_save && !(flags & RV_DOMAIN_UNDEFINE_MANAGED_SAVE))
        return fail(err, RV_FROM_TEST, RV_ERR_OPERATION_INVALID,
                    "Requested operation is not valid: Refusing to undefine while domain "
                    "managed save image exists");
    size_t nsnaps = test_snaps_count(d->snaps);
    if (!dom_active(d) && nsnaps && !(flags & RV_DOMAIN_UNDEFINE_SNAPSHOTS_METADATA))
        return fail(err, RV_FROM_TEST, RV_ERR_OPERATION_INVALID,
                    "Requested operation is not valid: cannot delete inactive domain with %zu "
                    "snapshots", nsnaps);
    emit(d, RV_EVENT_UNDEFINED, RV_EVENT_UNDEFINED_REMOVED);
    if (!dom_active(d)) {
        dom_remove(d);
        return 0;
    }
    d->persistent = 0;              /* goes away when it stops */
    rv_test_def_free(d->next_def);
    d->next_def = NULL;
    return 0;
}

/* ================================================================ lifecycle calls */

static int test_create(rv_driver_conn *c, const rv_dom_ref *dom, unsigned int flags,
                       rv_dom_ref *out, rv_err *err)
{
    test_dom *d;
    (void)c;
    if (check_flags(flags, 0, "testDomainCreateWithFlags", err) < 0 || !(d = dom_get(dom, err)))
        return -1;
    if (dom_active(d))
        return fail(err, RV_FROM_TEST, RV_ERR_INTERNAL_ERROR,
                    "internal error: Domain '%s' is already running", d->def->name);
    dom_start(d, RV_DOMAIN_RUNNING_BOOTED);
    d->managed_save = 0;            /* libvirt's test driver boots afresh and drops it */
    return ref_fill(d, out, err);
}

static int fail_not_active(rv_err *err)
{
    return fail(err, RV_FROM_DOMAIN, RV_ERR_OPERATION_INVALID,
                "Requested operation is not valid: domain is not running");
}

int test_dom_view_get(const rv_nonnull_domain *wire, test_dom_view *out, rv_err *err)
{
    rv_dom_ref ref = rv_dom_ref_from_wire(wire);
    const test_dom *d = dom_get(&ref, err);
    if (!d)
        return -1;
    out->def = d->def;
    out->config = d->next_def ? d->next_def : d->def;
    out->id = d->id;
    out->state = d->state;
    out->persistent = d->persistent;
    out->time_set = d->time_set;
    out->time_sec = d->time_sec;
    out->time_nsec = d->time_nsec;
    return 0;
}

static int test_destroy(rv_driver_conn *c, const rv_dom_ref *dom, unsigned int flags,
                        rv_err *err)
{
    test_dom *d;
    (void)c;
    if (check_flags(flags, RV_DOMAIN_DESTROY_GRACEFUL, "testDomainDestroyFlags", err) < 0 ||
        !(d = dom_get(dom, err)))
        return -1;
    if (!dom_active(d))
        return fail_not_active(err);
    dom_stop(d, RV_DOMAIN_SHUTOFF_DESTROYED);
    return 0;
}

static int test_shutdown(rv_driver_conn *c, const rv_dom_ref *dom, unsigned int flags,
                         rv_err *err)
{
    test_dom *d;
    (void)c;
    if (check_flags(flags, 0, "testDomainShutdownFlags", err) < 0 || !(d = dom_get(dom, err)))
        return -1;
    if (!dom_active(d))
        return fail(err, RV_FROM_TEST, RV_ERR_INTERNAL_ERROR,
                    "internal error: domain '%s' not running", d->def->name);
    dom_apply_action(d, d->def->on_poweroff);
    return 0;
}

static int test_reboot(rv_driver_conn *c, const rv_dom_ref *dom, unsigned int flags,
                       rv_err *err)
{
    test_dom *d;
    (void)c;
    if (check_flags(flags, REBOOT_ALL_METHODS, "testDomainReboot", err) < 0 ||
        !(d = dom_get(dom, err)))
        return -1;
    if (!dom_active(d))
        return fail_not_active(err);
    dom_apply_action(d, d->def->on_reboot);
    return 0;
}

static int test_suspend(rv_driver_conn *c, const rv_dom_ref *dom, rv_err *err)
{
    test_dom *d = dom_get(dom, err);
    (void)c;
    if (!d)
        return -1;
    if (d->state != RV_DOMAIN_RUNNING)
        return fail(err, RV_FROM_TEST, RV_ERR_INTERNAL_ERROR,
                    "internal error: domain '%s' not running", d->def->name);
    d->state = RV_DOMAIN_PAUSED;
    d->reason = RV_DOMAIN_PAUSED_USER;
    emit(d, RV_EVENT_SUSPENDED, RV_EVENT_SUSPENDED_PAUSED);
    return 0;
}

static int test_resume(rv_driver_conn *c, const rv_dom_ref *dom, rv_err *err)
{
    test_dom *d = dom_get(dom, err);
    (void)c;
    if (!d)
        return -1;
    if (d->state != RV_DOMAIN_PAUSED)
        return fail(err, RV_FROM_TEST, RV_ERR_INTERNAL_ERROR,
                    "internal error: domain '%s' not paused", d->def->name);
    d->state = RV_DOMAIN_RUNNING;
    d->reason = RV_DOMAIN_RUNNING_UNPAUSED;
    emit(d, RV_EVENT_RESUMED, RV_EVENT_RESUMED_UNPAUSED);
    return 0;
}

static int test_managed_save_remove(rv_driver_conn *c, const rv_dom_ref *dom,
                                    unsigned int flags, rv_err *err)
{
    test_dom *d;
    (void)c;
    if (check_flags(flags, 0, "testDomainManagedSaveRemove", err) < 0 ||
        !(d = dom_get(dom, err)))
        return -1;
    d->managed_save = 0;
    return 0;
}

/* ================================================================ save, restore, reset, autostart */

/* libvirt's test driver's image: this magic with its NUL, the XML's length
 * as a host int, then the XML; the same layout lets an image one of the two
 * daemons wrote be restored by the other on the same host. */
static const char save_magic[] = "TestGuestMagic";

static test_dom *running_dom(const rv_nonnull_domain *wire, rv_err *err)
{
    rv_dom_ref ref = rv_dom_ref_from_wire(wire);
    test_dom *d = dom_get(&ref, err);
    if (d && !dom_active(d)) {
        fail_not_active(err);
        return NULL;
    }
    return d;
}

int test_domain_set_autostart(rv_driver_conn *c, const rv_domain_set_autostart_args *args,
                              rv_err *err)
{
    rv_dom_ref ref = rv_dom_ref_from_wire(&args->dom);
    test_dom *d = dom_get(&ref, err);
    (void)c;
    if (!d)
        return -1;
    d->autostart = args->autostart != 0;
    return 0;
}

int test_domain_rename(rv_driver_conn *c, const rv_domain_rename_args *args,
                       rv_domain_rename_ret *ret, rv_err *err)
{
    rv_dom_ref ref = rv_dom_ref_from_wire(&args->dom);
    const char *name = args->new_name ? *args->new_name : NULL;
    test_dom *d;
    (void)c;
    if (rv_driver_rename_name_check(name, err) < 0 ||
        check_flags(args->flags, 0, "testDomainRename", err) < 0 || !(d = dom_get(&ref, err)))
        return -1;
    if (dom_active(d))
        return fail(err, RV_FROM_TEST, RV_ERR_OPERATION_INVALID,
                    "Requested operation is not valid: cannot rename active domain");
    if (!d->persistent)
        return fail(err, RV_FROM_TEST, RV_ERR_OPERATION_INVALID,
                    "Requested operation is not valid: cannot rename a transient domain");
    if (strcmp(d->def->name, name) == 0)
        return fail(err, RV_FROM_DOMAIN, RV_ERR_OPERATION_INVALID,
                    "Requested operation is not valid: Can't rename domain to itself");
    if (rv_dom_list_find_name(&table.doms, name))
        return fail(err, RV_FROM_DOMAIN, RV_ERR_OPERATION_INVALID,
                    "Requested operation is not valid: domain with name '%s' already exists",
                    name);
    if (strchr(name, '/'))
        return fail(err, RV_FROM_TEST, RV_ERR_XML_ERROR, "XML error: name %s cannot contain '/'",
                    name);
    char *copy = strdup(name);
    if (!copy || rv_dom_list_rename(&table.doms, d, name, err) < 0) {
        free(copy);
        return copy ? -1 : test_fail_oom(err);
    }
    /* The old name's event goes before the name changes (it names it). */
    char *old = d->def->name;
    d->def->name = copy;
    rv_dom_ref gone = { .name = old, .id = d->id };
    memcpy(gone.uuid, d->def->uuid, sizeof(gone.uuid));
    rv_driver_lifecycle_event(&rv_test_driver, &gone, RV_EVENT_UNDEFINED, RV_EVENT_UNDEFINED_RENAMED);
    emit(d, RV_EVENT_DEFINED, RV_EVENT_DEFINED_RENAMED);
    free(old);
    ret->retcode = 0;
    return 0;
}

/* The test driver's guest has nothing to reset: only the checks. */
int test_domain_reset(rv_driver_conn *c, const rv_domain_reset_args *args, rv_err *err)
{
    (void)c;
    if (check_flags(args->flags, 0, "testDomainReset", err) < 0)
        return -1;
    return running_dom(&args->dom, err) ? 0 : -1;
}

/* The image is kept as a flag, as libvirt's test driver keeps it. */
int test_domain_managed_save(rv_driver_conn *c, const rv_domain_managed_save_args *args,
                             rv_err *err)
{
    test_dom *d;
    (void)c;
    if (check_flags(args->flags, RV_DOMAIN_SAVE_BYPASS_CACHE | RV_DOMAIN_SAVE_RUNNING |
                    RV_DOMAIN_SAVE_PAUSED, "testDomainManagedSave", err) < 0 ||
        !(d = running_dom(&args->dom, err)))
        return -1;
    if (!d->persistent)
        return fail(err, RV_FROM_TEST, RV_ERR_OPERATION_INVALID, "Requested operation is not "
                    "valid: cannot do managed save for transient domain");
    d->managed_save = 1;
    test_dom_stop(d, RV_DOMAIN_SHUTOFF_SAVED, RV_EVENT_STOPPED_SAVED);
    return 0;
}

/* A small file written in one go: the loop waits for a local write of a
 * few KiB, as it waits for the XML's formatting. */
static int write_image(const char *path, const char *name, const char *xml, rv_err *err)
{
    int len = (int)strlen(xml);
    FILE *f = fopen(path, "w");
    if (!f)
        return fail(err, RV_FROM_TEST, RV_ERR_SYSTEM_ERROR,
                    "saving domain '%s' to '%s': open failed: %s", name, path, strerror(errno));
    int ok = fwrite(save_magic, sizeof(save_magic), 1, f) == 1 &&
             fwrite(&len, sizeof(len), 1, f) == 1 && fwrite(xml, (size_t)len, 1, f) == 1;
    int saved_errno = errno;
    if (fclose(f) != 0 && ok) {
        ok = 0;
        saved_errno = errno;
    }
    if (!ok) {
        unlink(path);
        return fail(err, RV_FROM_TEST, RV_ERR_SYSTEM_ERROR,
                    "saving domain '%s' to '%s': write failed: %s", name, path,
                    strerror(saved_errno));
    }
    return 0;
}

static int save(const rv_nonnull_domain *dom, const char *to, const char *dxml,
                unsigned int flags, rv_err *err)
{
    test_dom *d;
    if (check_flags(flags, 0, "testDomainSaveFlags", err) < 0)
        return -1;
    if (dxml)
        return fail(err, RV_FROM_TEST, RV_ERR_ARGUMENT_UNSUPPORTED,
                    "argument unsupported: xml modification unsupported");
    if (!(d = running_dom(dom, err)))
        return -1;
    char *xml = rv_test_def_format(d->def, d->id);
    if (!xml)
        return fail_oom(err);
    int rc = write_image(to, d->def->name, xml, err);
    free(xml);
    if (rc == 0)
        test_dom_stop(d, RV_DOMAIN_SHUTOFF_SAVED, RV_EVENT_STOPPED_SAVED);
    return rc;
}

/* libvirt's test driver writes its magic as the dump (mode 0600) and with
 * CRASH stops the domain (crashed); its words and refusals, but a format
 * it refuses is refused before the file is made, not after. */
static int core_dump(const rv_nonnull_domain *dom, const char *to, unsigned int format,
                     unsigned int flags, rv_err *err)
{
    test_dom *d;
    if (rv_driver_check_core_dump(flags, format, err) < 0 ||
        check_flags(flags, RV_DUMP_CRASH, "testDomainCoreDumpWithFormat",
                    err) < 0 ||
        !(d = running_dom(dom, err)))
        return -1;
    if (format != RV_DOMAIN_CORE_DUMP_FORMAT_RAW)
        return fail(err, RV_FROM_TEST, RV_ERR_OPERATION_UNSUPPORTED,
                    "Operation not supported: kdump-compressed format is not supported here");
    int fd = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return fail(err, RV_FROM_TEST, RV_ERR_SYSTEM_ERROR,
                    "domain '%s' coredump: failed to open %s: %s", d->def->name, to,
                    strerror(errno));
    bool ok = write(fd, save_magic, sizeof(save_magic)) == (ssize_t)sizeof(save_magic);
    int saved_errno = errno;
    if (close(fd) != 0 && ok) {
        ok = false;
        saved_errno = errno;
    }
    if (!ok) {
        unlink(to);
        return fail(err, RV_FROM_TEST, RV_ERR_SYSTEM_ERROR,
                    "domain '%s' coredump: failed to write header to %s: %s", d->def->name, to,
                    strerror(saved_errno));
    }
    if (flags & RV_DUMP_CRASH)
        test_dom_stop(d, RV_DOMAIN_SHUTOFF_CRASHED, RV_EVENT_STOPPED_CRASHED);
    return 0;
}

int test_domain_core_dump(rv_driver_conn *c, const rv_domain_core_dump_args *args, rv_err *err)
{
    (void)c;
    return core_dump(&args->dom, args->to, RV_DOMAIN_CORE_DUMP_FORMAT_RAW, args->flags, err);
}

int test_domain_core_dump_with_format(rv_driver_conn *c,
                                      const rv_domain_core_dump_with_format_args *args,
                                      rv_err *err)
{
    (void)c;
    return core_dump(&args->dom, args->to, args->dumpformat, args->flags, err);
}

int test_domain_save(rv_driver_conn *c, const rv_domain_save_args *args, rv_err *err)
{
    (void)c;
    return save(&args->dom, args->to, NULL, 0, err);
}

int test_domain_save_flags(rv_driver_conn *c, const rv_domain_save_flags_args *args,
                           rv_err *err)
{
    (void)c;
    return save(&args->dom, args->to, args->dxml ? *args->dxml : NULL, args->flags, err);
}

/* The XML of the image at path (malloc'd), or NULL with the error. */
static char *read_image(const char *path, rv_err *err)
{
    char magic[sizeof(save_magic)];
    int len;
    char *xml = NULL;
    FILE *f = fopen(path, "r");
    if (!f) {
        fail(err, RV_FROM_TEST, RV_ERR_SYSTEM_ERROR, "cannot read domain image '%s': %s",
             path, strerror(errno));
        return NULL;
    }
    errno = 0;
    if (fread(magic, sizeof(magic), 1, f) != 1 || fread(&len, sizeof(len), 1, f) != 1)
        /* at the end of the file errno stays 0: libvirtd says "Success" too */
        fail(err, RV_FROM_TEST, RV_ERR_SYSTEM_ERROR, "incomplete save header in '%s': %s",
             path, strerror(ferror(f) ? errno : 0));
    else if (memcmp(magic, save_magic, sizeof(magic)) != 0)
        fail(err, RV_FROM_TEST, RV_ERR_INTERNAL_ERROR, "internal error: mismatched header magic");
    else if (len < 1 || len > RV_STRING_MAX)
        fail(err, RV_FROM_TEST, RV_ERR_INTERNAL_ERROR,
             "internal error: length of the XML in '%s' is %d, outside 1..%d", path, len,
             RV_STRING_MAX);
    else if (!(xml = malloc((size_t)len + 1)))
        fail_oom(err);
    else if (fread(xml, (size_t)len, 1, f) != 1) {
        fail(err, RV_FROM_TEST, RV_ERR_SYSTEM_ERROR, "incomplete metadata in '%s'", path);
        free(xml);
        xml = NULL;
    } else {
        xml[len] = '\0';
    }
    fclose(f);
    return xml;
}

int test_domain_save_image_get_xml_desc(rv_driver_conn *c,
                                        const rv_domain_save_image_get_xml_desc_args *args,
                                        rv_domain_save_image_get_xml_desc_ret *ret, rv_err *err)
{
    (void)c;
    if (check_flags(args->flags, RV_DOMAIN_SAVE_IMAGE_XML_SECURE, "testDomainSaveImageGetXMLDesc",
                    err) < 0)
        return -1;
    /* The definition, inactive (the image holds the live one, with its id). */
    rv_test_def *def;
    char *xml = read_image(args->file, err);
    int rc = xml ? rv_test_def_parse(xml, &def, err) : -1;
    free(xml);
    if (rc < 0)
        return -1;
    ret->xml = rv_test_def_format(def, -1);
    rv_test_def_free(def);
    return ret->xml ? 0 : fail_oom(err);
}

/* The image's domain starts again, as a new one if it went away. */
static int restore(const char *from, const char *dxml, unsigned int flags, rv_err *err)
{
    rv_test_def *def;
    test_dom *d;
    if (check_flags(flags, 0, "testDomainRestoreFlags", err) < 0)
        return -1;
    if (dxml)
        return fail(err, RV_FROM_TEST, RV_ERR_ARGUMENT_UNSUPPORTED,
                    "argument unsupported: xml modification unsupported");
    char *xml = read_image(from, err);
    if (!xml)
        return -1;
    int rc = rv_test_def_parse(xml, &def, err);
    free(xml);
    if (rc < 0)
        return -1;
    if (!(d = dom_to_run(def, err)))
        return -1;
    dom_start_detail(d, RV_DOMAIN_RUNNING_RESTORED, RV_EVENT_STARTED_RESTORED);
    return 0;
}

int test_domain_restore(rv_driver_conn *c, const rv_domain_restore_args *args, rv_err *err)
{
    (void)c;
    return restore(args->from, NULL, 0, err);
}

int test_domain_restore_flags(rv_driver_conn *c, const rv_domain_restore_flags_args *args,
                              rv_err *err)
{
    (void)c;
    return restore(args->from, args->dxml ? *args->dxml : NULL, args->flags, err);
}

/* ================================================================ queries */

/* libvirt's test driver reports the wall clock, at microsecond grain, as
 * every domain's CPU time. */
static unsigned long long cpu_time_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (unsigned long long)ts.tv_sec * 1000000000ULL +
           (unsigned long long)(ts.tv_nsec / 1000) * 1000ULL;
}

static int test_get_info(rv_driver_conn *c, const rv_dom_ref *dom, rv_dom_info *info,
                         rv_err *err)
{
    const test_dom *d = dom_get(dom, err);
    (void)c;
    if (!d)
        return -1;
    info->state = d->state;
    info->max_mem_kib = d->def->memory_kib;
    info->memory_kib = d->def->current_memory_kib;
    info->nr_vcpu = d->def->current_vcpus;
    info->cpu_time_ns = cpu_time_ns();
    return 0;
}

static int test_get_state(rv_driver_conn *c, const rv_dom_ref *dom, unsigned int flags,
                          int *state, int *reason, rv_err *err)
{
    const test_dom *d;
    (void)c;
    if (check_flags(flags, 0, "testDomainGetState", err) < 0 || !(d = dom_get(dom, err)))
        return -1;
    *state = d->state;
    *reason = d->reason;
    return 0;
}

static int test_get_xml_desc(rv_driver_conn *c, const rv_dom_ref *dom, unsigned int flags,
                             char **xml, rv_err *err)
{
    const test_dom *d;
    (void)c;
    if (check_flags(flags, RV_DOMAIN_XML_SECURE | RV_DOMAIN_XML_INACTIVE | RV_DOMAIN_XML_MIGRATABLE,
                    "testDomainGetXMLDesc", err) < 0 || !(d = dom_get(dom, err)))
        return -1;
    int inactive = (flags & RV_DOMAIN_XML_INACTIVE) != 0;
    const rv_test_def *def = inactive && d->next_def ? d->next_def : d->def;
    *xml = rv_test_def_format(def, inactive ? -1 : d->id);
    return *xml ? 0 : fail_oom(err);
}

/* libvirt's test driver answers "linux" whatever the <os><type> says. */
static int test_get_os_type(rv_driver_conn *c, const rv_dom_ref *dom, char **type, rv_err *err)
{
    (void)c;
    if (!dom_get(dom, err))
        return -1;
    *type = strdup("linux");
    return *type ? 0 : fail_oom(err);
}

static int test_get_autostart(rv_driver_conn *c, const rv_dom_ref *dom, int *autostart,
                              rv_err *err)
{
    const test_dom *d = dom_get(dom, err);
    (void)c;
    if (!d)
        return -1;
    *autostart = d->autostart;
    return 0;
}

static int test_is_active(rv_driver_conn *c, const rv_dom_ref *dom, rv_err *err)
{
    const test_dom *d = dom_get(dom, err);
    (void)c;
    return d ? dom_active(d) : -1;
}

static int test_is_persistent(rv_driver_conn *c, const rv_dom_ref *dom, rv_err *err)
{
    const test_dom *d = dom_get(dom, err);
    (void)c;
    return d ? d->persistent : -1;
}

static int test_has_managed_save_image(rv_driver_conn *c, const rv_dom_ref *dom,
                                       unsigned int flags, rv_err *err)
{
    const test_dom *d;
    (void)c;
    if (check_flags(flags, 0, "testDomainHasManagedSaveImage", err) < 0 ||
        !(d = dom_get(dom, err)))
        return -1;
    return d->managed_save;
}

/* A running domain carries the test label, enforcing; a stopped one none. */
static int test_get_security_label(rv_driver_conn *c, const rv_dom_ref *dom, char **label,
                                   int *enforcing, rv_err *err)
{
    const test_dom *d = dom_get(dom, err);
    (void)c;
    if (!d)
        return -1;
    *label = strdup(dom_active(d) ? TEST_LABEL : "");
    *enforcing = dom_active(d);
    return *label ? 0 : fail_oom(err);
}

static int test_get_messages(rv_driver_conn *c, const rv_dom_ref *dom, unsigned int flags,
                             char ***msgs, rv_err *err)
{
    (void)c;
    *msgs = NULL;
    if (check_flags(flags, MESSAGE_ALL, "testDomainGetMessages", err) < 0 || !dom_get(dom, err))
        return -1;
    return 0;
}

/* ================================================================ stats */

static int add_int_param(rv_dom_stats *s, const char *field, int value)
{
    rv_param *p = &s->params[s->nparams];
    if (!(p->field = strdup(field)))
        return -1;
    p->type = TYPED_PARAM_INT;
    p->v.i = value;
    s->nparams++;
    return 0;
}

/* libvirt's test driver has the "state" group only. */
static int fill_stats(const test_dom *d, int want_state, rv_dom_stats *s, rv_err *err)
{
    if (ref_fill(d, &s->dom, err) < 0)
        return -1;
    if (!want_state)
        return 0;
    if (!(s->params = calloc(2, sizeof(*s->params))) ||
        add_int_param(s, "state.state", d->state) < 0 ||
        add_int_param(s, "state.reason", d->reason) < 0)
        return fail_oom(err);
    return 0;
}

/* The domains stats are asked for: the named ones still there (in the
 * order given) or all, kept when they pass the list filters. */
static int stats_targets(const rv_dom_ref *refs, size_t nrefs, unsigned int filters,
                         void ***out, size_t *n, rv_err *err)
{
    if (!refs || nrefs == 0)
        return rv_dom_list_collect(&table.doms, filters, out, n, err);
    void **doms = malloc(nrefs * sizeof(*doms));
    if (!doms)
        return fail_oom(err);
    *n = 0;
    for (size_t i = 0; i < nrefs; i++) {
        test_dom *d = rv_dom_list_find_uuid(&table.doms, refs[i].uuid);
        if (d && rv_dom_list_match(&table.doms, d, filters))
            doms[(*n)++] = d;
    }
    *out = doms;
    return 0;
}

static int test_get_all_domain_stats(rv_driver_conn *c, const rv_dom_ref *refs, size_t nrefs,
                                     unsigned int stats, unsigned int flags,
                                     rv_dom_stats **out, rv_err *err)
{
    void **doms;
    size_t n;
    (void)c;
    *out = NULL;
    if (check_flags(flags, STATS_FILTERS | STATS_NOWAIT | STATS_BACKING | STATS_ENFORCE,
                    "testConnectGetAllDomainStats", err) < 0)
        return -1;
    if ((flags & STATS_ENFORCE) && (stats & ~(unsigned int)RV_DOMAIN_STATS_STATE))
        return fail(err, RV_FROM_TEST, RV_ERR_ARGUMENT_UNSUPPORTED,
                    "argument unsupported: Stats types bits 0x%x are not supported by this "
                    "daemon", stats & ~(unsigned int)RV_DOMAIN_STATS_STATE);
    if (stats_targets(refs, nrefs, flags & STATS_FILTERS, &doms, &n, err) < 0)
        return -1;
    rv_dom_stats *result = calloc(n ? n : 1, sizeof(*result));
    int ret = result ? (int)n : fail_oom(err);
    int want_state = stats == 0 || (stats & RV_DOMAIN_STATS_STATE);
    for (size_t i = 0; result && i < n && ret >= 0; i++)
        if (fill_stats(doms[i], want_state, &result[i], err) < 0)
            ret = -1;
    free(doms);
    if (ret < 0)
        rv_dom_stats_free(result, n);
    else
        *out = result;
    return ret;
}

const test_native rv_test_native = {
    .probe = test_probe,
    .open = test_open,
    .close = test_close,
    .cleanup = test_cleanup,
    .get_type = test_get_type,
    .get_version = test_get_version,
    .get_hostname = test_get_hostname,
    .get_capabilities = test_get_capabilities,
    .node_get_info = native_node_get_info,
    .node_get_security_model = native_node_get_security_model,
    .num_of_domains = test_num_of_domains,
    .list_domain_ids = test_list_domain_ids,
    .list_all_domains = test_list_all_domains,
    .lookup_by_id = test_lookup_by_id,
    .lookup_by_name = test_lookup_by_name,
    .lookup_by_uuid = test_lookup_by_uuid,
    .define_xml = test_define_xml,
    .create_xml = test_create_xml,
    .undefine = test_undefine,
    .create = test_create,
    .destroy = test_destroy,
    .shutdown = test_shutdown,
    .reboot = test_reboot,
    .suspend = test_suspend,
    .resume = test_resume,
    .managed_save_remove = test_managed_save_remove,
    .get_info = test_get_info,
    .get_state = test_get_state,
    .get_xml_desc = test_get_xml_desc,
    .get_os_type = test_get_os_type,
    .get_autostart = test_get_autostart,
    .is_active = test_is_active,
    .is_persistent = test_is_persistent,
    .snapshot_num = test_snapshot_num,     /* test_snapshot.c */
    .has_managed_save_image = test_has_managed_save_image,
    .get_security_label = test_get_security_label,
    .get_messages = test_get_messages,
    .get_all_domain_stats = test_get_all_domain_stats,
};
