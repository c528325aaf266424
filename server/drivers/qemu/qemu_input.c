/* The guest's keyboard, NMI and display on the QEMU driver: DOMAIN_SEND_KEY
 * (QMP send-key, the keys translated to QEMU's numbers as libvirt maps
 * them, conf/keycodes.c), DOMAIN_INJECT_NMI (inject-nmi) and
 * DOMAIN_SCREENSHOT (screendump, PNG as libvirtd 9.0 asks QEMU 7.1 on, to
 * a file in the run directory, which the call's stream then sends and
 * removes).
 *
 * A screenshot's reply goes out at once with the stream; the stream has
 * no data until QEMU has written the file, and fails with QEMU's error if
 * it could not: the loop never waits. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "server/drivers/conf/keycodes.h"
#include "server/drivers/qemu/qemu_driver.h"
#include "server/drivers/stream_io.h"

#define fail(err, code, ...) rv_err_fail((err), RV_FROM_QEMU, (code), __VA_ARGS__)

/* ================================================================ keys, NMI */

/* The running domain whose monitor a live call needs: 0, RV_DEFERRED
 * (it waits for the monitor) or -1. */
static int running(const rv_nonnull_domain *wire, qemu_dom **d, rv_err *err)
{
    if (!(*d = rv_qemu_dom_get(wire, err)))
        return -1;
    return rv_qemu_need_monitor(*d, err);
}

int rv_qemu_domain_inject_nmi(rv_driver_conn *c, const rv_domain_inject_nmi_args *args,
                              rv_err *err)
{
    (void)c;
    qemu_dom *d;
    int rc;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, 0, "qemuDomainInjectNMI", err) < 0)
        return -1;
    if ((rc = running(&args->dom, &d, err)) != 0)
        return rc;
    return rv_qemu_live_void(d, "inject-nmi", NULL, err);
}

int rv_qemu_domain_send_key(rv_driver_conn *c, const rv_domain_send_key_args *args, rv_err *err)
{
    (void)c;
    const unsigned int *codes = args->keycodes.keycodes_val;
    unsigned int n = args->keycodes.keycodes_len;
    qemu_dom *d;
    int rc;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, 0, "qemuDomainSendKey", err) < 0 ||
        rv_keycode_check(RV_FROM_QEMU, args->codeset, codes, n, false, err) < 0)
        return -1;
    json_object *keys = json_object_new_array(), *cmd = json_object_new_object();
    if (!keys || !cmd) {
        json_object_put(keys);
        json_object_put(cmd);
        return fail(err, RV_ERR_NO_MEMORY, "out of memory");
    }
    for (unsigned int i = 0; i < n; i++) {
        unsigned int q;
        if (rv_keycode_to_qnum(args->codeset, codes[i], &q) < 0) {
            json_object_put(keys);
            json_object_put(cmd);
            return fail(err, RV_ERR_INTERNAL_ERROR,
                        "internal error: cannot translate keycode %u of %s codeset to qnum "
                        "keycode", codes[i], rv_keycode_set_name(args->codeset));
        }
        json_object *key = json_object_new_object();
        json_object_object_add(key, "type", json_object_new_string("number"));
        json_object_object_add(key, "data", json_object_new_int((int)q));
        json_object_array_add(keys, key);
    }
    json_object_object_add(cmd, "keys", keys);
    if (args->holdtime)
        json_object_object_add(cmd, "hold-time", json_object_new_int64(args->holdtime));
    if ((rc = running(&args->dom, &d, err)) != 0) {
        json_object_put(cmd);
        return rc;
    }
    return rv_qemu_live_void(d, "send-key", cmd, err);
}

/* ================================================================ screenshot */

typedef struct shot_req shot_req;

/* The stream's end: the file once QEMU wrote it. */
typedef struct shot_io {
    rv_stream_io io;
    int fd;                     /* -1 until ready */
    bool failed;
    rv_err why;                 /* when failed */
    shot_req *req;              /* NULL once QEMU has answered */
} shot_io;

struct shot_req {
    rv_qemu_live_req live;      /* live.reply unused: the call was answered */
    char *path;
    shot_io *io;                /* NULL: the stream is gone */
};

static ssize_t shot_read(rv_stream_io *io, char *buf, size_t len, rv_err *err)
{
    shot_io *s = (shot_io *)io;
    if (s->failed) {
        rv_err_set(err, s->why.domain, s->why.code, "%s", s->why.message ? s->why.message : "");
        return -1;
    }
    if (s->fd < 0)
        return RV_STREAM_AGAIN;
    ssize_t n = read(s->fd, buf, len);
    if (n < 0) {
        rv_err_set(err, RV_FROM_QEMU, RV_ERR_SYSTEM_ERROR, "cannot read the screenshot: %s",
                   strerror(errno));
        return -1;
    }
    return n;
}

static int shot_finish(rv_stream_io *io, rv_err *err)
{
    (void)io;
    (void)err;
    return 0;
}

static void shot_free(rv_stream_io *io)
{
    shot_io *s = (shot_io *)io;
    if (s->req)
        s->req->io = NULL;      /* QEMU's answer then only removes the file */
    if (s->fd >= 0)
        close(s->fd);
    rv_err_clear(&s->why);
    free(s);
}

static const rv_stream_io_ops shot_ops = {
    .read = shot_read,
    .finish = shot_finish,
    .free = shot_free,
};

static void on_screendump(rv_qmp *qmp, json_object *ret, const rv_err *err, void *opaque)
{
    (void)ret;
    (void)qmp;
    shot_req *req = opaque;
    shot_io *s = req->io;
    if (s) {
        s->req = NULL;
        if (err) {
            s->failed = true;
            rv_err_set(&s->why, err->domain, err->code, "%s", err->message ? err->message : "");
        } else if ((s->fd = open(req->path, O_RDONLY | O_CLOEXEC)) < 0) {
            s->failed = true;
            rv_err_set(&s->why, RV_FROM_QEMU, RV_ERR_SYSTEM_ERROR,
                       "unable to open %s: %s", req->path, strerror(errno));
        }
        rv_stream_io_wake(&s->io);
    }
    /* Open or not, the file has no other use: the stream holds it. */
    unlink(req->path);
    free(req->path);
    free(req->live.name);
    free(req);
}

int rv_qemu_domain_screenshot(rv_driver_conn *c, const rv_domain_screenshot_args *args,
                              rv_domain_screenshot_ret *ret, rv_err *err)
{
    (void)c;
    if (rv_qemu_check_flags(RV_FROM_QEMU, args->flags, 0, "qemuDomainScreenshot", err) < 0)
        return -1;
    qemu_dom *d = rv_qemu_dom_get(&args->dom, err);
    if (!d)
        return -1;
    /* No waiting for a monitor here: the stream must open in this call. */
    if (!rv_qemu_dom_active(d) || d->starting || !d->live || !d->qmp || !rv_qmp_is_ready(d->qmp))
        return rv_err_fail(err, RV_FROM_DOMAIN, RV_ERR_OPERATION_INVALID,
                           "Requested operation is not valid: domain is not running");
    if (d->live->dev.nvideos == 0)
        return fail(err, RV_ERR_OPERATION_INVALID,
                    "Requested operation is not valid: no screens to take screenshot from");
    unsigned heads = d->live->dev.videos[0].heads ? d->live->dev.videos[0].heads : 1;
    if (args->screen >= heads)
        return fail(err, RV_ERR_OPERATION_INVALID,
                    "Requested operation is not valid: no such screen ID");
    unsigned int rnd = 0;
    if (getrandom(&rnd, sizeof rnd, GRND_NONBLOCK) != sizeof rnd)
        rnd = (unsigned int)random();
    shot_io *s = calloc(1, sizeof(*s));
    shot_req *req = calloc(1, sizeof(*req));
    char suffix[32];
    snprintf(suffix, sizeof suffix, ".screendump-%08x", rnd);
    /* PNG where QEMU writes it (7.1 on), as libvirtd asks for it. */
    bool png = rv_qemu.qemu_version >= 7001000;
    char *mime = strdup(png ? "image/png" : "image/x-portable-pixmap");
    json_object *cmd = json_object_new_object();
    if (!s || !req || !mime || !cmd || !(req->path = rv_qemu_path(rv_qemu.run_dir, d->live->name,
                                                                   suffix)) ||
        !(req->live.name = strdup(d->live->name))) {
        free(s);
        if (req)
            free(req->path);
        free(req);
        free(mime);
        json_object_put(cmd);
        return fail(err, RV_ERR_NO_MEMORY, "out of memory");
    }
    s->io.ops = &shot_ops;
    s->fd = -1;
    s->req = req;
    req->io = s;
    req->live.qmp = d->qmp;
    req->live.pid = d->pid;
    json_object_object_add(cmd, "filename", json_object_new_string(req->path));
    if (png)
        json_object_object_add(cmd, "format", json_object_new_string("png"));
    if (args->screen) {        /* QEMU wants the device with a head */
        json_object_object_add(cmd, "device", json_object_new_string("video0"));
        json_object_object_add(cmd, "head", json_object_new_int((int)args->screen));
    }
    if (rv_qmp_command(d->qmp, "screendump", cmd, 0, on_screendump, req, err) < 0) {
        free(req->path);
        free(req->live.name);
        free(req);
        free(s);
        free(mime);
        return -1;
    }
    /* From here QEMU's answer frees req, whatever becomes of the stream. */
    if (rv_driver_stream_open(&s->io, err) < 0) {
        free(mime);
        return -1;
    }
    if (!(ret->mime = malloc(sizeof(*ret->mime)))) {
        free(mime);
        return fail(err, RV_ERR_NO_MEMORY, "out of memory");
    }
    *ret->mime = mime;
    return 0;
}
