/* The QEMU driver: qemu:///session (and qemu:///system when remvirtd runs
 * as root).  Its directories, its domain table, the host it describes,
 * and its wire slots: reads answer at once from the table; state changes
 * become jobs (qemu_process.c) answered later through deferred replies. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "common/log.h"
#include "common/util.h"
#include "server/drivers/crash_point.h"
#include "server/drivers/qemu/command.h"
#include "server/drivers/qemu/qemu_driver.h"
#include "server/drivers/qemu/qemu_network.h"
#include "server/drivers/qemu/qemu_nodedev.h"
#include "server/drivers/qemu/qemu_secret.h"
#include "server/drivers/qemu/qemu_storage.h"
#include "server/drivers/qemu/qemu_checkpoint.h"
#include "server/drivers/qemu/qemu_snapshot.h"
#include "server/drivers/tune_params.h"

RV_LOG_CATEGORY("drivers.qemu");

qemu_state rv_qemu = { .doms = { .kind = &rv_qemu_dom_kind } };

/* Domains are the daemon's: a connection is only an identity (the
 * guests it started with RV_DOMAIN_START_AUTODESTROY die with it). */
struct rv_driver_conn {
    char unused;
};

#define fail(err, code, ...) rv_err_fail((err), RV_FROM_QEMU, (code), __VA_ARGS__)

static int oom(rv_err *err)
{
    return fail(err, RV_ERR_NO_MEMORY, "out of memory");
}

void rv_qemu_finish_error(rv_deferred *reply, int code, const char *fmt, ...)
{
    rv_err err = { 0 };
    va_list ap;
    va_start(ap, fmt);
    rv_err_setv(&err, RV_FROM_QEMU, code, fmt, ap);
    va_end(ap);
    rv_deferred_finish(reply, &err);
    rv_err_clear(&err);
}

bool rv_qemu_send_for(qemu_dom *d, rv_deferred *reply, const char *command, json_object *args,
                      rv_qmp_reply_fn fn, void *req)
{
    rv_err err = { 0 };
    if (rv_qmp_command(d->qmp, command, args, 0, fn, req, &err) == 0)
        return true;
    rv_deferred_finish(reply, &err);
    rv_err_clear(&err);
    return false;
}

/* ================================================================ set-up */

static char *default_dir(const char *root_dir, const char *xdg_var, const char *home_sub,
                         const char *tail)
{
    char *p = NULL;
    if (rv_qemu.privileged)
        return strdup(root_dir);
    const char *xdg = getenv(xdg_var), *home = getenv("HOME");
    if (xdg && *xdg)
        return asprintf(&p, "%s/remvirt/%s", xdg, tail) < 0 ? NULL : p;
    return asprintf(&p, "%s/%s/remvirt/%s", home ? home : "/tmp", home_sub, tail) < 0 ? NULL : p;
}

/* qemu-system-x86_64 on $PATH, else Debian's. */
static char *default_binary(void)
{
    const char *path = getenv("PATH");
    char *found = NULL;
    while (path && *path) {
        size_t len = strcspn(path, ":");
        if (len && asprintf(&found, "%.*s/qemu-system-x86_64", (int)len, path) >= 0) {
            if (access(found, X_OK) == 0)
                return found;
            free(found);
        }
        path += len + (path[len] == ':');
    }
    return strdup("/usr/bin/qemu-system-x86_64");
}

/* The binary's version, once at start-up ("QEMU emulator version 7.2.9 ..."). */
static unsigned long long probe_version(const char *binary)
{
    char *cmd = NULL;
    if (access(binary, X_OK) < 0 || asprintf(&cmd, "'%s' -version 2>/dev/null", binary) < 0)
        return 0;
    FILE *fp = strchr(binary, '\'') ? NULL : popen(cmd, "r");
    free(cmd);
    unsigned major = 0, minor = 0, micro = 0;
    char line[256];
    if (fp) {
        if (fgets(line, sizeof(line), fp))
            sscanf(line, "QEMU emulator version %u.%u.%u", &major, &minor, &micro);
        pclose(fp);
    }
    return major * 1000000ULL + minor * 1000ULL + micro;
}

void rv_qemu_init(const rv_driver_setup *setup)
{
    rv_qemu.loop = setup->loop;
    rv_qemu.privileged = geteuid() == 0;
    rv_qemu.config_dir = setup->qemu_config_dir
                             ? strdup(setup->qemu_config_dir)
                             : default_dir("/etc/remvirt/qemu", "XDG_CONFIG_HOME", ".config", "qemu");
    rv_qemu.run_dir = setup->qemu_run_dir
                          ? strdup(setup->qemu_run_dir)
                          : default_dir("/run/remvirt/qemu", "XDG_RUNTIME_DIR", ".cache", "qemu/run");
    rv_qemu.save_dir = setup->qemu_save_dir
                           ? strdup(setup->qemu_save_dir)
                           : default_dir("/var/lib/remvirt/qemu/save", "XDG_DATA_HOME", ".local/share",
                                         "qemu/save");
    rv_qemu.dump_dir = setup->qemu_dump_dir
                           ? strdup(setup->qemu_dump_dir)
                           : default_dir("/var/lib/remvirt/qemu/dump", "XDG_DATA_HOME", ".local/share",
                                         "qemu/dump");
    rv_qemu.binary = setup->qemu_binary ? strdup(setup->qemu_binary) : default_binary();
    rv_qemu.backup_tls_dir = strdup(setup->qemu_backup_tls_dir ? setup->qemu_backup_tls_dir : "/etc/pki/qemu");
    rv_qemu.backup_tls_verify = setup->qemu_backup_tls_verify;
    rv_qemu.migrate_tls_dir = strdup(setup->qemu_migrate_tls_dir ? setup->qemu_migrate_tls_dir : "/etc/pki/qemu");
    rv_qemu.migrate_tls_verify = setup->qemu_migrate_tls_verify;
    rv_qemu.migration_host = setup->qemu_migration_host ? strdup(setup->qemu_migration_host) : NULL;
    rv_qemu.migration_stall_timeout = setup->qemu_migration_stall_timeout;
    rv_qemu.migration_port_min = setup->qemu_migration_port_min > 0 ? setup->qemu_migration_port_min : 49152;
    rv_qemu.migration_port_max = setup->qemu_migration_port_max >= rv_qemu.migration_port_min
                                     ? setup->qemu_migration_port_max : rv_qemu.migration_port_min + 63;
    rv_qemu.keepalive_interval = setup->qemu_keepalive_interval;
    rv_qemu.keepalive_count = setup->qemu_keepalive_count > 0 ? setup->qemu_keepalive_count : 0;
    if (!rv_qemu.config_dir || !rv_qemu.run_dir || !rv_qemu.save_dir || !rv_qemu.dump_dir ||
        !rv_qemu.binary || !rv_qemu.backup_tls_dir || !rv_qemu.migrate_tls_dir) {
        RV_ERROR("QEMU driver: out of memory; qemu:// is not available");
        return;
    }
    rv_qemu.kvm = rv_qemu_kvm_usable();
    rv_qemu.qemu_version = probe_version(rv_qemu.binary);
    rv_qemu_domcaps_probe(rv_qemu.binary);
    RV_INFO("QEMU driver: %s (version %llu%s), %s; definitions in %s, runtime in %s",
            rv_qemu.binary, rv_qemu.qemu_version,
            rv_qemu.qemu_version ? "" : ": not found or not runnable",
            rv_qemu.kvm ? "KVM usable" : "KVM not usable: TCG only", rv_qemu.config_dir,
            rv_qemu.run_dir);
    rv_err spawner_err = { 0 };
    if (rv_qemu_spawner_init(&spawner_err) < 0)
        RV_WARN("QEMU driver: %s (tried again at each start)", spawner_err.message);
    rv_err_clear(&spawner_err);
    if (rv_qemu_store_init(&spawner_err) < 0)
        RV_WARN("QEMU driver: %s (tried again at each write)", spawner_err.message);
    rv_err_clear(&spawner_err);
    rv_crash_init();
    rv_qemu.loaded = true;
    rv_qemu_load_all();
    rv_qemu_storage_init();
    rv_qemu_network_init();
    rv_qemu_secret_init();
    rv_qemu_nwfilter_init();
    rv_qemu_cpu_kill_stale_probe();
}

void rv_qemu_cleanup(void)
{
    rv_qemu_cpu_cleanup();
    rv_qemu_spawner_cleanup();
    rv_qemu_storage_cleanup();
    rv_qemu_network_cleanup();
    rv_qemu_secret_cleanup();
    rv_qemu_nwfilter_cleanup();
    /* The guests run on: a restarted remvirtd reattaches them. */
    rv_qemu_doms_free();
    rv_qemu_snapshots_cleanup();
    rv_qemu_checkpoints_cleanup();
    rv_qemu_store_cleanup();
    rv_qemu_migrate_offline_cleanup();
    free(rv_qemu.config_dir);
    free(rv_qemu.run_dir);
    free(rv_qemu.save_dir);
    free(rv_qemu.dump_dir);
    free(rv_qemu.backup_tls_dir);
    free(rv_qemu.migrate_tls_dir);
    free(rv_qemu.migration_host);
    free(rv_qemu.binary);
    memset(&rv_qemu, 0, sizeof(rv_qemu));
    rv_qemu.doms.kind = &rv_qemu_dom_kind;
}

int rv_qemu_probe(const char *uri)
{
    return strncmp(uri, "qemu:", 5) == 0;
}

int rv_qemu_open(const char *uri, unsigned int flags, rv_driver_conn **out, rv_err *err)
{
    (void)flags;
    const char *path = uri + strlen("qemu:");
    if (strncmp(path, "///", 3) == 0)
        path += 2;
    else
        return fail(err, RV_ERR_NO_CONNECT, "no connection driver available for %s", uri);
    size_t len = strcspn(path, "?");
    bool session = len == 8 && strncmp(path, "/session", 8) == 0;
    bool system = len == 7 && strncmp(path, "/system", 7) == 0;
    if (!session && !system)
        return fail(err, RV_ERR_INTERNAL_ERROR,
                    "internal error: unexpected QEMU URI path '%.*s', try qemu:///%s", (int)len,
                    path, rv_qemu.privileged ? "system" : "session");
    if (system && !rv_qemu.privileged)
        return fail(err, RV_ERR_INTERNAL_ERROR,
                    "internal error: unexpected QEMU URI path '/system', try qemu:///session");
    if (!rv_qemu.loaded)
        return fail(err, RV_ERR_INTERNAL_ERROR,
                    "internal error: the QEMU driver could not start (see remvirtd's log)");
    rv_driver_conn *c = calloc(1, sizeof(*c));
    if (!c)
        return oom(err);
    /* CPU models are learnt at the first QEMU connection, not at start:
     * a daemon that only serves other drivers runs no probe QEMU and
     * writes nothing in the run directory. */
    rv_qemu_cpu_probe_start();
    *out = c;
    return 0;
}

void rv_qemu_close(rv_driver_conn *c)
{
    rv_qemu_migration_unlock_conn(c);
    rv_qemu_migrate_conn_closed(c);
    rv_qemu_autodestroy(c);
    free(c);
}

/* ================================================================ the host */

int rv_qemu_connect_get_type(rv_driver_conn *c, rv_connect_get_type_ret *ret, rv_err *err)
{
    (void)c;
    return (ret->type = strdup("QEMU")) ? 0 : oom(err);
}

int rv_qemu_connect_get_version(rv_driver_conn *c, rv_connect_get_version_ret *ret, rv_err *err)
{
    (void)c;
    if (!rv_qemu.qemu_version)
        return fail(err, RV_ERR_INTERNAL_ERROR, "internal error: Cannot find QEMU binary %s",
                    rv_qemu.binary);
    ret->hv_ver = rv_qemu.qemu_version;
    return 0;
}

int rv_qemu_connect_get_hostname(rv_driver_conn *c, rv_connect_get_hostname_ret *ret,
                                 rv_err *err)
{
    (void)c;
    char host[256];
    if (gethostname(host, sizeof(host) - 1) < 0)
        return fail(err, RV_ERR_SYSTEM_ERROR, "failed to determine host name: %s", strerror(errno));
    host[sizeof(host) - 1] = '\0';
    return (ret->hostname = strdup(host)) ? 0 : oom(err);
}

int rv_qemu_node_get_security_model(rv_driver_conn *c, rv_node_get_security_model_ret *ret,
                                    rv_err *err)
{
    (void)c;
    /* No security driver: libvirtd says "none", DOI "0". */
    char *model = strdup("none"), *doi = strdup("0");
    if (!model || !doi) {
        free(model);
        free(doi);
        return oom(err);
    }
    ret->model.model_val = model;
    ret->model.model_len = 5;
    ret->doi.doi_val = doi;
    ret->doi.doi_len = 2;
    return 0;
}

/* ================================================================ lists and lookups */

int rv_qemu_connect_num_of_domains(rv_driver_conn *c, rv_connect_num_of_domains_ret *ret,
                                   rv_err *err)
{
    (void)c;
    (void)err;
    ret->num = rv_dom_list_num_active(&rv_qemu.doms);
    return 0;
}

int rv_qemu_connect_list_domains(rv_driver_conn *c, const rv_connect_list_domains_args *args,
                                 rv_connect_list_domains_ret *ret, rv_err *err)
{
    (void)c;
    return rv_dom_list_ids_wire(&rv_qemu.doms, args, ret, err);
}

int rv_qemu_connect_list_all_domains(rv_driver_conn *c,
                                     const rv_connect_list_all_domains_args *args,
                                     rv_connect_list_all_domains_ret *ret, rv_err *err)
{
    (void)c;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, 0xffff, "qemuConnectListAllDomains", err) < 0)
        return -1;
    return rv_dom_list_all_wire(&rv_qemu.doms, args, ret, err);
}

int rv_qemu_domain_lookup_by_id(rv_driver_conn *c, const rv_domain_lookup_by_id_args *args,
                                rv_domain_lookup_by_id_ret *ret, rv_err *err)
{
    (void)c;
    rv_dom_ref ref = { 0 };
    return rv_dom_ref_put(rv_dom_list_lookup_id(&rv_qemu.doms, args->id, &ref, err), &ref,
                          &ret->dom);
}

int rv_qemu_domain_lookup_by_name(rv_driver_conn *c, const rv_domain_lookup_by_name_args *args,
                                  rv_domain_lookup_by_name_ret *ret, rv_err *err)
{
    (void)c;
    rv_dom_ref ref = { 0 };
    return rv_dom_ref_put(rv_dom_list_lookup_name(&rv_qemu.doms, args->name, &ref, err), &ref,
                          &ret->dom);
}

int rv_qemu_domain_lookup_by_uuid(rv_driver_conn *c, const rv_domain_lookup_by_uuid_args *args,
                                  rv_domain_lookup_by_uuid_ret *ret, rv_err *err)
{
    (void)c;
    rv_dom_ref ref = { 0 };
    return rv_dom_ref_put(rv_dom_list_lookup_uuid(&rv_qemu.doms,
                                                  (const unsigned char *)args->uuid, &ref, err),
                          &ref, &ret->dom);
}

/* ================================================================ definitions */

/* A name becomes a file name: no '/', no leading '.', printable. */
static int check_name(const char *name, rv_err *err)
{
    size_t len = strlen(name);
    bool ok = len > 0 && len <= 200 && name[0] != '.';
    for (const char *p = name; ok && *p; p++)
        ok = *p != '/' && !iscntrl((unsigned char)*p);
    if (!ok)
        return fail(err, RV_ERR_XML_ERROR,
                    "XML error: name '%s' cannot be used: a domain name must not be empty, "
                    "start with '.', or contain '/' or control characters", name);
    return 0;
}

/* A define of a name whose file is still being removed, or that a
 * rename is writing, would race with it: refused until it is over. */
static int check_removal(const char *name, rv_err *err)
{
    if (rv_qemu_def_rename_pending(name))
        return fail(err, RV_ERR_OPERATION_INVALID,
                    "Requested operation is not valid: a domain is being renamed to '%s'", name);
    if (!rv_qemu_def_removal_pending(name))
        return 0;
    return fail(err, RV_ERR_OPERATION_INVALID,
                "Requested operation is not valid: the definition of domain '%s' is still being removed",
                name);
}

static rv_qemu_domain_def *parse(const char *xml, rv_err *err)
{
    rv_qemu_domain_def *def = rv_qemu_domain_parse(xml, strlen(xml), err);
    if (def && check_name(def->name, err) < 0) {
        rv_qemu_domain_free(def);
        return NULL;
    }
    /* <vcpus> tells of a running domain's hotplugs: no definition's. */
    if (def) {
        def->boot_vcpus = 0;
        def->aliases = false;
    }
    /* libvirtd writes the emulator it will run into every definition. */
    if (def && !def->emulator && !(def->emulator = strdup(rv_qemu.binary))) {
        rv_qemu_domain_free(def);
        rv_err_set(err, RV_FROM_QEMU, RV_ERR_NO_MEMORY, "out of memory");
        return NULL;
    }
    return def;
}

/* DEFINE_XML and DEFINE_XML_FLAGS: the domain goes to ret_dom(the result). */
static int define(const char *xml, rv_nonnull_domain *(*ret_dom)(void *ret), rv_err *err)
{
    rv_qemu_domain_def *def = parse(xml, err);
    qemu_dom *d = NULL;
    if (!def || rv_qemu_dom_check_conflict(def, &d, err) < 0 ||
        (!d && check_removal(def->name, err) < 0)) {
        rv_qemu_domain_free(def);
        return -1;
    }
    bool added = !d;
    if (added && !(d = rv_qemu_dom_new(def))) {
        rv_qemu_domain_free(def);
        return oom(err);
    }
    /* Answered once the file is durable (qemu_defwrite.c). */
    rv_deferred *reply = rv_driver_defer(err);
    if (!reply) {
        rv_qemu_domain_free(def);
        if (added)
            rv_qemu_dom_forget_if_gone(d);
        return -1;
    }
    rv_err e = { 0 };
    if (rv_qemu_def_write(d, def, reply, ret_dom(rv_deferred_ret(reply)), false, &e) < 0) {
        rv_deferred_finish(reply, &e);
        if (added)
            rv_qemu_dom_forget_if_gone(d);
    }
    rv_err_clear(&e);
    return RV_DEFERRED;
}

int rv_qemu_define(const char *xml, rv_nonnull_domain *(*ret_dom)(void *ret), rv_err *err)
{
    return define(xml, ret_dom, err);
}

rv_qemu_domain_def *rv_qemu_parse_def(const char *xml, rv_err *err)
{
    return parse(xml, err);
}

static rv_nonnull_domain *define_ret_dom(void *ret)
{
    return &((rv_domain_define_xml_ret *)ret)->dom;
}

static rv_nonnull_domain *define_flags_ret_dom(void *ret)
{
    return &((rv_domain_define_xml_flags_ret *)ret)->dom;
}

int rv_qemu_domain_define_xml(rv_driver_conn *c, const rv_domain_define_xml_args *args,
                              rv_domain_define_xml_ret *ret, rv_err *err)
{
    (void)c;
    (void)ret;
    return define(args->xml, define_ret_dom, err);
}

/* VALIDATE (1): the XML is checked as it always is (remvirt has no
 * schema to check it against besides its reader). */
int rv_qemu_domain_define_xml_flags(rv_driver_conn *c, const rv_domain_define_xml_flags_args *args,
                                    rv_domain_define_xml_flags_ret *ret, rv_err *err)
{
    (void)c;
    (void)ret;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, 1, "qemuDomainDefineXMLFlags", err) < 0)
        return -1;
    return define(args->xml, define_flags_ret_dom, err);
}

int rv_qemu_connect_num_of_defined_domains(rv_driver_conn *c,
                                           rv_connect_num_of_defined_domains_ret *ret, rv_err *err)
{
    (void)c;
    return rv_dom_list_num_defined_wire(&rv_qemu.doms, ret, err);
}

int rv_qemu_connect_list_defined_domains(rv_driver_conn *c,
                                         const rv_connect_list_defined_domains_args *args,
                                         rv_connect_list_defined_domains_ret *ret, rv_err *err)
{
    (void)c;
    return rv_dom_list_defined_wire(&rv_qemu.doms, args, ret, err);
}

/* A local connection (remvirtd's end): libvirtd's QEMU driver says 1. */
int rv_qemu_connect_is_secure(rv_driver_conn *c, rv_connect_is_secure_ret *ret, rv_err *err)
{
    (void)c;
    (void)err;
    ret->secure = 1;
    return 0;
}

static int undefine(const rv_nonnull_domain *wire, unsigned int flags, rv_err *err)
{
    if (rv_qemu_check_flags(RV_FROM_QEMU, flags, RV_DOMAIN_UNDEFINE_MANAGED_SAVE | RV_DOMAIN_UNDEFINE_SNAPSHOTS_METADATA |
                            RV_DOMAIN_UNDEFINE_CHECKPOINTS_METADATA |
                            RV_DOMAIN_UNDEFINE_NVRAM | RV_DOMAIN_UNDEFINE_KEEP_NVRAM,
                            "qemuDomainUndefineFlags", err) < 0)
        return -1;
    qemu_dom *d = rv_qemu_dom_get(wire, err);
    if (!d)
        return -1;
    if (!d->def)
        return fail(err, RV_ERR_OPERATION_INVALID,
                    "Requested operation is not valid: cannot undefine transient domain");
    if (d->def_writes)
        return fail(err, RV_ERR_OPERATION_INVALID,
                    "Requested operation is not valid: the domain's definition is still being written");
    bool managed_save = rv_qemu_has_managed_save(d->def->name);
    if (managed_save && !(flags & RV_DOMAIN_UNDEFINE_MANAGED_SAVE))
        return fail(err, RV_ERR_OPERATION_INVALID,
                    "Requested operation is not valid: Refusing to undefine while domain managed save image exists");
    if (rv_qemu_snapshots_undefine(d, flags, err) < 0)
        return -1;
    if (rv_qemu_checkpoints_undefine(d, flags, err) < 0)
        return -1;
    /* Nothing goes before the definition's removal is durable; then the
     * image and the metadata (qemu_defwrite.c).  Answered when done; a
     * running domain stays, transient now, an inactive one goes then. */
    rv_deferred *reply = rv_driver_defer(err);
    if (!reply)
        return -1;
    rv_err e = { 0 };
    if (rv_qemu_def_remove(d, flags, reply, &e) < 0)
        rv_deferred_finish(reply, &e);
    rv_err_clear(&e);
    return RV_DEFERRED;
}

int rv_qemu_domain_undefine(rv_driver_conn *c, const rv_domain_undefine_args *args, rv_err *err)
{
    (void)c;
    return undefine(&args->dom, 0, err);
}

int rv_qemu_domain_undefine_flags(rv_driver_conn *c, const rv_domain_undefine_flags_args *args,
                                  rv_err *err)
{
    (void)c;
    return undefine(&args->dom, args->flags, err);
}

/* libvirtd's checks, in its order (libvirtd 9.0 renames a domain with
 * snapshots: their metadata follows); the definition is renamed on disk
 * with one commit point (rv_qemu_def_rename), and the call answered once
 * the whole rename is durable. */
int rv_qemu_domain_rename(rv_driver_conn *c, const rv_domain_rename_args *args,
                          rv_domain_rename_ret *ret, rv_err *err)
{
    (void)c;
    (void)ret;      /* retcode 0 */
    const char *name = args->new_name ? *args->new_name : NULL;
    if (rv_driver_rename_name_check(name, err) < 0 ||
        rv_qemu_check_flags(RV_FROM_QEMU, args->flags, 0, "qemuDomainRename", err) < 0)
        return -1;
    qemu_dom *d = rv_qemu_dom_get(&args->dom, err);
    if (!d)
        return -1;
    if (rv_qemu_dom_active(d))
        return fail(err, RV_ERR_OPERATION_INVALID,
                    "Requested operation is not valid: cannot rename active domain");
    if (!d->def)
        return fail(err, RV_ERR_OPERATION_INVALID,
                    "Requested operation is not valid: cannot rename a transient domain");
    if (rv_qemu_has_managed_save(d->def->name))
        return fail(err, RV_ERR_OPERATION_INVALID,
                    "Requested operation is not valid: domain with a managed saved state can't be renamed");
    if (d->def_writes)
        return fail(err, RV_ERR_OPERATION_INVALID,
                    "Requested operation is not valid: the domain's definition is still being written");
    if (strcmp(d->def->name, name) == 0)
        return rv_err_fail(err, RV_FROM_DOMAIN, RV_ERR_OPERATION_INVALID,
                           "Requested operation is not valid: Can't rename domain to itself");
    if (rv_qemu_find_name(name) || rv_qemu_def_removal_pending(name) ||
        rv_qemu_def_rename_pending(name))
        return rv_err_fail(err, RV_FROM_DOMAIN, RV_ERR_OPERATION_INVALID,
                           "Requested operation is not valid: domain with name '%s' already exists",
                           name);
    if (strchr(name, '/'))
        return fail(err, RV_ERR_XML_ERROR, "XML error: name %s cannot contain '/'", name);
    if (check_name(name, err) < 0)      /* (a file name remvirtd loads again) */
        return -1;
    rv_deferred *reply = rv_driver_defer(err);
    if (!reply)
        return -1;
    rv_err e = { 0 };
    if (rv_qemu_def_rename(d, name, reply, &e) < 0)
        rv_deferred_finish(reply, &e);
    rv_err_clear(&e);
    return RV_DEFERRED;
}

/* ================================================================ state changes: jobs */

/* Queue a job on d and defer the call to its end. */
static int defer_job_for(const rv_driver_conn *c, qemu_dom *d, qemu_job_kind kind,
                         unsigned int flags, rv_nonnull_domain *(*ret_dom)(void *ret), rv_err *err)
{
    rv_deferred *reply = rv_driver_defer(err);
    if (!reply)
        return -1;
    qemu_job *job = rv_qemu_job_add(d, kind, flags, reply,
                                    ret_dom ? ret_dom(rv_deferred_ret(reply)) : NULL);
    if (job)
        job->owner = c;
    return RV_DEFERRED;
}

static int defer_job(qemu_dom *d, qemu_job_kind kind, unsigned int flags,
                     rv_nonnull_domain *(*ret_dom)(void *ret), rv_err *err)
{
    return defer_job_for(NULL, d, kind, flags, ret_dom, err);
}

/* The guest's clock through its agent, as jobs (the agent's one
 * connection); SET_TIME's flag SYNC (1): from the guest's RTC. */
qemu_dom *rv_qemu_agent_domain(const rv_nonnull_domain *wire, rv_err *err)
{
    qemu_dom *d = rv_qemu_dom_get(wire, err);
    if (!d)
        return NULL;
    /* As libvirtd: a paused guest's agent cannot answer, so it is not asked. */
    if (!rv_qemu_dom_active(d) || d->state != RV_DOMAIN_RUNNING) {
        fail(err, RV_ERR_OPERATION_INVALID, "Requested operation is not valid: domain is not running");
        return NULL;
    }
    if (!rv_qemu_agent_configured(rv_qemu_dom_def(d))) {
        fail(err, RV_ERR_ARGUMENT_UNSUPPORTED,
             "argument unsupported: QEMU guest agent is not configured");
        return NULL;
    }
    return d;
}

int rv_qemu_domain_get_time(rv_driver_conn *c, const rv_domain_get_time_args *args,
                            rv_domain_get_time_ret *ret, rv_err *err)
{
    (void)c;
    (void)ret;
    qemu_dom *d;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, 0, "qemuDomainGetTime", err) < 0 ||
        !(d = rv_qemu_agent_domain(&args->dom, err)))
        return -1;
    return defer_job(d, QJOB_AGENT_GET_TIME, 0, NULL, err);
}

int rv_qemu_domain_set_time(rv_driver_conn *c, const rv_domain_set_time_args *args, rv_err *err)
{
    (void)c;
    const unsigned int sync = 1;         /* VIR_DOMAIN_TIME_SYNC */
    qemu_dom *d;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, sync, "qemuDomainSetTime", err) < 0)
        return -1;
    /* The agent takes nanoseconds in a long long: libvirt's bound, and
     * nanoseconds within a second (libvirt would let them spill over). */
    const long long max_seconds = (0x7fffffffffffffffLL - 999999999) / 1000000000LL;
    if (!(args->flags & sync) && (args->seconds > max_seconds || args->seconds < -max_seconds))
        return fail(err, RV_ERR_INVALID_ARG,
                    "invalid argument: Time '%lld' is too big for guest agent",
                    (long long)args->seconds);
    if (!(args->flags & sync) && args->nseconds > 999999999)
        return fail(err, RV_ERR_INVALID_ARG,
                    "invalid argument: nseconds %u is not below one second", args->nseconds);
    if (!(d = rv_qemu_agent_domain(&args->dom, err)))
        return -1;
    char ns[32];
    snprintf(ns, sizeof(ns), "%lld", (long long)args->seconds * 1000000000LL + args->nseconds);
    rv_deferred *reply = rv_driver_defer(err);
    if (!reply)
        return -1;
    rv_qemu_job_add_path(d, QJOB_AGENT_SET_TIME, 0, (args->flags & sync) ? NULL : ns, reply);
    return RV_DEFERRED;
}

rv_deferred *rv_qemu_take_live_deferred(rv_qemu_domain_def *def, qemu_dom **d, rv_err *err)
{
    if (!(*d = rv_qemu_take_live(def, err)))
        return NULL;
    rv_deferred *reply = rv_driver_defer(err);
    if (!reply) {
        rv_qemu_domain_free((*d)->live);
        (*d)->live = NULL;
        rv_qemu_dom_forget_if_gone(*d);
    }
    return reply;
}

qemu_dom *rv_qemu_take_live(rv_qemu_domain_def *def, rv_err *err)
{
    qemu_dom *d = NULL;
    if (rv_qemu_dom_check_conflict(def, &d, err) < 0)
        d = NULL;
    else if (d && (rv_qemu_dom_active(d) || d->jobs)) {
        fail(err, RV_ERR_OPERATION_INVALID,
             "Requested operation is not valid: domain '%s' is already active",
             rv_qemu_dom_def(d)->name);
        d = NULL;
    } else if (!d && !(d = rv_qemu_dom_new(def)))
        oom(err);
    if (!d) {
        rv_qemu_domain_free(def);
        return NULL;
    }
    rv_qemu_domain_free(d->live);
    d->live = def;
    return d;
}

static rv_nonnull_domain *create_with_flags_dom(void *ret)
{
    return &((rv_domain_create_with_flags_ret *)ret)->dom;
}

static rv_nonnull_domain *create_xml_dom(void *ret)
{
    return &((rv_domain_create_xml_ret *)ret)->dom;
}

static int start(const rv_driver_conn *c, const rv_nonnull_domain *wire, unsigned int flags,
                 rv_nonnull_domain *(*ret_dom)(void *ret), rv_err *err)
{
    if (rv_qemu_check_flags(RV_FROM_QEMU, flags,
                            RV_DOMAIN_START_PAUSED | RV_DOMAIN_START_AUTODESTROY |
                                RV_DOMAIN_START_FORCE_BOOT,
                            "qemuDomainCreateWithFlags", err) < 0)
        return -1;
    qemu_dom *d = rv_qemu_dom_get(wire, err);
    return d ? defer_job_for(c, d, QJOB_START, flags, ret_dom, err) : -1;
}

int rv_qemu_domain_create(rv_driver_conn *c, const rv_domain_create_args *args, rv_err *err)
{
    return start(c, &args->dom, 0, NULL, err);
}

int rv_qemu_domain_create_with_flags(rv_driver_conn *c,
                                     const rv_domain_create_with_flags_args *args,
                                     rv_domain_create_with_flags_ret *ret, rv_err *err)
{
    (void)ret;
    return start(c, &args->dom, args->flags, create_with_flags_dom, err);
}

int rv_qemu_domain_create_xml(rv_driver_conn *c, const rv_domain_create_xml_args *args,
                              rv_domain_create_xml_ret *ret, rv_err *err)
{
    (void)ret;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags,
                            RV_DOMAIN_START_PAUSED | RV_DOMAIN_START_AUTODESTROY,
                            "qemuDomainCreateXML", err) < 0)
        return -1;
    rv_qemu_domain_def *def = parse(args->xml_desc, err);
    qemu_dom *d = def ? rv_qemu_take_live(def, err) : NULL;
    if (!d)
        return -1;
    int rc = defer_job_for(c, d, QJOB_START, args->flags, create_xml_dom, err);
    if (rc < 0) {
        rv_qemu_domain_free(d->live);
        d->live = NULL;
        rv_qemu_dom_forget_if_gone(d);
    }
    return rc;
}

/* ================================================================ save and restore (qemu_save.c) */

/* RUNNING and PAUSED say how a restore leaves the guest; the same bits
 * for save (written in the image) and restore (over the image's word). */
static int check_save_flags(unsigned int flags, const char *dxml, const char *func, rv_err *err)
{
    if (rv_qemu_check_flags(RV_FROM_QEMU, flags, RV_DOMAIN_SAVE_RUNNING | RV_DOMAIN_SAVE_PAUSED, func, err) < 0)
        return -1;
    if ((flags & RV_DOMAIN_SAVE_RUNNING) && (flags & RV_DOMAIN_SAVE_PAUSED))
        return fail(err, RV_ERR_INVALID_ARG,
                    "invalid argument: running and paused flags are mutually exclusive");
    if (dxml)
        return fail(err, RV_ERR_ARGUMENT_UNSUPPORTED,
                    "argument unsupported: a replacement XML for a save image is not supported");
    return 0;
}

static int save(const rv_nonnull_domain *wire, const char *to, const char *dxml,
                unsigned int flags, const char *func, rv_err *err)
{
    if (check_save_flags(flags, dxml, func, err) < 0)
        return -1;
    if (to && !*to)
        return fail(err, RV_ERR_INVALID_ARG, "invalid argument: no file to save to");
    qemu_dom *d = rv_qemu_dom_get(wire, err);
    if (!d)
        return -1;
    rv_deferred *reply = rv_driver_defer(err);
    if (!reply)
        return -1;
    rv_qemu_job_add_path(d, QJOB_SAVE, flags, to, reply);
    return RV_DEFERRED;
}

int rv_qemu_domain_managed_save(rv_driver_conn *c, const rv_domain_managed_save_args *args,
                                rv_err *err)
{
    (void)c;
    return save(&args->dom, NULL, NULL, args->flags, "qemuDomainManagedSave", err);
}

int rv_qemu_domain_save(rv_driver_conn *c, const rv_domain_save_args *args, rv_err *err)
{
    (void)c;
    return save(&args->dom, args->to, NULL, 0, "qemuDomainSaveFlags", err);
}

int rv_qemu_domain_save_flags(rv_driver_conn *c, const rv_domain_save_flags_args *args,
                              rv_err *err)
{
    (void)c;
    return save(&args->dom, args->to, args->dxml ? *args->dxml : NULL, args->flags,
                "qemuDomainSaveFlags", err);
}

/* SAVE_PARAMS' and RESTORE_PARAMS' parameters as libvirtd reads them:
 * *file and *dxml (NULL when absent) point into params. */
static int save_params(const rv_typed_param *params, u_int n, const char **file, const char **dxml,
                       rv_err *err)
{
    static const rv_tune_field fields[] = {
        { "file", RV_TYPED_PARAM_STRING }, { "dxml", RV_TYPED_PARAM_STRING },
    };
    if (rv_tune_params_validate(params, n, fields, 2, err) < 0)
        return -1;
    const rv_typed_param *f = rv_tune_param_find(params, n, "file");
    const rv_typed_param *x = rv_tune_param_find(params, n, "dxml");
    *file = f ? f->value.rv_typed_param_value_u.s : NULL;
    *dxml = x ? x->value.rv_typed_param_value_u.s : NULL;
    return 0;
}

/* libvirt's public check of a save's or a restore's flags. */
static int save_flags_exclusive(unsigned int flags, rv_err *err)
{
    if ((flags & RV_DOMAIN_SAVE_RUNNING) && (flags & RV_DOMAIN_SAVE_PAUSED))
        return rv_err_fail(err, RV_FROM_DOMAIN, RV_ERR_INVALID_ARG,
                           "invalid argument: Flags 'VIR_DOMAIN_SAVE_RUNNING' and "
                           "'VIR_DOMAIN_SAVE_PAUSED' are mutually exclusive");
    return 0;
}

int rv_qemu_domain_save_params(rv_driver_conn *c, const rv_domain_save_params_args *args,
                               rv_err *err)
{
    (void)c;
    const char *file, *dxml;
    if (save_flags_exclusive(args->flags, err) < 0 ||
        rv_qemu_check_flags(RV_FROM_QEMU, args->flags, RV_DOMAIN_SAVE_RUNNING | RV_DOMAIN_SAVE_PAUSED,
                            "qemuDomainSaveParams", err) < 0 ||
        save_params(args->params.params_val, args->params.params_len, &file, &dxml, err) < 0)
        return -1;
    /* No file: libvirtd's managed save. */
    return save(&args->dom, file, dxml, args->flags,
                file ? "qemuDomainSaveParams" : "qemuDomainManagedSave", err);
}

/* A core dump (qemu_save.c): libvirt's public checks first (its words,
 * in the domain error domain), then the driver's. */
static int core_dump(const rv_nonnull_domain *wire, const char *to, unsigned int format,
                     unsigned int flags, rv_err *err)
{
    if (rv_driver_check_core_dump(flags, format, err) < 0 ||
        rv_qemu_check_flags(RV_FROM_QEMU, flags,
                            RV_DUMP_CRASH | RV_DUMP_LIVE | RV_DUMP_BYPASS_CACHE | RV_DUMP_RESET |
                                RV_DUMP_MEMORY_ONLY,
                            "qemuDomainCoreDumpWithFormat", err) < 0)
        return -1;
    if (!*to)
        return fail(err, RV_ERR_INVALID_ARG, "invalid argument: no file to dump to");
    qemu_dom *d = rv_qemu_dom_get_active(wire, err);
    if (!d)
        return -1;
    if (format != RV_DOMAIN_CORE_DUMP_FORMAT_RAW && !(flags & RV_DUMP_MEMORY_ONLY))
        return fail(err, RV_ERR_OPERATION_UNSUPPORTED,
                    "Operation not supported: kdump-compressed format is only supported with "
                    "memory-only dump");
    rv_deferred *reply = rv_driver_defer(err);
    if (!reply)
        return -1;
    /* (BYPASS_CACHE is a hint: the file goes through the page cache.) */
    rv_qemu_job_add_path(d, QJOB_DUMP, (flags & ~RV_DUMP_BYPASS_CACHE) | format << 24, to, reply);
    return RV_DEFERRED;
}

int rv_qemu_domain_core_dump(rv_driver_conn *c, const rv_domain_core_dump_args *args, rv_err *err)
{
    (void)c;
    return core_dump(&args->dom, args->to, RV_DOMAIN_CORE_DUMP_FORMAT_RAW, args->flags, err);
}

int rv_qemu_domain_core_dump_with_format(rv_driver_conn *c,
                                         const rv_domain_core_dump_with_format_args *args,
                                         rv_err *err)
{
    (void)c;
    return core_dump(&args->dom, args->to, args->dumpformat, args->flags, err);
}

/* The definition in the image at path (*xml malloc'd). */
static int image_xml(const char *path, unsigned int flags, const char *func, char **xml,
                     rv_err *err)
{
    if (rv_qemu_check_flags(RV_FROM_QEMU, flags, RV_DOMAIN_SAVE_IMAGE_XML_SECURE, func, err) < 0)
        return -1;
    rv_qemu_domain_def *def = NULL;
    bool was_running;
    int fd = rv_qemu_save_image_open(path, &def, &was_running, err);
    if (fd < 0)
        return -1;
    close(fd);
    *xml = rv_qemu_domain_format(def);
    rv_qemu_domain_free(def);
    return *xml ? 0 : fail(err, RV_ERR_NO_MEMORY, "out of memory");
}

int rv_qemu_domain_save_image_get_xml_desc(rv_driver_conn *c,
                                           const rv_domain_save_image_get_xml_desc_args *args,
                                           rv_domain_save_image_get_xml_desc_ret *ret, rv_err *err)
{
    (void)c;
    return image_xml(args->file, args->flags, "qemuDomainSaveImageGetXMLDesc", &ret->xml, err);
}

/* The path of dom's managed save image (malloc'd); NULL with err set when
 * it has none. */
static char *managed_image(const rv_nonnull_domain *dom, rv_err *err)
{
    qemu_dom *d = rv_qemu_dom_get(dom, err);
    if (!d)
        return NULL;
    const char *name = rv_qemu_dom_def(d)->name;
    char *path = NULL;
    if (!rv_qemu_has_managed_save(name))
        fail(err, RV_ERR_OPERATION_INVALID,
             "Requested operation is not valid: domain does not have managed save image");
    else if (!(path = rv_qemu_managed_save_path(name)))
        fail(err, RV_ERR_NO_MEMORY, "out of memory");
    return path;
}

int rv_qemu_domain_managed_save_get_xml_desc(rv_driver_conn *c,
                                             const rv_domain_managed_save_get_xml_desc_args *args,
                                             rv_domain_managed_save_get_xml_desc_ret *ret,
                                             rv_err *err)
{
    (void)c;
    char *path = managed_image(&args->dom, err);
    if (!path)
        return -1;
    int rc = image_xml(path, args->flags, "qemuDomainManagedSaveGetXMLDesc", &ret->xml, err);
    free(path);
    return rc;
}

int rv_qemu_domain_save_image_define_xml(rv_driver_conn *c,
                                         const rv_domain_save_image_define_xml_args *args, rv_err *err)
{
    (void)c;
    return rv_qemu_save_image_define(args->file, args->dxml, args->flags, err);
}

int rv_qemu_domain_managed_save_define_xml(rv_driver_conn *c,
                                           const rv_domain_managed_save_define_xml_args *args,
                                           rv_err *err)
{
    (void)c;
    char *path = managed_image(&args->dom, err);
    if (!path)
        return -1;
    int rc = rv_qemu_save_image_define(path, args->dxml ? *args->dxml : NULL, args->flags, err);
    free(path);
    return rc;
}

/* The image names its domain: that one (defined, inactive) or a new
 * transient one starts from it. */
static int restore(const char *from, const char *dxml, unsigned int flags, const char *func,
                   rv_err *err)
{
    if (check_save_flags(flags, dxml, func, err) < 0)
        return -1;
    rv_qemu_domain_def *def = NULL;
    bool was_running;
    int fd = rv_qemu_save_image_open(from, &def, &was_running, err);
    if (fd < 0)
        return -1;
    close(fd);
    if (check_name(def->name, err) < 0) {
        rv_qemu_domain_free(def);
        return -1;
    }
    /* The start reads the image again and runs its definition. */
    qemu_dom *d;
    rv_deferred *reply = rv_qemu_take_live_deferred(def, &d, err);
    if (!reply)
        return -1;
    unsigned int start_flags = (flags & RV_DOMAIN_SAVE_PAUSED ? RV_DOMAIN_START_PAUSED : 0) |
                               (flags & RV_DOMAIN_SAVE_RUNNING ? QJOB_RESTORE_RUNNING : 0);
    rv_qemu_job_add_path(d, QJOB_START, start_flags, from, reply);
    return RV_DEFERRED;
}

int rv_qemu_domain_restore(rv_driver_conn *c, const rv_domain_restore_args *args, rv_err *err)
{
    (void)c;
    return restore(args->from, NULL, 0, "qemuDomainRestoreFlags", err);
}

int rv_qemu_domain_restore_flags(rv_driver_conn *c, const rv_domain_restore_flags_args *args,
                                 rv_err *err)
{
    (void)c;
    return restore(args->from, args->dxml ? *args->dxml : NULL, args->flags,
                   "qemuDomainRestoreFlags", err);
}

int rv_qemu_domain_restore_params(rv_driver_conn *c, const rv_domain_restore_params_args *args,
                                  rv_err *err)
{
    (void)c;
    const char *file, *dxml;
    if (save_flags_exclusive(args->flags, err) < 0 ||
        save_params(args->params.params_val, args->params.params_len, &file, &dxml, err) < 0)
        return -1;
    if (!file)
        return fail(err, RV_ERR_INVALID_ARG, "invalid argument: missing path to restore from");
    return restore(file, dxml, args->flags, "qemuDomainRestoreInternal", err);
}

int rv_qemu_domain_managed_save_remove(rv_driver_conn *c,
                                       const rv_domain_managed_save_remove_args *args,
                                       rv_err *err)
{
    (void)c;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, 0, "qemuDomainManagedSaveRemove", err) < 0)
        return -1;
    qemu_dom *d = rv_qemu_dom_get(&args->dom, err);
    if (!d)
        return -1;
    char *image = rv_qemu_managed_save_path(rv_qemu_dom_def(d)->name);
    if (!image)
        return oom(err);
    int rc = unlink(image) < 0 ? fail(err, RV_ERR_SYSTEM_ERROR,
                                      "Failed to remove managed save file '%s': %s", image,
                                      strerror(errno))
                               : 0;
    free(image);
    return rc;
}

#define DOM_JOB(fn, args_type, kind, flags_expr, known, func)                           \
    int rv_qemu_##fn(rv_driver_conn *c, const args_type *args, rv_err *err)             \
    {                                                                                    \
        (void)c;                                                                         \
        unsigned int flags = flags_expr;                                                 \
        if (rv_qemu_check_flags(RV_FROM_QEMU, flags, known, func, err) < 0)             \
            return -1;                                                                   \
        qemu_dom *d = rv_qemu_dom_get(&args->dom, err);                                  \
        return d ? defer_job(d, kind, flags, NULL, err) : -1;                            \
    }
DOM_JOB(domain_destroy, rv_domain_destroy_args, QJOB_DESTROY, 0, 0, "qemuDomainDestroy")
DOM_JOB(domain_destroy_flags, rv_domain_destroy_flags_args, QJOB_DESTROY, args->flags,
        RV_DOMAIN_DESTROY_GRACEFUL | RV_DOMAIN_DESTROY_REMOVE_LOGS, "qemuDomainDestroyFlags")
DOM_JOB(domain_suspend, rv_domain_suspend_args, QJOB_SUSPEND, 0, 0, "qemuDomainSuspend")
DOM_JOB(domain_resume, rv_domain_resume_args, QJOB_RESUME, 0, 0, "qemuDomainResume")
DOM_JOB(domain_shutdown, rv_domain_shutdown_args, QJOB_SHUTDOWN, 0, 0, "qemuDomainShutdown")
DOM_JOB(domain_reset, rv_domain_reset_args, QJOB_RESET, args->flags, 0, "qemuDomainReset")
#undef DOM_JOB

/* Shutdown and reboot by ACPI (flag 1, or none) or the guest agent (2,
 * qemu_agent.c).  Both flags: the agent when configured, and ACPI when
 * it is not or when the agent fails (libvirtd's order). */
static int power_job(const rv_nonnull_domain *wire, qemu_job_kind kind, unsigned int flags,
                     const char *func, rv_err *err)
{
    const unsigned int acpi = 1, agent = 2;
    if (rv_qemu_check_flags(RV_FROM_QEMU, flags, acpi | agent, func, err) < 0)
        return -1;
    qemu_dom *d = rv_qemu_dom_get(wire, err);
    if (!d)
        return -1;
    if ((flags & agent) && !rv_qemu_agent_configured(rv_qemu_dom_def(d))) {
        if (!(flags & acpi))
            return fail(err, RV_ERR_ARGUMENT_UNSUPPORTED,
                        "argument unsupported: QEMU guest agent is not configured");
        flags &= ~agent;
    }
    return defer_job(d, kind, flags, NULL, err);
}

int rv_qemu_domain_shutdown_flags(rv_driver_conn *c, const rv_domain_shutdown_flags_args *args,
                                  rv_err *err)
{
    (void)c;
    return power_job(&args->dom, QJOB_SHUTDOWN, args->flags, "qemuDomainShutdownFlags", err);
}

int rv_qemu_domain_reboot(rv_driver_conn *c, const rv_domain_reboot_args *args, rv_err *err)
{
    (void)c;
    return power_job(&args->dom, QJOB_REBOOT, args->flags, "qemuDomainReboot", err);
}

/* From the guest agent (flags 0 or AGENT); a job, so that it takes its
 * turn on the agent's one connection. */
int rv_qemu_domain_get_hostname(rv_driver_conn *c, const rv_domain_get_hostname_args *args,
                                rv_domain_get_hostname_ret *ret, rv_err *err)
{
    (void)c;
    (void)ret;
    const unsigned int lease = 1, agent = 2;     /* VIR_DOMAIN_GET_HOSTNAME_* */
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, lease | agent, "qemuDomainGetHostname", err) < 0)
        return -1;
    if (args->flags & lease)
        return fail(err, RV_ERR_ARGUMENT_UNSUPPORTED,
                    "argument unsupported: the host name from DHCP leases is not supported");
    qemu_dom *d = rv_qemu_dom_get_running(&args->dom, err);
    if (!d)
        return -1;
    if (!rv_qemu_agent_configured(rv_qemu_dom_def(d)))
        return fail(err, RV_ERR_ARGUMENT_UNSUPPORTED,
                    "argument unsupported: QEMU guest agent is not configured");
    return defer_job(d, QJOB_AGENT_HOSTNAME, 0, NULL, err);
}

/* ================================================================ reads: never wait */

int rv_qemu_domain_get_info(rv_driver_conn *c, const rv_domain_get_info_args *args,
                            rv_domain_get_info_ret *ret, rv_err *err)
{
    (void)c;
    qemu_dom *d = rv_qemu_dom_get(&args->dom, err);
    if (!d)
        return -1;
    const rv_qemu_domain_def *def = rv_qemu_dom_def(d);
    bool active = rv_qemu_dom_active(d);
    ret->state = (u_char)(active ? d->state : RV_DOMAIN_SHUTOFF);
    ret->maxMem = def->memory_kib;
    /* As libvirtd: an inactive domain's memory is its currentMemory. */
    ret->memory = active ? rv_qemu_dom_memory_kib(d) : def->current_memory_kib;
    ret->nrVirtCpu = (u_short)rv_qemu_def_vcpus(def);
    ret->cpuTime = rv_qemu_dom_cpu_time_ns(d);
    return 0;
}

int rv_qemu_domain_get_state(rv_driver_conn *c, const rv_domain_get_state_args *args,
                             rv_domain_get_state_ret *ret, rv_err *err)
{
    (void)c;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, 0, "qemuDomainGetState", err) < 0)
        return -1;
    qemu_dom *d = rv_qemu_dom_get(&args->dom, err);
    if (!d)
        return -1;
    ret->state = d->state;
    ret->reason = d->reason;
    return 0;
}

/* The XML with the running domain's id on its root element. */
static char *live_xml(const qemu_dom *d, const rv_qemu_domain_def *def)
{
    char *xml = rv_qemu_domain_format(def);
    if (!xml || !rv_qemu_dom_active(d) || def != d->live || strncmp(xml, "<domain ", 8) != 0)
        return xml;
    /* After type='...', before an xmlns:qemu, as libvirtd writes it. */
    const char *type_end = strchr(xml + strlen("<domain type='"), '\'');
    char *end = type_end ? (char *)type_end + 1 : strchr(xml, '>'), *out = NULL;
    if (asprintf(&out, "%.*s id='%d'%s", (int)(end - xml), xml, d->id, end) < 0)
        out = NULL;
    free(xml);
    return out;
}

int rv_qemu_domain_get_xml_desc(rv_driver_conn *c, const rv_domain_get_xml_desc_args *args,
                                rv_domain_get_xml_desc_ret *ret, rv_err *err)
{
    (void)c;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, RV_DOMAIN_XML_SECURE | RV_DOMAIN_XML_INACTIVE | 0x4 | 0x8,
                            "qemuDomainGetXMLDesc", err) < 0)
        return -1;
    qemu_dom *d = rv_qemu_dom_get(&args->dom, err);
    if (!d)
        return -1;
    const rv_qemu_domain_def *def =
        (args->flags & RV_DOMAIN_XML_INACTIVE) && d->def ? d->def : rv_qemu_dom_def(d);
    if (!(ret->xml = live_xml(d, def)))
        return oom(err);
    return rv_string_result(0, &ret->xml, err);
}

int rv_qemu_domain_get_os_type(rv_driver_conn *c, const rv_domain_get_os_type_args *args,
                               rv_domain_get_os_type_ret *ret, rv_err *err)
{
    (void)c;
    if (!rv_qemu_dom_get(&args->dom, err))
        return -1;
    return (ret->type = strdup("hvm")) ? 0 : oom(err);
}

/* libvirtd lists a domain's taints and deprecated devices here: remvirtd
 * has the one taint, custom-argv (a running guest with <qemu:commandline>),
 * and no deprecation list.  Flags 0 mean both kinds. */
int rv_qemu_domain_get_messages(rv_driver_conn *c, const rv_domain_get_messages_args *args,
                                rv_domain_get_messages_ret *ret, rv_err *err)
{
    (void)c;
    if (rv_driver_check_flags(RV_FROM_QEMU, args->flags,
                              RV_DOMAIN_MESSAGE_DEPRECATION | RV_DOMAIN_MESSAGE_TAINTING,
                              "qemuDomainGetMessages", err) < 0)
        return -1;
    qemu_dom *d = rv_qemu_dom_get(&args->dom, err);
    if (!d)
        return -1;
    bool tainting = !args->flags || (args->flags & RV_DOMAIN_MESSAGE_TAINTING);
    if (!tainting || !d->live || !rv_qemu_dom_active(d) || !rv_qemu_def_tainted(d->live))
        return 0;
    char **msgs = calloc(1, sizeof(*msgs));
    if (!msgs || !(msgs[0] = strdup("tainted: custom configuration parameters specified"))) {
        free(msgs);
        return oom(err);
    }
    ret->msgs.msgs_val = msgs;
    ret->msgs.msgs_len = 1;
    return 0;
}

int rv_qemu_domain_get_autostart(rv_driver_conn *c, const rv_domain_get_autostart_args *args,
                                 rv_domain_get_autostart_ret *ret, rv_err *err)
{
    (void)c;
    qemu_dom *d = rv_qemu_dom_get(&args->dom, err);
    if (!d)
        return -1;
    ret->autostart = d->autostart;
    return 0;
}

int rv_qemu_domain_set_autostart(rv_driver_conn *c, const rv_domain_set_autostart_args *args,
                                 rv_err *err)
{
    (void)c;
    qemu_dom *d = rv_qemu_dom_get(&args->dom, err);
    if (!d)
        return -1;
    if (!d->def)
        return fail(err, RV_ERR_OPERATION_INVALID,
                    "Requested operation is not valid: cannot set autostart for transient domain");
    bool on = args->autostart != 0;
    if (rv_qemu_set_autostart_link(d->def->name, on, err) < 0)
        return -1;
    d->autostart = on;
    return 0;
}

int rv_qemu_domain_is_active(rv_driver_conn *c, const rv_domain_is_active_args *args,
                             rv_domain_is_active_ret *ret, rv_err *err)
{
    (void)c;
    qemu_dom *d = rv_qemu_dom_get(&args->dom, err);
    if (!d)
        return -1;
    ret->active = rv_qemu_dom_active(d);
    return 0;
}

int rv_qemu_domain_is_persistent(rv_driver_conn *c, const rv_domain_is_persistent_args *args,
                                 rv_domain_is_persistent_ret *ret, rv_err *err)
{
    (void)c;
    qemu_dom *d = rv_qemu_dom_get(&args->dom, err);
    if (!d)
        return -1;
    ret->persistent = d->def != NULL;
    return 0;
}

int rv_qemu_domain_has_managed_save_image(rv_driver_conn *c,
                                          const rv_domain_has_managed_save_image_args *args,
                                          rv_domain_has_managed_save_image_ret *ret, rv_err *err)
{
    (void)c;
    qemu_dom *d = rv_qemu_dom_get(&args->dom, err);
    if (!d)
        return -1;
    ret->result = d->def && rv_qemu_has_managed_save(d->def->name);
    return 0;
}

