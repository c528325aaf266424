/* The drivers' shared domain list (server/drivers/conf/domlist.h) with
 * objects of the test's own: lookups by UUID, name and ID (hidden objects
 * not found), libvirt's clash errors, list-all filters and order, the
 * errors of a terse kind (libvirt's test driver) and of a verbose one
 * (its QEMU driver), removal, and many domains through the hash tables. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/drivers/conf/domlist.h"
#include "tests/unit/check.h"

typedef struct obj {
    char name[32];
    unsigned char uuid[16];
    int id;                 /* -1: inactive */
    int state;
    bool persistent, autostart, hidden;
} obj;

static const char *obj_name(const void *o)
{
    return ((const obj *)o)->hidden ? NULL : ((const obj *)o)->name;
}

static const unsigned char *obj_uuid(const void *o)
{
    return ((const obj *)o)->hidden ? NULL : ((const obj *)o)->uuid;
}

static int obj_id(const void *o)
{
    return ((const obj *)o)->id;
}

static void obj_status(const void *o, rv_dom_status *st)
{
    const obj *x = o;
    st->active = x->id >= 0;
    st->state = x->state;
    st->persistent = x->persistent;
    st->autostart = x->autostart;
}

/* A define not yet durable: not shown, but a new definition must agree. */
static bool obj_defined(const void *o)
{
    return ((const obj *)o)->persistent;
}

static const rv_dom_kind pending = {
    .from = RV_FROM_QEMU, .name_of = obj_name, .uuid_of = obj_uuid, .status_of = obj_status,
    .id_of = obj_id, .defined = obj_defined,
};
static const rv_dom_kind terse = {
    .from = RV_FROM_TEST, .terse_not_found = true, .name_of = obj_name, .uuid_of = obj_uuid,
    .status_of = obj_status, .id_of = obj_id,
};
static const rv_dom_kind verbose = {
    .from = RV_FROM_QEMU, .name_of = obj_name, .uuid_of = obj_uuid, .status_of = obj_status,
    .id_of = obj_id,
};

static obj *make(rv_dom_list *l, const char *name, unsigned char tag, int id, bool persistent)
{
    obj *o = calloc(1, sizeof(*o));
    rv_err err = { 0 };
    CHECK(o);
    snprintf(o->name, sizeof(o->name), "%s", name);
    memset(o->uuid, tag, 16);
    o->id = id;
    o->state = id >= 0 ? RV_DOMAIN_RUNNING : RV_DOMAIN_SHUTOFF;
    o->persistent = persistent;
    CHECK_INT_EQ(rv_dom_list_add(l, o, o->name, o->uuid, &err), 0);
    return o;
}

static void free_obj(void *o)
{
    free(o);
}

static void check_err(const rv_err *err, int from, int code, const char *text)
{
    CHECK_INT_EQ(err->domain, from);
    CHECK_INT_EQ(err->code, code);
    CHECK_STR_EQ(err->message, text);
}

static void test_lookups(void)
{
    rv_dom_list l = { .kind = &verbose };
    rv_err err = { 0 };
    rv_dom_ref ref = { 0 };
    unsigned char u[16];
    obj *a = make(&l, "a", 0xaa, 3, true), *b = make(&l, "b", 0xbb, -1, true);
    (void)b;
    CHECK(rv_dom_list_find_name(&l, "a") == a);
    CHECK(rv_dom_list_find_uuid(&l, a->uuid) == a);
    CHECK(rv_dom_list_find_id(&l, 3) == a);
    CHECK(rv_dom_list_find_id(&l, -1) == NULL);
    CHECK_INT_EQ(rv_dom_list_lookup_name(&l, "b", &ref, &err), 0);
    CHECK_STR_EQ(ref.name, "b");
    CHECK_INT_EQ(ref.id, -1);
    rv_dom_ref_clear(&ref);

    /* libvirt's QEMU driver names what it looked for. */
    CHECK_INT_EQ(rv_dom_list_lookup_name(&l, "nope", &ref, &err), -1);
    check_err(&err, RV_FROM_QEMU, RV_ERR_NO_DOMAIN,
              "Domain not found: no domain with matching name 'nope'");
    rv_err_clear(&err);
    CHECK_INT_EQ(rv_dom_list_lookup_id(&l, 7, &ref, &err), -1);
    check_err(&err, RV_FROM_QEMU, RV_ERR_NO_DOMAIN,
              "Domain not found: no domain with matching id 7");
    rv_err_clear(&err);
    memset(u, 0x11, 16);
    CHECK_INT_EQ(rv_dom_list_lookup_uuid(&l, u, &ref, &err), -1);
    check_err(&err, RV_FROM_QEMU, RV_ERR_NO_DOMAIN, "Domain not found: no domain with matching "
              "uuid '11111111-1111-1111-1111-111111111111'");
    rv_err_clear(&err);
    /* An ID below 0 is libvirt's API error, whatever the driver. */
    CHECK_INT_EQ(rv_dom_list_lookup_id(&l, -1, &ref, &err), -1);
    check_err(&err, RV_FROM_DOMAIN, RV_ERR_INVALID_ARG,
              "id in virDomainLookupByID must be zero or greater");
    rv_err_clear(&err);
    CHECK(rv_dom_list_get(&l, u, "x", &err) == NULL);
    check_err(&err, RV_FROM_QEMU, RV_ERR_NO_DOMAIN, "Domain not found: no domain with matching "
              "uuid '11111111-1111-1111-1111-111111111111' (x)");
    rv_err_clear(&err);

    /* A hidden object (on its way out) is found by no lookup. */
    a->hidden = true;
    CHECK(rv_dom_list_find_name(&l, "a") == NULL);
    CHECK(rv_dom_list_find_uuid(&l, (unsigned char[16]){ [0 ... 15] = 0xaa }) == NULL);
    CHECK(rv_dom_list_find_id(&l, 3) == NULL);
    CHECK_INT_EQ(rv_dom_list_num_active(&l), 0);
    CHECK_UINT_EQ(rv_dom_list_size(&l), 2);
    rv_dom_list_remove(&l, a);          /* found without its keys */
    free(a);
    CHECK_UINT_EQ(rv_dom_list_size(&l), 1);
    rv_dom_list_clear(&l, free_obj);

    /* libvirt's test driver says no more. */
    rv_dom_list t = { .kind = &terse };
    make(&t, "c", 0xcc, -1, true);
    CHECK_INT_EQ(rv_dom_list_lookup_name(&t, "nope", &ref, &err), -1);
    check_err(&err, RV_FROM_TEST, RV_ERR_NO_DOMAIN, "Domain not found");
    rv_err_clear(&err);
    rv_dom_list_clear(&t, free_obj);
}

static void test_clash(void)
{
    rv_dom_list l = { .kind = &terse };
    rv_err err = { 0 };
    void *same = NULL;
    unsigned char other[16];
    obj *a = make(&l, "a", 0xaa, -1, true);
    memset(other, 0x12, 16);
    CHECK_INT_EQ(rv_dom_list_check_clash(&l, "a", a->uuid, &same, &err), 0);
    CHECK(same == a);
    CHECK_INT_EQ(rv_dom_list_check_clash(&l, "new", other, &same, &err), 0);
    CHECK(same == NULL);
    CHECK_INT_EQ(rv_dom_list_check_clash(&l, "b", a->uuid, &same, &err), -1);
    check_err(&err, RV_FROM_DOMAIN, RV_ERR_OPERATION_FAILED, "operation failed: domain 'a' is "
              "already defined with uuid aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa");
    rv_err_clear(&err);
    CHECK_INT_EQ(rv_dom_list_check_clash(&l, "a", other, &same, &err), -1);
    check_err(&err, RV_FROM_DOMAIN, RV_ERR_OPERATION_FAILED, "operation failed: domain 'a' "
              "already exists with uuid aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa");
    rv_err_clear(&err);
    rv_dom_list_clear(&l, free_obj);

    /* A hidden object the kind says is defined still clashes; one that
     * is not defined does not (the QEMU driver's queued defines). */
    rv_dom_list p = { .kind = &pending };
    obj *q = make(&p, "q", 0x33, -1, true), *gone = make(&p, "gone", 0x44, -1, false);
    q->hidden = gone->hidden = true;
    CHECK(rv_dom_list_find_name(&p, "q") == NULL);
    CHECK_INT_EQ(rv_dom_list_check_clash(&p, "q", other, &same, &err), -1);
    check_err(&err, RV_FROM_DOMAIN, RV_ERR_OPERATION_FAILED, "operation failed: domain 'q' "
              "already exists with uuid 33333333-3333-3333-3333-333333333333");
    rv_err_clear(&err);
    CHECK_INT_EQ(rv_dom_list_check_clash(&p, "q", q->uuid, &same, &err), 0);
    CHECK(same == q);
    CHECK_INT_EQ(rv_dom_list_check_clash(&p, "gone", other, &same, &err), 0);
    CHECK(same == NULL);
    rv_dom_list_clear(&p, free_obj);
}

/* The names list-all gives for flags, joined by spaces. */
static char *names(const rv_dom_list *l, unsigned int flags)
{
    rv_dom_ref *refs;
    rv_err err = { 0 };
    int n = rv_dom_list_all(l, flags, &refs, &err);
    static char out[256];
    CHECK(n >= 0);
    out[0] = '\0';
    for (int i = 0; i < n; i++) {
        strcat(out, i ? " " : "");
        strcat(out, refs[i].name);
    }
    rv_dom_refs_free(refs, (size_t)n);
    return out;
}

static void test_filters(void)
{
    rv_dom_list l = { .kind = &verbose };
    make(&l, "zeta", 1, 5, true);
    make(&l, "alpha", 2, 9, false);
    make(&l, "mid", 3, -1, true)->autostart = true;
    make(&l, "beta", 4, -1, true);
    obj *p = make(&l, "paused", 5, 2, true);
    p->state = RV_DOMAIN_PAUSED;
    /* Running (and paused) by ID, then the others by name. */
    CHECK_STR_EQ(names(&l, 0), "paused zeta alpha beta mid");
    CHECK_STR_EQ(names(&l, RV_LIST_DOMAINS_ACTIVE), "paused zeta alpha");
    CHECK_STR_EQ(names(&l, RV_LIST_DOMAINS_INACTIVE), "beta mid");
    CHECK_STR_EQ(names(&l, RV_LIST_DOMAINS_ACTIVE | RV_LIST_DOMAINS_INACTIVE),
                 "paused zeta alpha beta mid");
    CHECK_STR_EQ(names(&l, RV_LIST_DOMAINS_TRANSIENT), "alpha");
    CHECK_STR_EQ(names(&l, RV_LIST_DOMAINS_AUTOSTART), "mid");
    CHECK_STR_EQ(names(&l, RV_LIST_DOMAINS_PAUSED), "paused");
    CHECK_STR_EQ(names(&l, RV_LIST_DOMAINS_PAUSED | RV_LIST_DOMAINS_SHUTOFF), "paused beta mid");
    CHECK_STR_EQ(names(&l, RV_LIST_DOMAINS_RUNNING | RV_LIST_DOMAINS_PERSISTENT), "zeta");
    CHECK_STR_EQ(names(&l, RV_LIST_DOMAINS_HAS_SNAPSHOT), "");
    CHECK_STR_EQ(names(&l, RV_LIST_DOMAINS_HAS_SNAPSHOT | RV_LIST_DOMAINS_NO_SNAPSHOT),
                 "paused zeta alpha beta mid");
    int ids[8];
    rv_err err = { 0 };
    CHECK_INT_EQ(rv_dom_list_ids(&l, ids, 8, &err), 3);
    CHECK_INT_EQ(ids[0], 2);
    CHECK_INT_EQ(ids[1], 5);
    CHECK_INT_EQ(ids[2], 9);
    CHECK_INT_EQ(rv_dom_list_ids(&l, ids, 1, &err), 1);
    CHECK_INT_EQ(rv_dom_list_ids(&l, ids, -1, &err), -1);
    check_err(&err, RV_FROM_DOMAIN, RV_ERR_INVALID_ARG,
              "maxids in virConnectListDomains must be zero or greater");
    rv_err_clear(&err);
    CHECK_INT_EQ(rv_dom_list_num_active(&l), 3);
    rv_dom_list_clear(&l, free_obj);
}

/* Enough domains to grow the tables several times; every one is found
 * after each removal of another. */
static void test_many(void)
{
    enum { N = 3000 };
    rv_dom_list l = { .kind = &terse };
    obj **all = calloc(N, sizeof(*all));
    CHECK(all);
    for (int i = 0; i < N; i++) {
        char name[32];
        snprintf(name, sizeof(name), "d%d", i);
        all[i] = make(&l, name, 0, i % 2 ? i : -1, true);
        memcpy(all[i]->uuid, &i, sizeof(i));
        /* The key the list holds is the one given at add: redo it. */
        rv_dom_list_remove(&l, all[i]);
        rv_err err = { 0 };
        CHECK_INT_EQ(rv_dom_list_add(&l, all[i], all[i]->name, all[i]->uuid, &err), 0);
    }
    for (int i = 0; i < N; i += 2) {
        rv_dom_list_remove(&l, all[i]);
        free(all[i]);
    }
    CHECK_UINT_EQ(rv_dom_list_size(&l), N / 2);
    for (int i = 1; i < N; i += 2) {
        char name[32];
        snprintf(name, sizeof(name), "d%d", i);
        CHECK(rv_dom_list_find_name(&l, name) == all[i]);
        CHECK(rv_dom_list_find_uuid(&l, all[i]->uuid) == all[i]);
    }
    CHECK(rv_dom_list_find_name(&l, "d0") == NULL);
    CHECK_INT_EQ(rv_dom_list_num_active(&l), N / 2);
    rv_dom_list_clear(&l, free_obj);
    free(all);
}

int main(void)
{
    test_lookups();
    test_clash();
    test_filters();
    test_many();
    printf("ok\n");
    return 0;
}
