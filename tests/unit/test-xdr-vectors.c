/* Every vector in tests/data/libvirt-vectors.txt (packets captured from
 * virsh talking to libvirtd) must decode with our rpcgen types and encode
 * back to exactly the captured bytes; a few decoded fields are checked
 * against what virsh showed for the capture. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/remvirt.h"
#include "common/error.h"
#include "rv_packet.h"
#include "rv_remote.h"
#include "transport/frame.h"
#include "tests/unit/check.h"

/* The XDR routine for one side of a procedure; fn NULL means void. */
typedef struct {
    xdrproc_t fn;
    size_t size;
} body_type;

typedef struct {
    int proc;
    body_type args;
    body_type ret;
} proc_types;

#define BODY(t) { (xdrproc_t)xdr_##t, sizeof(t) }
#define VOID_BODY { NULL, 0 }

static const proc_types procs[] = {
    { RV_PROC_CONNECT_OPEN, BODY(rv_connect_open_args), VOID_BODY },
    { RV_PROC_CONNECT_GET_TYPE, VOID_BODY, BODY(rv_connect_get_type_ret) },
    { RV_PROC_CONNECT_GET_VERSION, VOID_BODY, BODY(rv_connect_get_version_ret) },
    { RV_PROC_NODE_GET_INFO, VOID_BODY, BODY(rv_node_get_info_ret) },
    { RV_PROC_DOMAIN_DESTROY, BODY(rv_domain_destroy_args), VOID_BODY },
    { RV_PROC_DOMAIN_GET_INFO, BODY(rv_domain_get_info_args), BODY(rv_domain_get_info_ret) },
    { RV_PROC_DOMAIN_GET_OS_TYPE, BODY(rv_domain_get_os_type_args),
      BODY(rv_domain_get_os_type_ret) },
    { RV_PROC_DOMAIN_LOOKUP_BY_ID, BODY(rv_domain_lookup_by_id_args),
      BODY(rv_domain_lookup_by_id_ret) },
    { RV_PROC_DOMAIN_LOOKUP_BY_NAME, BODY(rv_domain_lookup_by_name_args),
      BODY(rv_domain_lookup_by_name_ret) },
    { RV_PROC_CONNECT_SUPPORTS_FEATURE, BODY(rv_connect_supports_feature_args),
      BODY(rv_connect_supports_feature_ret) },
    { RV_PROC_AUTH_LIST, VOID_BODY, BODY(rv_auth_list_ret) },
    { RV_PROC_DOMAIN_GET_SECURITY_LABEL, BODY(rv_domain_get_security_label_args),
      BODY(rv_domain_get_security_label_ret) },
    { RV_PROC_NODE_GET_SECURITY_MODEL, VOID_BODY, BODY(rv_node_get_security_model_ret) },
    { RV_PROC_DOMAIN_IS_PERSISTENT, BODY(rv_domain_is_persistent_args),
      BODY(rv_domain_is_persistent_ret) },
    { RV_PROC_DOMAIN_HAS_MANAGED_SAVE_IMAGE, BODY(rv_domain_has_managed_save_image_args),
      BODY(rv_domain_has_managed_save_image_ret) },
    { RV_PROC_DOMAIN_GET_STATE, BODY(rv_domain_get_state_args), BODY(rv_domain_get_state_ret) },
    { RV_PROC_CONNECT_LIST_ALL_DOMAINS, BODY(rv_connect_list_all_domains_args),
      BODY(rv_connect_list_all_domains_ret) },
    { RV_PROC_CONNECT_REGISTER_CLOSE_CALLBACK, VOID_BODY, VOID_BODY },
    { RV_PROC_DOMAIN_GET_MESSAGES, BODY(rv_domain_get_messages_args),
      BODY(rv_domain_get_messages_ret) },
};

static const body_type error_body = BODY(rv_error);

/* What virsh showed for domain "test" while the vectors were captured. */
static const unsigned char test_uuid[16] = {
    0x66, 0x95, 0xeb, 0x01, 0xf6, 0xa4, 0x83, 0x04,
    0x79, 0xaa, 0x97, 0xf2, 0x50, 0x2e, 0x19, 0x3f,
};

static void check_test_domain(const rv_nonnull_domain *dom)
{
    CHECK_STR_EQ(dom->name, "test");
    CHECK_MEM_EQ(dom->uuid, 16, test_uuid, 16);
    CHECK_INT_EQ(dom->id, 1);
}

/* Field checks for the vectors whose values we know; obj is the decoded
 * body.  Returns 1 if the name had checks. */
static int check_values(const char *name, void *obj)
{
    if (strcmp(name, "auth_list_reply") == 0) {
        rv_auth_list_ret *r = obj;
        CHECK_UINT_EQ(r->types.types_len, 1);
        CHECK_INT_EQ(r->types.types_val[0], RV_AUTH_NONE);
    } else if (strcmp(name, "supports_feature_keepalive_call") == 0) {
        CHECK_INT_EQ(((rv_connect_supports_feature_args *)obj)->feature,
                     RV_FEATURE_PROGRAM_KEEPALIVE);
    } else if (strcmp(name, "supports_feature_reply") == 0) {
        CHECK_INT_EQ(((rv_connect_supports_feature_ret *)obj)->supported, 1);
    } else if (strcmp(name, "connect_open_call") == 0 ||
               strcmp(name, "connect_open_ro_call") == 0) {
        rv_connect_open_args *a = obj;
        CHECK(a->name != NULL);
        CHECK_STR_EQ(*a->name, "test:///default");
        CHECK_UINT_EQ(a->flags, strstr(name, "_ro_") ? RV_CONNECT_RO : 0);
    } else if (strcmp(name, "domain_lookup_by_name_call") == 0) {
        CHECK_STR_EQ(((rv_domain_lookup_by_name_args *)obj)->name, "test");
    } else if (strcmp(name, "domain_lookup_by_name_reply") == 0) {
        check_test_domain(&((rv_domain_lookup_by_name_ret *)obj)->dom);
    } else if (strcmp(name, "domain_lookup_by_id_call") == 0) {
        CHECK_INT_EQ(((rv_domain_lookup_by_id_args *)obj)->id, 1);
    } else if (strcmp(name, "domain_lookup_by_id_reply") == 0) {
        check_test_domain(&((rv_domain_lookup_by_id_ret *)obj)->dom);
    } else if (strcmp(name, "domain_get_os_type_reply") == 0) {
        CHECK_STR_EQ(((rv_domain_get_os_type_ret *)obj)->type, "linux");
    } else if (strcmp(name, "domain_get_info_call") == 0) {
        check_test_domain(&((rv_domain_get_info_args *)obj)->dom);
    } else if (strcmp(name, "domain_get_info_reply") == 0) {
        rv_domain_get_info_ret *r = obj;
        CHECK_UINT_EQ(r->state, RV_DOMAIN_RUNNING);
        CHECK_UINT_EQ(r->maxMem, 8388608);
        CHECK_UINT_EQ(r->memory, 2097152);
        CHECK_UINT_EQ(r->nrVirtCpu, 2);
        CHECK(r->cpuTime > 0);                  /* libvirt's test driver reports the clock */
    } else if (strcmp(name, "domain_get_security_label_reply") == 0) {
        rv_domain_get_security_label_ret *r = obj;
        /* The wire length counts the NUL that ends the label. */
        CHECK_UINT_EQ(r->label.label_len, sizeof("libvirt-test"));
        CHECK_STR_EQ(r->label.label_val, "libvirt-test");
        CHECK_INT_EQ(r->enforcing, 1);
    } else if (strcmp(name, "node_get_security_model_reply") == 0) {
        rv_node_get_security_model_ret *r = obj;
        CHECK_UINT_EQ(r->model.model_len, sizeof("testSecurity"));
        CHECK_STR_EQ(r->model.model_val, "testSecurity");
        CHECK_UINT_EQ(r->doi.doi_len, 1);       /* an empty DOI is one NUL */
        CHECK_INT_EQ(r->doi.doi_val[0], 0);
    } else if (strcmp(name, "domain_get_messages_reply") == 0) {
        CHECK_UINT_EQ(((rv_domain_get_messages_ret *)obj)->msgs.msgs_len, 0);
    } else if (strcmp(name, "node_get_info_reply") == 0) {
        rv_node_get_info_ret *r = obj;
        CHECK_STR_EQ(r->model, "i686");
        CHECK_UINT_EQ(r->memory, 3145728);
        CHECK_INT_EQ(r->cpus, 16);
        CHECK_INT_EQ(r->mhz, 1400);
        CHECK_INT_EQ(r->nodes, 2);
        CHECK_INT_EQ(r->sockets, 2);
        CHECK_INT_EQ(r->cores, 2);
        CHECK_INT_EQ(r->threads, 2);
    } else if (strcmp(name, "connect_list_all_domains_call") == 0) {
        rv_connect_list_all_domains_args *a = obj;
        CHECK_INT_EQ(a->need_results, 1);
        CHECK_UINT_EQ(a->flags, RV_LIST_DOMAINS_ACTIVE | RV_LIST_DOMAINS_INACTIVE); /* list --all */
    } else if (strcmp(name, "connect_list_all_domains_reply") == 0) {
        rv_connect_list_all_domains_ret *r = obj;
        CHECK_UINT_EQ(r->domains.domains_len, 1);
        check_test_domain(&r->domains.domains_val[0]);
        CHECK_UINT_EQ(r->ret, 1);
    } else if (strcmp(name, "domain_get_state_reply") == 0) {
        CHECK_INT_EQ(((rv_domain_get_state_ret *)obj)->state, RV_DOMAIN_RUNNING);
    } else if (strcmp(name, "connect_get_type_reply") == 0) {
        CHECK_STR_EQ(((rv_connect_get_type_ret *)obj)->type, "TEST");
    } else if (strcmp(name, "connect_get_version_reply") == 0) {
        CHECK_UINT_EQ(((rv_connect_get_version_ret *)obj)->hv_ver, 2);     /* "TEST 0.0.2" */
    } else if (strcmp(name, "error_no_domain_reply") == 0) {
        rv_error *e = obj;
        CHECK_INT_EQ(e->code, RV_ERR_NO_DOMAIN);
        CHECK_INT_EQ(e->domain, RV_FROM_TEST);
        CHECK_INT_EQ(e->level, RV_ERR_LEVEL_ERROR);
        CHECK(e->message != NULL);
        CHECK_STR_HAS(*e->message, "Domain not found");
        CHECK(e->dom == NULL);
    } else if (strcmp(name, "error_operation_denied_reply") == 0) {
        rv_error *e = obj;
        CHECK_INT_EQ(e->code, RV_ERR_OPERATION_DENIED);
        CHECK_INT_EQ(e->domain, RV_FROM_DOMAIN);
        CHECK(e->message != NULL);
        CHECK_STR_HAS(*e->message, "read only access prevents virDomainDestroy");
    } else {
        return 0;
    }
    return 1;
}

static const body_type *body_for(const char *name, const rv_header *hdr, int is_call)
{
    if (!is_call && hdr->status == RV_ERROR)
        return &error_body;
    for (size_t i = 0; i < sizeof(procs) / sizeof(procs[0]); i++)
        if (procs[i].proc == hdr->proc)
            return is_call ? &procs[i].args : &procs[i].ret;
    check_fail(__FILE__, __LINE__, "vector %s: procedure %d has no entry in procs[]",
               name, hdr->proc);
}

static size_t unhex(const char *name, const char *hex, char **out)
{
    size_t n = strlen(hex);
    if (n % 2 != 0)
        check_fail(__FILE__, __LINE__, "vector %s: odd number of hex digits", name);
    char *bytes = malloc(n / 2);
    CHECK(bytes != NULL);
    for (size_t i = 0; i < n / 2; i++) {
        unsigned v;
        if (sscanf(hex + 2 * i, "%2x", &v) != 1)
            check_fail(__FILE__, __LINE__, "vector %s: bad hex at %zu", name, 2 * i);
        bytes[i] = (char)v;
    }
    *out = bytes;
    return n / 2;
}

/* Decode, check, re-encode and compare one vector. */
static int run_vector(const char *name, int proc, const char *direction, const char *hex)
{
    char *pkt;
    size_t len = unhex(name, hex, &pkt);
    rv_err err = { 0 };
    int is_call = strcmp(direction, "call") == 0;
    CHECK(is_call || strcmp(direction, "reply") == 0);

    CHECK_UINT_EQ(rv_frame_peek_len(pkt), len);
    CHECK_INT_EQ(rv_frame_check_len((uint32_t)len, RV_FRAME_MAX, &err), 0);
    rv_header hdr;
    CHECK_INT_EQ(rv_frame_decode_header(pkt, len, &hdr, &err), 0);
    CHECK_UINT_EQ(hdr.prog, RV_REMOTE_PROGRAM);
    CHECK_UINT_EQ(hdr.vers, RV_REMOTE_VERSION);
    CHECK_INT_EQ(hdr.proc, proc);
    CHECK_INT_EQ(hdr.type, is_call ? RV_CALL : RV_REPLY);
    if (is_call)
        CHECK_INT_EQ(hdr.status, RV_OK);

    const body_type *body = body_for(name, &hdr, is_call);
    void *obj = NULL;
    if (body->fn) {
        obj = calloc(1, body->size);
        CHECK(obj != NULL);
        if (rv_frame_decode_payload(pkt, len, body->fn, obj, &err) < 0)
            check_fail(__FILE__, __LINE__, "vector %s: %s", name, err.message);
    } else {
        CHECK_UINT_EQ(len, RV_FRAME_MIN);
    }
    int checked = check_values(name, obj);

    rv_buf out = { 0 };
    if (rv_frame_encode(&out, &hdr, body->fn, obj, &err) < 0)
        check_fail(__FILE__, __LINE__, "vector %s: %s", name, err.message);
    CHECK_MEM_EQ(rv_buf_head(&out), rv_buf_used(&out), pkt, len);

    if (obj) {
        xdr_free(body->fn, obj);
        free(obj);
    }
    rv_buf_free(&out);
    rv_err_clear(&err);
    free(pkt);
    printf("ok %s (%zu bytes%s)\n", name, len, checked ? ", values checked" : "");
    return checked;
}

/* Vectors the capture must contain; a file missing one is a failure. */
static const char *const required[] = {
    "auth_list_call", "auth_list_reply",
    "supports_feature_keepalive_call", "supports_feature_reply",
    "connect_open_call",
    "domain_lookup_by_name_call", "domain_lookup_by_name_reply",
    "domain_get_info_call", "domain_get_info_reply",
    "node_get_info_reply",
    "connect_list_all_domains_call", "connect_list_all_domains_reply",
    "domain_get_state_reply",
    "domain_get_security_label_reply", "node_get_security_model_reply",
    "connect_get_version_reply",
    "error_no_domain_reply",
};

int main(void)
{
    const char *srcdir = getenv("srcdir");
    char path[4096];
    snprintf(path, sizeof(path), "%s/tests/data/libvirt-vectors.txt", srcdir ? srcdir : ".");
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "cannot open %s: %s (set srcdir to the source tree)\n", path,
                strerror(errno));
        return 1;
    }

    size_t nreq = sizeof(required) / sizeof(required[0]);
    int seen[sizeof(required) / sizeof(required[0])] = { 0 };
    int vectors = 0, with_values = 0;
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, f)) > 0) {
        if (line[0] == '#' || line[0] == '\n')
            continue;
        char name[128], direction[16];
        int proc, used = 0;
        if (sscanf(line, "%127s %d %15s %n", name, &proc, direction, &used) != 3 || used == 0)
            check_fail(__FILE__, __LINE__, "%s: malformed line: %s", path, line);
        char *hex = line + used;
        hex[strcspn(hex, " \t\r\n")] = '\0';
        with_values += run_vector(name, proc, direction, hex);
        vectors++;
        for (size_t i = 0; i < nreq; i++)
            if (strcmp(required[i], name) == 0)
                seen[i] = 1;
    }
    free(line);
    fclose(f);

    for (size_t i = 0; i < nreq; i++)
        if (!seen[i])
            check_fail(__FILE__, __LINE__, "%s has no vector %s", path, required[i]);
    printf("%d vectors round-tripped byte for byte, %d with field checks\n", vectors,
           with_values);
    return 0;
}
