/* The STREAM_HOLE payload (transport/stream_hole.c), which remvirtd
 * decodes from clients and libremvirt from servers: the bytes libvirtd
 * sends (observed: a 38 MiB hole of a sparse download), a round trip, and
 * every malformed payload a peer can send (short, long, negative, flags)
 * refused with one clear error, without reading past the payload. */
#include <stdlib.h>
#include <string.h>

#include "rv_packet.h"
#include "rv_remote.h"
#include "transport/frame.h"
#include "transport/stream_hole.h"
#include "tests/unit/check.h"

/* libvirtd 9.0's STREAM_HOLE of a VOL_DOWNLOAD (proc 209), serial 10:
 * 38 MiB (0x2600000), flags 0, status CONTINUE. */
static const unsigned char observed[] = {
    0x00, 0x00, 0x00, 0x28, 0x20, 0x00, 0x80, 0x86, 0x00, 0x00, 0x00, 0x01,
    0x00, 0x00, 0x00, 0xd1, 0x00, 0x00, 0x00, 0x06, 0x00, 0x00, 0x00, 0x0a,
    0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x60, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00,
};

static void test_observed(void)
{
    rv_err err = { 0 };
    const char *frame = (const char *)observed;
    CHECK_INT_EQ(rv_stream_hole_decode(frame + RV_FRAME_MIN, sizeof(observed) - RV_FRAME_MIN,
                                       &err), 0x2600000);
    CHECK(!rv_err_is_set(&err));

    /* Encoding the same hole gives the same bytes. */
    rv_header hdr = { .prog = RV_REMOTE_PROGRAM, .vers = RV_REMOTE_VERSION, .proc = 209,
                      .type = RV_STREAM, .serial = 10, .status = RV_OK };
    rv_buf out = { 0 };
    CHECK_INT_EQ(rv_stream_hole_encode(&out, &hdr, 0x2600000, &err), 0);
    CHECK_MEM_EQ(out.data, out.len, observed, sizeof(observed));
    rv_buf_free(&out);
}

static void test_round_trip(void)
{
    static const long long lengths[] = { 0, 1, 4096, 0x7fffffffLL, 1LL << 40, INT64_MAX };
    rv_header hdr = { .prog = RV_REMOTE_PROGRAM, .vers = RV_REMOTE_VERSION, .proc = 208,
                      .type = RV_STREAM, .serial = 3, .status = RV_CONTINUE };
    for (size_t i = 0; i < sizeof(lengths) / sizeof(lengths[0]); i++) {
        rv_err err = { 0 };
        rv_buf out = { 0 };
        CHECK_INT_EQ(rv_stream_hole_encode(&out, &hdr, lengths[i], &err), 0);
        CHECK_INT_EQ(out.len, RV_FRAME_MIN + RV_STREAM_HOLE_PAYLOAD);
        rv_header got;
        CHECK_INT_EQ(rv_frame_decode_header(out.data, out.len, &got, &err), 0);
        CHECK_INT_EQ(got.type, RV_STREAM_HOLE);
        CHECK_INT_EQ(got.status, RV_CONTINUE);
        CHECK_INT_EQ(got.serial, 3);
        CHECK(rv_stream_hole_decode(out.data + RV_FRAME_MIN, out.len - RV_FRAME_MIN, &err) ==
              lengths[i]);
        rv_buf_free(&out);
    }
}

static void refused(const unsigned char *payload, size_t len, const char *what)
{
    rv_err err = { 0 };
    /* Copied to the heap at its exact size: ASan sees any read past it. */
    char *copy = malloc(len ? len : 1);
    CHECK(copy != NULL);
    memcpy(copy, payload, len);
    if (rv_stream_hole_decode(copy, len, &err) != -1) {
        fprintf(stderr, "FAIL: %s: accepted\n", what);
        exit(1);
    }
    CHECK_INT_EQ(err.code, RV_ERR_RPC);
    CHECK_INT_EQ(err.domain, RV_FROM_STREAMS);
    CHECK_STR_HAS(err.message, "malformed stream hole");
    rv_err_clear(&err);
    free(copy);
}

static void test_malformed(void)
{
    const unsigned char *good = observed + RV_FRAME_MIN;
    for (size_t len = 0; len < RV_STREAM_HOLE_PAYLOAD; len++)
        refused(good, len, "a short payload");
    unsigned char longer[RV_STREAM_HOLE_PAYLOAD + 4] = { 0 };
    memcpy(longer, good, RV_STREAM_HOLE_PAYLOAD);
    refused(longer, sizeof(longer), "a payload with 4 trailing bytes");

    unsigned char negative[RV_STREAM_HOLE_PAYLOAD] = { 0xff, 0xff, 0xff, 0xff,
                                                       0xff, 0xff, 0xff, 0xfb };
    refused(negative, sizeof(negative), "length -5");
    unsigned char most_negative[RV_STREAM_HOLE_PAYLOAD] = { 0x80 };
    refused(most_negative, sizeof(most_negative), "length -2^63");
    unsigned char flags[RV_STREAM_HOLE_PAYLOAD] = { 0, 0, 0, 0, 0, 0, 0x10, 0, 0, 0, 0, 1 };
    refused(flags, sizeof(flags), "flags 1");
    unsigned char high_flags[RV_STREAM_HOLE_PAYLOAD] = { 0, 0, 0, 0, 0, 0, 0x10, 0, 0x80 };
    refused(high_flags, sizeof(high_flags), "flags 0x80000000");
}

int main(void)
{
    test_observed();
    test_round_trip();
    test_malformed();
    printf("stream hole tests passed\n");
    return 0;
}
