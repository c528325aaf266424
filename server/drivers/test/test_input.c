/* The test driver's keyboard, NMI and screenshot, as libvirt's test
 * driver answers them: SEND_KEY checks the keys and the domain runs,
 * INJECT_NMI that it runs, and SCREENSHOT streams a fixed PNG image
 * whatever the domain's state (libvirt's sends a picture file of its
 * own; this one is a 16x16 grey ramp made for remvirt). */
#include <stdlib.h>
#include <string.h>

#include "rv_remote.h"
#include "server/drivers/conf/keycodes.h"
#include "server/drivers/stream_io.h"
#include "server/drivers/test/test_driver.h"

static const unsigned char test_png[] = {
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x10, 0x08, 0x00, 0x00, 0x00, 0x00, 0x3a, 0x98, 0xa0,
    0xbd, 0x00, 0x00, 0x00, 0x1d, 0x49, 0x44, 0x41, 0x54, 0x78, 0xda, 0x63, 0x60, 0x10, 0x50, 0x30,
    0x70, 0x08, 0x48, 0x28, 0x68, 0x98, 0xb0, 0x60, 0xc3, 0x81, 0x0b, 0x0f, 0x3e, 0x30, 0x8c, 0x6c,
    0x01, 0x00, 0x70, 0xb2, 0x78, 0x01, 0x79, 0x10, 0xe7, 0x7b, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45,
    0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
};

/* The domain, refused with libvirt's words when it does not run. */
static test_dom *running(const rv_nonnull_domain *wire, rv_err *err)
{
    rv_dom_ref ref = rv_dom_ref_from_wire(wire);
    test_dom *d = test_dom_get(&ref, err);
    if (d && d->id < 0) {
        rv_err_set(err, RV_FROM_DOMAIN, RV_ERR_OPERATION_INVALID,
                   "Requested operation is not valid: domain is not running");
        return NULL;
    }
    return d;
}

int test_domain_send_key(rv_driver_conn *c, const rv_domain_send_key_args *args, rv_err *err)
{
    (void)c;
    if (rv_driver_check_flags(RV_FROM_TEST, args->flags, 0, "testDomainSendKey", err) < 0 ||
        rv_keycode_check(RV_FROM_TEST, args->codeset, args->keycodes.keycodes_val,
                         args->keycodes.keycodes_len, true, err) < 0)
        return -1;
    return running(&args->dom, err) ? 0 : -1;
}

int test_domain_inject_nmi(rv_driver_conn *c, const rv_domain_inject_nmi_args *args,
                           rv_err *err)
{
    (void)c;
    if (rv_driver_check_flags(RV_FROM_TEST, args->flags, 0, "testDomainInjectNMI", err) < 0)
        return -1;
    return running(&args->dom, err) ? 0 : -1;
}

typedef struct png_io {
    rv_stream_io base;
    size_t pos;
} png_io;

static ssize_t png_read(rv_stream_io *base, char *buf, size_t len, rv_err *err)
{
    (void)err;
    png_io *io = (png_io *)base;
    size_t n = sizeof test_png - io->pos;
    if (n > len)
        n = len;
    memcpy(buf, test_png + io->pos, n);
    io->pos += n;
    return (ssize_t)n;
}

static int png_finish(rv_stream_io *base, rv_err *err)
{
    (void)base;
    (void)err;
    return 0;
}

static void png_free(rv_stream_io *base)
{
    free(base);
}

static const rv_stream_io_ops png_ops = { .read = png_read, .finish = png_finish, .free = png_free };

int test_domain_screenshot(rv_driver_conn *c, const rv_domain_screenshot_args *args,
                           rv_domain_screenshot_ret *ret, rv_err *err)
{
    (void)c;
    rv_dom_ref ref = rv_dom_ref_from_wire(&args->dom);
    if (rv_driver_check_flags(RV_FROM_TEST, args->flags, 0, "testDomainScreenshot", err) < 0 ||
        !test_dom_get(&ref, err))
        return -1;
    png_io *io = calloc(1, sizeof(*io));
    if (!io)
        return test_fail(err, RV_ERR_NO_MEMORY, "out of memory");
    io->base.ops = &png_ops;
    if (rv_driver_stream_open(&io->base, err) < 0)
        return -1;
    if (!(ret->mime = malloc(sizeof(*ret->mime))) || !(*ret->mime = strdup("image/png"))) {
        free(ret->mime);
        ret->mime = NULL;
        return test_fail(err, RV_ERR_NO_MEMORY, "out of memory");
    }
    return 0;
}
