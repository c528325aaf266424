/* libvirt's client library for the benchmarks, loaded with dlopen so that
 * building remvirt never needs libvirt-dev: the few entry points they call,
 * typed as libvirt's public header declares them (its opaque pointers are
 * void * here).  Header-only: each benchmark is one program. */
#ifndef RV_BENCH_LIBVIRT_DL_H
#define RV_BENCH_LIBVIRT_DL_H

#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

/* virDomainInfo as libvirt's public header lays it out. */
typedef struct lv_domain_info {
    unsigned char state;
    unsigned long max_mem;
    unsigned long memory;
    unsigned short nr_virt_cpu;
    unsigned long long cpu_time;
} lv_domain_info;

typedef struct libvirt_api {
    void *(*connect_open)(const char *uri);
    int (*connect_close)(void *conn);
    void *(*domain_lookup_by_name)(void *conn, const char *name);
    int (*domain_get_info)(void *dom, lv_domain_info *info);
    void *(*domain_define_xml)(void *conn, const char *xml);
    int (*domain_create)(void *dom);
    int (*domain_destroy)(void *dom);
    int (*domain_undefine)(void *dom);
    int (*domain_free)(void *dom);
    int (*domain_get_state)(void *dom, int *state, int *reason, unsigned int flags);
    /* doms: NULL-terminated; *records freed with stats_record_list_free. */
    int (*domain_list_get_stats)(void **doms, unsigned int stats, void ***records,
                                 unsigned int flags);
    void (*stats_record_list_free)(void **records);
    const char *(*get_last_error_message)(void);
    void (*set_error_func)(void *user_data, void (*handler)(void *user_data, void *error));
} libvirt_api;

static void *libvirt_sym(void *lib, const char *name)
{
    void *sym = dlsym(lib, name);
    if (!sym) {
        fprintf(stderr, "libvirt.so.0 has no %s: %s\n", name, dlerror());
        exit(1);
    }
    return sym;
}

/* The default handler prints every error, including a benchmark's expected
 * failed lookup of a domain not yet defined; the benchmarks report their
 * own. */
static void libvirt_quiet_errors(void *user_data, void *error)
{
    (void)user_data;
    (void)error;
}

/* false when libvirt's client library is not installed.  Errors are
 * silenced (see libvirt_quiet_errors); the library stays loaded. */
static inline bool libvirt_load(libvirt_api *api)
{
    void *lib = dlopen("libvirt.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        return false;
    api->connect_open = (void *(*)(const char *))libvirt_sym(lib, "virConnectOpen");
    api->connect_close = (int (*)(void *))libvirt_sym(lib, "virConnectClose");
    api->domain_lookup_by_name =
        (void *(*)(void *, const char *))libvirt_sym(lib, "virDomainLookupByName");
    api->domain_get_info =
        (int (*)(void *, lv_domain_info *))libvirt_sym(lib, "virDomainGetInfo");
    api->domain_define_xml =
        (void *(*)(void *, const char *))libvirt_sym(lib, "virDomainDefineXML");
    api->domain_create = (int (*)(void *))libvirt_sym(lib, "virDomainCreate");
    api->domain_destroy = (int (*)(void *))libvirt_sym(lib, "virDomainDestroy");
    api->domain_undefine = (int (*)(void *))libvirt_sym(lib, "virDomainUndefine");
    api->domain_free = (int (*)(void *))libvirt_sym(lib, "virDomainFree");
    api->domain_get_state = (int (*)(void *, int *, int *, unsigned int))
        libvirt_sym(lib, "virDomainGetState");
    api->domain_list_get_stats = (int (*)(void **, unsigned int, void ***, unsigned int))
        libvirt_sym(lib, "virDomainListGetStats");
    api->stats_record_list_free = (void (*)(void **))
        libvirt_sym(lib, "virDomainStatsRecordListFree");
    api->get_last_error_message =
        (const char *(*)(void))libvirt_sym(lib, "virGetLastErrorMessage");
    api->set_error_func = (void (*)(void *, void (*)(void *, void *)))
        libvirt_sym(lib, "virSetErrorFunc");
    api->set_error_func(NULL, libvirt_quiet_errors);
    return true;
}

#endif
