/* Fuzzes the server's whole call path: frame header checks, the procedure
 * table, every argument decoder, every handler and the test driver
 * (including its XML reader), then checks that what came back is well
 * formed: each reply echoes the call's serial and carries a decodable
 * error or result.
 *
 * Two ways to run it:
 *  - libFuzzer/AFL++ (built with -DRV_LIBFUZZER and -fsanitize=fuzzer):
 *    LLVMFuzzerTestOneInput gets the input as a run of frames.
 *  - plain (make check): a deterministic mutation loop over seed frames,
 *    FUZZ_ITERATIONS rounds (default 200000), seed FUZZ_SEED.
 * tests/fuzz/README says how to run a campaign. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rv_keepalive.h"
#include "rv_remote.h"
#include "server/client.h"
#include "server/dispatch.h"
#include "server/rv_dispatch.gen.h"
#include "tests/unit/check.h"
#include "transport/frame.h"
#include "transport/stream_hole.h"

static rvs_client *client;
/* What the inputs reached: frames dispatched, OK and error replies. */
static unsigned long n_frames, n_ok, n_errors;
static rvs_client_env env = { .max_client_requests = 1 << 30 };

static void on_close(rvs_client *c, void *opaque)
{
    (void)c;
    (void)opaque;
}

/* Every frame the server queued must be a reply to `serial` (or a PONG). */
static void check_output(const rv_header *call)
{
    rv_buf *out = rvs_client_output(client);
    while (rv_buf_used(out) > 0) {
        CHECK(rv_buf_used(out) >= RV_FRAME_MIN);
        uint32_t len = rv_frame_peek_len(rv_buf_head(out));
        CHECK(len >= RV_FRAME_MIN && len <= rv_buf_used(out));
        rv_header hdr;
        rv_err err = { 0 };
        CHECK(rv_frame_decode_header(rv_buf_head(out), len, &hdr, &err) == 0);
        if (hdr.type == RV_MESSAGE) {
            CHECK_UINT_EQ(hdr.prog, RV_KEEPALIVE_PROGRAM);
            CHECK_INT_EQ(hdr.proc, RV_KEEPALIVE_PROC_PONG);
        } else if (hdr.type == RV_STREAM) {
            /* A stream's data, end or answer: the stream is the call's
             * (opened by it, or the stream packet being dispatched). */
            CHECK_UINT_EQ(hdr.serial, call->serial);
            if (hdr.status == RV_ERROR) {
                rv_error e;
                memset(&e, 0, sizeof(e));
                CHECK(rv_frame_decode_payload(rv_buf_head(out), len, (xdrproc_t)xdr_rv_error, &e,
                                              &err) == 0);
                CHECK(e.code != RV_ERR_OK && e.message && *e.message);
                xdr_free((xdrproc_t)xdr_rv_error, &e);
            } else {
                CHECK(hdr.status == RV_OK || hdr.status == RV_CONTINUE);
            }
        } else {
            CHECK_INT_EQ(hdr.type, RV_REPLY);
            CHECK_UINT_EQ(hdr.serial, call->serial);
            if (hdr.status == RV_ERROR) {
                n_errors++;
                rv_error e;
                memset(&e, 0, sizeof(e));
                CHECK(rv_frame_decode_payload(rv_buf_head(out), len, (xdrproc_t)xdr_rv_error, &e,
                                              &err) == 0);
                CHECK(e.code != RV_ERR_OK && e.message && *e.message);
                xdr_free((xdrproc_t)xdr_rv_error, &e);
            } else {
                CHECK_INT_EQ(hdr.status, RV_OK);
                n_ok++;
                const rvs_proc *p = &rvs_remote_procs[hdr.proc];
                void *ret = calloc(1, p->ret_size ? p->ret_size : 1);
                CHECK(rv_frame_decode_payload(rv_buf_head(out), len, p->ret_filter, ret, &err) == 0);
                xdr_free(p->ret_filter, ret);
                free(ret);
            }
        }
        rv_err_clear(&err);
        rv_buf_consume(out, len);
    }
}

/* Dispatch each whole, acceptable frame in data; stop at the first bad
 * length as the server would (it closes the connection there). */
static void run_frames(const uint8_t *data, size_t size)
{
    while (size >= 4) {
        uint32_t len = rv_frame_peek_len((const char *)data);
        rv_err err = { 0 };
        if (rv_frame_check_len(len, RV_FRAME_MAX, &err) < 0 || len > size) {
            rv_err_clear(&err);
            return;
        }
        rv_header hdr;
        rv_frame_decode_header((const char *)data, len, &hdr, &err);
        n_frames++;
        if (rvs_dispatch_frame(client, (const char *)data, len) < 0)
            return;
        check_output(&hdr);
        data += len;
        size -= len;
    }
}

static void append_call(rv_buf *b, int proc, unsigned serial, xdrproc_t fn, void *args)
{
    rv_header hdr = { RV_REMOTE_PROGRAM, RV_REMOTE_VERSION, proc, RV_CALL, serial, RV_OK };
    rv_err err = { 0 };
    CHECK(rv_frame_encode(b, &hdr, fn, args, &err) == 0);
}

static void setup(void)
{
    static int done;
    if (done)
        return;
    done = 1;
    env.on_close = on_close;
    client = rvs_client_new_detached(&env, 1);
    CHECK(client != NULL);
    /* Open the test driver the way every client starts. */
    rv_buf b = { 0 };
    char *uri = (char *)"test:///default";
    rv_connect_open_args open_args = { .name = &uri };
    append_call(&b, RV_PROC_CONNECT_OPEN, 1, (xdrproc_t)xdr_rv_connect_open_args, &open_args);
    run_frames((const uint8_t *)rv_buf_head(&b), rv_buf_used(&b));
    rv_buf_free(&b);
    CHECK(rvs_client_driver_conn(client) != NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    setup();
    run_frames(data, size);
    return 0;
}

#ifndef RV_LIBFUZZER
/* xorshift64*: deterministic, so a failure reproduces from its seed. */
static uint64_t rng_state;
static uint64_t rng(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ULL;
}

/* Seeds: a valid call of every shape the table has, built from a few
 * argument layouts that most procedures share. */
static void build_seeds(rv_buf *seeds, size_t **starts, size_t *nseeds)
{
    /* The uuid of the test driver's built-in domain, so the seeds reach
     * the handlers' success paths too. */
    unsigned char test_uuid[16];
    CHECK(rv_uuid_parse("6695eb01-f6a4-8304-79aa-97f2502e193f", test_uuid) == 0);
    char *name = (char *)"test";
    char *xml = (char *)"<domain type='test'><name>fz</name><memory>1024</memory>"
                        "<vcpu>1</vcpu><os><type>hvm</type></os></domain>";
    rv_nonnull_domain dom = { .name = name, .id = 1 };
    memcpy(dom.uuid, test_uuid, 16);
    rv_domain_get_state_args dom_flags = { .dom = dom, .flags = 0 };
    rv_domain_lookup_by_name_args by_name = { .name = name };
    rv_domain_define_xml_args define = { .xml = xml };
    rv_domain_create_xml_args create = { .xml_desc = xml, .flags = 0 };
    rv_connect_list_all_domains_args list_all = { .need_results = 1, .flags = 0 };
    rv_connect_get_all_domain_stats_args stats = { .doms = { 1, &dom }, .stats = 0 };
    rv_domain_lookup_by_id_args by_id = { .id = 1 };
    /* Storage: pool and volume XML for the libxml2 readers, and the
     * default pool's volumes. */
    rv_storage_pool_define_xml_args pool_define = {
        .xml = (char *)"<pool type='netfs'><name>fz</name><source><host name='h' port='1'/>"
                       "<dir path='/d'/></source><target><path>/fz</path><permissions>"
                       "<mode>0755</mode></permissions></target></pool>",
    };
    rv_nonnull_storage_pool pool = { .name = (char *)"default-pool" };
    CHECK(rv_uuid_parse("dfe224cb-28fb-8dd0-c4b2-64eb3f0f4566", (unsigned char *)pool.uuid) == 0);
    rv_storage_vol_create_xml_args vol_create = {
        .pool = pool,
        .xml = (char *)"<volume><name>fz</name><capacity unit='M'>1</capacity><target>"
                       "<format type='qcow2'/><features><lazy_refcounts/></features></target>"
                       "<backingStore><path>/b</path></backingStore></volume>",
    };
    rv_storage_pool_list_all_volumes_args pool_vols = { .pool = pool, .need_results = 1 };

    *starts = calloc((size_t)rvs_remote_nprocs + 9, sizeof(size_t));
    *nseeds = 0;
    for (int proc = 0; proc < rvs_remote_nprocs; proc++) {
        const rvs_proc *p = &rvs_remote_procs[proc];
        if (!p->handler)
            continue;
        (*starts)[(*nseeds)++] = seeds->len;
        void *args = NULL;
        xdrproc_t fn = NULL;
        if (proc == RV_PROC_DOMAIN_LOOKUP_BY_NAME) {
            args = &by_name; fn = (xdrproc_t)xdr_rv_domain_lookup_by_name_args;
        } else if (proc == RV_PROC_DOMAIN_DEFINE_XML) {
            args = &define; fn = (xdrproc_t)xdr_rv_domain_define_xml_args;
        } else if (proc == RV_PROC_DOMAIN_CREATE_XML) {
            args = &create; fn = (xdrproc_t)xdr_rv_domain_create_xml_args;
        } else if (proc == RV_PROC_CONNECT_LIST_ALL_DOMAINS) {
            args = &list_all; fn = (xdrproc_t)xdr_rv_connect_list_all_domains_args;
        } else if (proc == RV_PROC_STORAGE_POOL_DEFINE_XML || proc == RV_PROC_STORAGE_POOL_CREATE_XML) {
            args = &pool_define; fn = (xdrproc_t)xdr_rv_storage_pool_define_xml_args;
        } else if (proc == RV_PROC_STORAGE_VOL_CREATE_XML) {
            args = &vol_create; fn = (xdrproc_t)xdr_rv_storage_vol_create_xml_args;
        } else if (proc == RV_PROC_STORAGE_POOL_LIST_ALL_VOLUMES) {
            args = &pool_vols; fn = (xdrproc_t)xdr_rv_storage_pool_list_all_volumes_args;
        } else if (proc == RV_PROC_CONNECT_GET_ALL_DOMAIN_STATS) {
            args = &stats; fn = (xdrproc_t)xdr_rv_connect_get_all_domain_stats_args;
        } else if (p->args_size == sizeof(by_id)) {
            args = &by_id; fn = (xdrproc_t)xdr_rv_domain_lookup_by_id_args;
        } else if (p->args_size) {
            /* Most remaining calls take a domain, then flags. */
            args = &dom_flags; fn = (xdrproc_t)xdr_rv_domain_get_state_args;
        }
        append_call(seeds, proc, (unsigned)proc + 100, fn, args);
    }
    /* A keepalive PING and a call for a program that does not exist. */
    (*starts)[(*nseeds)++] = seeds->len;
    rv_header ping = { RV_KEEPALIVE_PROGRAM, 1, RV_KEEPALIVE_PROC_PING, RV_MESSAGE, 0, RV_OK };
    rv_err err = { 0 };
    CHECK(rv_frame_encode(seeds, &ping, NULL, NULL, &err) == 0);
    /* A sparse upload to the volume made above: a hole, data, an empty
     * hole, the finish (the hole decoder and the stream's hole path). */
    (*starts)[(*nseeds)++] = seeds->len;
    rv_storage_vol_upload_args upload = {
        .vol = { .pool = pool.name, .name = (char *)"fz", .key = (char *)"/default-pool/fz" },
        .flags = RV_STORAGE_VOL_STREAM_SPARSE,
    };
    unsigned up = 900;
    append_call(seeds, RV_PROC_STORAGE_VOL_UPLOAD, up, (xdrproc_t)xdr_rv_storage_vol_upload_args,
                &upload);
    rv_header data = { RV_REMOTE_PROGRAM, RV_REMOTE_VERSION, RV_PROC_STORAGE_VOL_UPLOAD,
                       RV_STREAM, up, RV_CONTINUE };
    CHECK(rv_stream_hole_encode(seeds, &data, 4096, &err) == 0);
    size_t at = seeds->len;
    CHECK(rv_frame_encode(seeds, &data, NULL, NULL, &err) == 0);
    CHECK(rv_buf_reserve(seeds, 3) == 0);
    memcpy(seeds->data + seeds->len, "abc", 3);
    seeds->len += 3;
    seeds->data[at + 3] = (char)(RV_FRAME_MIN + 3);     /* the length word's low byte */
    CHECK(rv_stream_hole_encode(seeds, &data, 0, &err) == 0);
    data.status = RV_OK;
    CHECK(rv_frame_encode(seeds, &data, NULL, NULL, &err) == 0);
    (*starts)[*nseeds] = seeds->len;
}

static size_t mutate(uint8_t *buf, size_t len, size_t cap)
{
    int rounds = 1 + (int)(rng() % 4);
    for (int r = 0; r < rounds; r++) {
        switch (rng() % 6) {
        case 0: /* flip a byte */
            if (len) buf[rng() % len] ^= (uint8_t)(1u << (rng() % 8));
            break;
        case 1: /* random byte */
            if (len) buf[rng() % len] = (uint8_t)rng();
            break;
        case 2: /* truncate */
            if (len) len = rng() % len;
            break;
        case 3: /* grow with random bytes */
            while (len < cap && rng() % 8)
                buf[len++] = (uint8_t)rng();
            break;
        case 4: { /* a header word set to a small interesting value */
            static const uint32_t vals[] = { 0, 1, 2, 3, 4, 0xffffffff, 0x7fffffff, 16384, 16385 };
            size_t at = 4 + 4 * (rng() % 6);
            uint32_t v = vals[rng() % (sizeof(vals) / sizeof(vals[0]))];
            if (at + 4 <= len)
                for (int i = 0; i < 4; i++) buf[at + i] = (uint8_t)(v >> (24 - 8 * i));
            break;
        }
        case 5: { /* a payload word set to a large count or length */
            if (len > 32) {
                size_t at = 28 + 4 * (rng() % ((len - 28) / 4));
                uint32_t v = (uint32_t)(rng() % 2 ? 0xffffff00u : rng() % 70000);
                for (int i = 0; i < 4 && at + i < len; i++) buf[at + i] = (uint8_t)(v >> (24 - 8 * i));
            }
            break;
        }
        }
    }
    /* Most inputs keep a truthful length word so the payload gets decoded. */
    if (len >= 4 && rng() % 4) {
        buf[0] = (uint8_t)(len >> 24); buf[1] = (uint8_t)(len >> 16);
        buf[2] = (uint8_t)(len >> 8); buf[3] = (uint8_t)len;
    }
    return len;
}

int main(void)
{
    const char *iters_env = getenv("FUZZ_ITERATIONS"), *seed_env = getenv("FUZZ_SEED");
    long iterations = iters_env ? atol(iters_env) : 200000;
    rng_state = seed_env ? strtoull(seed_env, NULL, 0) : 0x5eed5eedULL;
    if (rng_state == 0)
        rng_state = 1;
    setup();
    rv_buf seeds = { 0 };
    size_t *starts, nseeds;
    build_seeds(&seeds, &starts, &nseeds);
    /* FUZZ_WRITE_SEEDS=DIR: write the seeds as a libFuzzer corpus (how
     * tests/fuzz/corpus/dispatch/seed-* were made) and stop. */
    const char *seed_dir = getenv("FUZZ_WRITE_SEEDS");
    if (seed_dir) {
        for (size_t k = 0; k < nseeds; k++) {
            char path[4096];
            snprintf(path, sizeof(path), "%s/seed-%03zu", seed_dir, k);
            FILE *f = fopen(path, "wb");
            CHECK(f != NULL);
            CHECK(fwrite(seeds.data + starts[k], 1, starts[k + 1] - starts[k], f) ==
                  starts[k + 1] - starts[k]);
            CHECK(fclose(f) == 0);
        }
        printf("fuzz-dispatch: wrote %zu seeds to %s\n", nseeds, seed_dir);
        return 0;
    }
    /* Every seed alone first: the valid calls must run cleanly. */
    run_frames((const uint8_t *)seeds.data, seeds.len);

    enum { CAP = 4096 };
    uint8_t *buf = malloc(CAP);
    for (long i = 0; i < iterations; i++) {
        size_t k = rng() % nseeds;
        size_t len = starts[k + 1] - starts[k];
        if (len > CAP)
            len = CAP;
        memcpy(buf, seeds.data + starts[k], len);
        len = mutate(buf, len, CAP);
        LLVMFuzzerTestOneInput(buf, len);
    }
    free(buf);
    free(starts);
    rv_buf_free(&seeds);
    rvs_client_free(client);
    printf("fuzz-dispatch: %ld mutated inputs from %zu seeds: %lu frames dispatched, "
           "%lu OK replies, %lu error replies, no failure\n",
           iterations, nseeds, n_frames, n_ok, n_errors);
    /* A mutator that never got past the framing would test nothing. */
    CHECK(n_frames > (unsigned long)iterations / 2 && n_ok > 0 && n_errors > 0);
    return 0;
}
#endif
