/* Framing: the length bounds, header and payload round trips, and the
 * refusal of truncated, garbage, trailing and oversized payloads. */
#include <stdlib.h>
#include <string.h>

#include "rv_packet.h"
#include "rv_remote.h"
#include "transport/frame.h"
#include "tests/unit/check.h"

static void test_check_len(void)
{
    rv_err err = { 0 };
    const uint32_t max = RV_FRAME_MAX;

    CHECK_INT_EQ(RV_FRAME_MIN, 28);
    CHECK_UINT_EQ(RV_FRAME_MAX, 32u * 1024 * 1024 + 4);

    static const uint32_t too_short[] = { 0, 3, 27 };
    for (size_t i = 0; i < sizeof(too_short) / sizeof(too_short[0]); i++) {
        CHECK_INT_EQ(rv_frame_check_len(too_short[i], max, &err), -1);
        CHECK_INT_EQ(err.code, RV_ERR_RPC);
        CHECK_STR_HAS(err.message, "shorter than the 28-byte minimum");
        rv_err_clear(&err);
    }

    CHECK_INT_EQ(rv_frame_check_len(28, max, &err), 0);
    CHECK(!rv_err_is_set(&err));
    CHECK_INT_EQ(rv_frame_check_len(max, max, &err), 0);
    CHECK(!rv_err_is_set(&err));

    CHECK_INT_EQ(rv_frame_check_len(max + 1, max, &err), -1);
    CHECK_INT_EQ(err.code, RV_ERR_RPC);
    CHECK_STR_HAS(err.message, "exceeds the maximum of 33554436");
    rv_err_clear(&err);

    CHECK_INT_EQ(rv_frame_check_len(UINT32_MAX, max, &err), -1);
    rv_err_clear(&err);

    /* A caller's smaller limit is honoured. */
    CHECK_INT_EQ(rv_frame_check_len(1025, 1024, &err), -1);
    CHECK_STR_HAS(err.message, "exceeds the maximum of 1024");
    rv_err_clear(&err);
}

static const unsigned char uuid_a[16] = {
    0x66, 0x95, 0xeb, 0x01, 0xf6, 0xa4, 0x83, 0x04,
    0x79, 0xaa, 0x97, 0xf2, 0x50, 0x2e, 0x19, 0x3f,
};

static void test_void_round_trip(void)
{
    rv_err err = { 0 };
    rv_buf out = { 0 };
    rv_header hdr = {
        .prog = RV_REMOTE_PROGRAM, .vers = RV_REMOTE_VERSION,
        .proc = RV_PROC_CONNECT_CLOSE, .type = RV_REPLY, .serial = 0xfffffffeu,
        .status = RV_OK,
    };
    CHECK_INT_EQ(rv_frame_encode(&out, &hdr, NULL, NULL, &err), 0);
    CHECK_UINT_EQ(rv_buf_used(&out), 28);
    static const unsigned char expected[28] = {
        0x00, 0x00, 0x00, 0x1c,  0x20, 0x00, 0x80, 0x86,  0x00, 0x00, 0x00, 0x01,
        0x00, 0x00, 0x00, 0x02,  0x00, 0x00, 0x00, 0x01,  0xff, 0xff, 0xff, 0xfe,
        0x00, 0x00, 0x00, 0x00,
    };
    CHECK_MEM_EQ(rv_buf_head(&out), rv_buf_used(&out), expected, sizeof(expected));
    CHECK_UINT_EQ(rv_frame_peek_len(rv_buf_head(&out)), 28);

    rv_header back;
    CHECK_INT_EQ(rv_frame_decode_header(rv_buf_head(&out), 28, &back, &err), 0);
    CHECK_UINT_EQ(back.prog, hdr.prog);
    CHECK_UINT_EQ(back.vers, hdr.vers);
    CHECK_INT_EQ(back.proc, hdr.proc);
    CHECK_INT_EQ(back.type, hdr.type);
    CHECK_UINT_EQ(back.serial, hdr.serial);
    CHECK_INT_EQ(back.status, hdr.status);

    /* Fewer than 28 bytes hold no header. */
    CHECK_INT_EQ(rv_frame_decode_header(rv_buf_head(&out), 27, &back, &err), -1);
    CHECK_STR_HAS(err.message, "no whole header");
    rv_err_clear(&err);
    rv_buf_free(&out);
}

/* Two frames appended to one buffer decode independently, and negative
 * header fields survive the trip. */
static void test_payload_round_trip(void)
{
    rv_err err = { 0 };
    rv_buf out = { 0 };

    rv_header h1 = { RV_REMOTE_PROGRAM, RV_REMOTE_VERSION, RV_PROC_DOMAIN_LOOKUP_BY_NAME,
                     RV_REPLY, 7, RV_OK };
    rv_domain_lookup_by_name_ret r1 = { .dom = { .name = (char *)"guest-1", .id = -1 } };
    memcpy(r1.dom.uuid, uuid_a, 16);
    CHECK_INT_EQ(rv_frame_encode(&out, &h1, (xdrproc_t)xdr_rv_domain_lookup_by_name_ret, &r1,
                                 &err), 0);
    size_t len1 = rv_buf_used(&out);
    /* 28 + string (4 + 7 padded to 8) + uuid 16 + id 4 */
    CHECK_UINT_EQ(len1, 28 + 12 + 16 + 4);

    rv_header h2 = { RV_REMOTE_PROGRAM, RV_REMOTE_VERSION, -5, RV_CALL, 8, RV_OK };
    rv_domain_get_info_ret r2 = { .state = 3, .maxMem = 1ull << 40, .memory = 12345,
                                  .nrVirtCpu = 65535, .cpuTime = UINT64_MAX };
    CHECK_INT_EQ(rv_frame_encode(&out, &h2, (xdrproc_t)xdr_rv_domain_get_info_ret, &r2, &err),
                 0);
    size_t len2 = rv_buf_used(&out) - len1;
    /* unsigned char and unsigned short take 4 bytes each, hypers 8. */
    CHECK_UINT_EQ(len2, 28 + 4 + 8 + 8 + 4 + 8);

    const char *p1 = rv_buf_head(&out), *p2 = p1 + len1;
    CHECK_UINT_EQ(rv_frame_peek_len(p1), len1);
    CHECK_UINT_EQ(rv_frame_peek_len(p2), len2);

    rv_header back;
    rv_domain_lookup_by_name_ret d1;
    memset(&d1, 0, sizeof(d1));
    CHECK_INT_EQ(rv_frame_decode_header(p1, len1, &back, &err), 0);
    CHECK_UINT_EQ(back.serial, 7);
    CHECK_INT_EQ(rv_frame_decode_payload(p1, len1, (xdrproc_t)xdr_rv_domain_lookup_by_name_ret,
                                         &d1, &err), 0);
    CHECK_STR_EQ(d1.dom.name, "guest-1");
    CHECK_MEM_EQ(d1.dom.uuid, 16, uuid_a, 16);
    CHECK_INT_EQ(d1.dom.id, -1);
    xdr_free((xdrproc_t)xdr_rv_domain_lookup_by_name_ret, &d1);

    rv_domain_get_info_ret d2;
    memset(&d2, 0, sizeof(d2));
    CHECK_INT_EQ(rv_frame_decode_header(p2, len2, &back, &err), 0);
    CHECK_INT_EQ(back.proc, -5);
    CHECK_INT_EQ(back.type, RV_CALL);
    CHECK_INT_EQ(rv_frame_decode_payload(p2, len2, (xdrproc_t)xdr_rv_domain_get_info_ret, &d2,
                                         &err), 0);
    CHECK_UINT_EQ(d2.state, 3);
    CHECK_UINT_EQ(d2.maxMem, 1ull << 40);
    CHECK_UINT_EQ(d2.memory, 12345);
    CHECK_UINT_EQ(d2.nrVirtCpu, 65535);
    CHECK_UINT_EQ(d2.cpuTime, UINT64_MAX);
    CHECK(!rv_err_is_set(&err));
    rv_buf_free(&out);
}

/* A lookup reply for "guest-1", as bytes we can then damage. */
static size_t lookup_reply(char *buf, size_t cap)
{
    rv_err err = { 0 };
    rv_buf out = { 0 };
    rv_header h = { RV_REMOTE_PROGRAM, RV_REMOTE_VERSION, RV_PROC_DOMAIN_LOOKUP_BY_NAME,
                    RV_REPLY, 1, RV_OK };
    rv_domain_lookup_by_name_ret r = { .dom = { .name = (char *)"guest-1", .id = 4 } };
    CHECK_INT_EQ(rv_frame_encode(&out, &h, (xdrproc_t)xdr_rv_domain_lookup_by_name_ret, &r,
                                 &err), 0);
    size_t len = rv_buf_used(&out);
    CHECK(len <= cap);
    memcpy(buf, rv_buf_head(&out), len);
    rv_buf_free(&out);
    return len;
}

static void expect_decode_failure(const char *pkt, size_t len, const char *why)
{
    rv_err err = { 0 };
    rv_domain_lookup_by_name_ret d;
    memset(&d, 0, sizeof(d));
    CHECK_INT_EQ(rv_frame_decode_payload(pkt, len, (xdrproc_t)xdr_rv_domain_lookup_by_name_ret,
                                         &d, &err), -1);
    CHECK_INT_EQ(err.code, RV_ERR_RPC);
    CHECK_STR_HAS(err.message, why);
    rv_err_clear(&err);
}

static void test_bad_payloads(void)
{
    char pkt[128], bad[128];
    size_t len = lookup_reply(pkt, sizeof(pkt));

    /* Truncated anywhere inside the payload: the string, the uuid, the id. */
    for (size_t cut = RV_FRAME_MIN; cut < len; cut++)
        expect_decode_failure(pkt, cut, "cannot decode the payload");

    /* A string length far beyond the bytes present (and beyond the bound). */
    memcpy(bad, pkt, len);
    memcpy(bad + RV_FRAME_MIN, "\xff\xff\xff\xff", 4);
    expect_decode_failure(bad, len, "cannot decode the payload");

    /* A string length just over the 4 MiB bound. */
    memcpy(bad + RV_FRAME_MIN, "\x00\x40\x00\x01", 4);
    expect_decode_failure(bad, len, "cannot decode the payload");

    /* All-ones garbage of the right size. */
    memset(bad + RV_FRAME_MIN, 0xff, len - RV_FRAME_MIN);
    expect_decode_failure(bad, len, "cannot decode the payload");

    /* A valid body followed by extra bytes is refused too. */
    memcpy(bad, pkt, len);
    memset(bad + len, 0, 8);
    expect_decode_failure(bad, len + 4, "payload has 4 trailing bytes");
    expect_decode_failure(bad, len + 8, "payload has 8 trailing bytes");

    /* A void-looking frame has no body for a struct that needs one. */
    expect_decode_failure(pkt, RV_FRAME_MIN, "cannot decode the payload (0 bytes)");

    /* The untouched packet still decodes (the checks above used copies). */
    rv_err err = { 0 };
    rv_domain_lookup_by_name_ret d;
    memset(&d, 0, sizeof(d));
    CHECK_INT_EQ(rv_frame_decode_payload(pkt, len, (xdrproc_t)xdr_rv_domain_lookup_by_name_ret,
                                         &d, &err), 0);
    CHECK_INT_EQ(d.dom.id, 4);
    xdr_free((xdrproc_t)xdr_rv_domain_lookup_by_name_ret, &d);
}

/* Encoding fails cleanly, leaving what the buffer already held, both for
 * a value XDR refuses and for a valid value larger than any frame. */
static void test_encode_too_big(void)
{
    rv_err err = { 0 };
    rv_buf out = { 0 };
    rv_header h = { RV_REMOTE_PROGRAM, RV_REMOTE_VERSION, RV_PROC_CONNECT_LIST_ALL_DOMAINS,
                    RV_REPLY, 3, RV_OK };

    /* Something already queued ahead of the failing frame. */
    CHECK_INT_EQ(rv_frame_encode(&out, &h, NULL, NULL, &err), 0);
    CHECK_UINT_EQ(rv_buf_used(&out), 28);

    /* 16384 domains (the list bound) with 2100-byte names: about 34 MB,
     * over the 32 MiB frame limit although every field is in bounds. */
    enum { NAME_LEN = 2100 };
    char *name = malloc(NAME_LEN + 1);
    CHECK(name != NULL);
    memset(name, 'n', NAME_LEN);
    name[NAME_LEN] = '\0';
    rv_nonnull_domain *doms = calloc(RV_DOMAIN_LIST_MAX, sizeof(*doms));
    CHECK(doms != NULL);
    for (int i = 0; i < RV_DOMAIN_LIST_MAX; i++) {
        doms[i].name = name;
        doms[i].id = i;
    }
    rv_connect_list_all_domains_ret big = {
        .domains = { .domains_len = RV_DOMAIN_LIST_MAX, .domains_val = doms },
        .ret = RV_DOMAIN_LIST_MAX,
    };
    CHECK_INT_EQ(rv_frame_encode(&out, &h, (xdrproc_t)xdr_rv_connect_list_all_domains_ret, &big,
                                 &err), -1);
    CHECK_INT_EQ(err.code, RV_ERR_RPC);
    CHECK_STR_HAS(err.message, "over the 33554436-byte packet limit");
    rv_err_clear(&err);
    CHECK_UINT_EQ(rv_buf_used(&out), 28);
    CHECK_UINT_EQ(rv_frame_peek_len(rv_buf_head(&out)), 28);

    /* One domain over the list bound is refused by XDR itself. */
    rv_nonnull_domain *more = realloc(doms, (RV_DOMAIN_LIST_MAX + 1) * sizeof(*doms));
    CHECK(more != NULL);
    doms = more;
    name[4] = '\0';
    doms[RV_DOMAIN_LIST_MAX] = doms[0];
    big.domains.domains_val = doms;
    big.domains.domains_len = RV_DOMAIN_LIST_MAX + 1;
    CHECK_INT_EQ(rv_frame_encode(&out, &h, (xdrproc_t)xdr_rv_connect_list_all_domains_ret, &big,
                                 &err), -1);
    CHECK_STR_HAS(err.message, "cannot encode");
    rv_err_clear(&err);
    CHECK_UINT_EQ(rv_buf_used(&out), 28);

    /* The same list at its bound, with short names, fits. */
    big.domains.domains_len = RV_DOMAIN_LIST_MAX;
    CHECK_INT_EQ(rv_frame_encode(&out, &h, (xdrproc_t)xdr_rv_connect_list_all_domains_ret, &big,
                                 &err), 0);
    CHECK_UINT_EQ(rv_buf_used(&out), 28 + 28 + 4 + RV_DOMAIN_LIST_MAX * (8 + 16 + 4) + 4);

    free(doms);
    free(name);
    rv_buf_free(&out);
}

int main(void)
{
    test_check_len();
    test_void_round_trip();
    test_payload_round_trip();
    test_bad_payloads();
    test_encode_too_big();
    printf("frame tests passed\n");
    return 0;
}
