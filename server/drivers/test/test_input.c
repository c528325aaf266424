/* The test driver's keyboard, NMI, screenshot and guest calls, as
 * libvirt's test driver answers them: SEND_KEY checks the keys and the
 * domain runs, INJECT_NMI that it runs, and SCREENSHOT streams a fixed
 * PNG image whatever the domain's state (libvirt's sends a picture file
 * of its own; this one is a 16x16 grey ramp made for remvirt).  The
 * guest has two file systems, "/" and "/boot", that FSFREEZE and FSTHAW
 * freeze and thaw; FSTRIM and SET_USER_PASSWORD only check. */
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

static const rv_stream_io_ops png_ops = {
    .read = png_read, .finish = png_finish, .free = png_free,
};

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

/* ================================================================ guest file systems */

static const char *const mounts[] = { "/", "/boot" };

/* The bits of the mount points named (all when none), or -1 with
 * libvirt's error for one the guest lacks. */
static int mount_bits(char **points, u_int n, rv_err *err)
{
    int bits = n ? 0 : 3;
    for (u_int i = 0; i < n; i++) {
        int b = strcmp(points[i], mounts[0]) == 0 ? 1 : strcmp(points[i], mounts[1]) == 0 ? 2 : 0;
        if (!b)
            return test_fail(err, RV_ERR_OPERATION_INVALID,
                             "Requested operation is not valid: mount point not found: %s",
                             points[i]);
        bits |= b;
    }
    return bits;
}

/* Freeze (or thaw) the file systems named; how many changed. */
static int freeze(const rv_nonnull_domain *wire, char **points, u_int n, bool on, rv_err *err)
{
    test_dom *d = running(wire, err);
    int bits = d ? mount_bits(points, n, err) : -1;
    if (bits < 0)
        return -1;
    int change = on ? bits & ~d->frozen : bits & d->frozen;
    d->frozen = on ? d->frozen | bits : d->frozen & ~bits;
    return (change & 1) + (change >> 1);
}

int test_domain_fsfreeze(rv_driver_conn *c, const rv_domain_fsfreeze_args *args,
                         rv_domain_fsfreeze_ret *ret, rv_err *err)
{
    (void)c;
    if (rv_driver_check_flags(RV_FROM_TEST, args->flags, 0, "testDomainFSFreeze", err) < 0)
        return -1;
    int n = freeze(&args->dom, args->mountpoints.mountpoints_val, args->mountpoints.mountpoints_len,
                   true, err);
    return n < 0 ? -1 : (ret->filesystems = n, 0);
}

int test_domain_fsthaw(rv_driver_conn *c, const rv_domain_fsthaw_args *args,
                       rv_domain_fsthaw_ret *ret, rv_err *err)
{
    (void)c;
    if (rv_driver_check_flags(RV_FROM_TEST, args->flags, 0, "testDomainFSThaw", err) < 0)
        return -1;
    int n = freeze(&args->dom, args->mountpoints.mountpoints_val, args->mountpoints.mountpoints_len,
                   false, err);
    return n < 0 ? -1 : (ret->filesystems = n, 0);
}

int test_domain_fstrim(rv_driver_conn *c, const rv_domain_fstrim_args *args, rv_err *err)
{
    (void)c;
    if (rv_driver_check_flags(RV_FROM_TEST, args->flags, 0, "testDomainFSTrim", err) < 0 ||
        !running(&args->dom, err))
        return -1;
    return args->mountPoint ? (mount_bits(args->mountPoint, 1, err) < 0 ? -1 : 0) : 0;
}

int test_domain_set_user_password(rv_driver_conn *c, const rv_domain_set_user_password_args *args,
                                  rv_err *err)
{
    (void)c;
    const unsigned int encrypted = 1;   /* VIR_DOMAIN_PASSWORD_ENCRYPTED */
    if (rv_driver_check_flags(RV_FROM_TEST, args->flags, encrypted, "testDomainSetUserPassword",
                              err) < 0)
        return -1;
    return running(&args->dom, err) ? 0 : -1;
}
