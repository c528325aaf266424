/* The QEMU driver's parts together: a domain XML is parsed, its command
 * line built and run with a real qemu-system-x86_64 (skipped with 77 when
 * it is not installed), and the QMP client checks through QEMU itself
 * that the guest got what the XML asked for: its disks and cdrom
 * (query-block), its NIC's MAC (query-rx-filter), its serial pty
 * (query-chardev), VNC on an automatic port (query-vnc), its UUID and
 * name, its vcpus, paused at start; then quit.  With KVM when it can
 * create a VM here, and always with TCG. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ev.h>

#include "server/drivers/qemu/command.h"
#include "server/drivers/qemu/domain_xml.h"
#include "server/drivers/qemu/qmp.h"
#include "tests/unit/check.h"
#include "tests/unit/spawn.h"

static struct ev_loop *loop;
static pid_t qemu_pid = -1;
static char tmpdir[] = "/tmp/rv-test-qemu-start.XXXXXX";
static bool tmpdir_made;
static const char *const tmp_files[] = { "qmp.sock", "qemu.log", "disk.img" };

static void cleanup(void)
{
    if (qemu_pid > 0) {
        kill(qemu_pid, SIGKILL);
        waitpid(qemu_pid, NULL, 0);
        qemu_pid = -1;
    }
    if (tmpdir_made) {
        char path[600];
        for (size_t i = 0; i < sizeof(tmp_files) / sizeof(tmp_files[0]); i++) {
            snprintf(path, sizeof(path), "%s/%s", tmpdir, tmp_files[i]);
            unlink(path);
        }
        rmdir(tmpdir);
        tmpdir_made = false;
    }
}

static void show_qemu_log(void)
{
    char path[600], line[512];
    snprintf(path, sizeof(path), "%s/qemu.log", tmpdir);
    FILE *fp = fopen(path, "r");
    while (fp && fgets(line, sizeof(line), fp))
        fprintf(stderr, "qemu: %s", line);
    if (fp)
        fclose(fp);
}

/* ---------------------------------------------------------------- QMP, synchronously for the test */

typedef struct session {
    rv_qmp *qmp;
    bool ready, closed;
    rv_err close_reason;
} session;

static void on_ready(rv_qmp *q, json_object *greeting, void *opaque)
{
    (void)q;
    (void)greeting;
    ((session *)opaque)->ready = true;
}

static void on_close(rv_qmp *q, const rv_err *reason, void *opaque)
{
    (void)q;
    session *s = opaque;
    s->closed = true;
    rv_err_set(&s->close_reason, reason->domain, reason->code, "%s", reason->message ? reason->message : "");
}

typedef struct reply_box {
    bool done;
    json_object *ret;
    char *error;
} reply_box;

static void on_reply(rv_qmp *q, json_object *ret, const rv_err *err, void *opaque)
{
    (void)q;
    reply_box *b = opaque;
    b->done = true;
    b->ret = json_object_get(ret);
    if (err)
        b->error = strdup(err->message ? err->message : "error");
}

static void on_tick(struct ev_loop *l, ev_timer *w, int revents)
{
    (void)l;
    (void)w;
    (void)revents;
}

static void run_until(bool *flag, double seconds, const char *what)
{
    ev_timer tick;
    ev_timer_init(&tick, on_tick, 0.05, 0.05);
    ev_timer_start(loop, &tick);
    ev_now_update(loop);
    ev_tstamp deadline = ev_now(loop) + seconds;
    while (!*flag) {
        if (ev_now(loop) > deadline) {
            show_qemu_log();
            check_fail(__FILE__, __LINE__, "timed out waiting for %s", what);
        }
        ev_run(loop, EVRUN_ONCE);
    }
    ev_timer_stop(loop, &tick);
}

/* The command's "return" (the caller puts it), failing the test on error. */
static json_object *qmp_call(session *s, const char *name, json_object *args)
{
    reply_box b = { 0 };
    rv_err err = { 0 };
    if (rv_qmp_command(s->qmp, name, args, 0, on_reply, &b, &err) < 0)
        check_fail(__FILE__, __LINE__, "%s: %s", name, err.message);
    run_until(&b.done, 60, name);
    if (b.error) {
        show_qemu_log();
        check_fail(__FILE__, __LINE__, "%s failed: %s", name, b.error);
    }
    return b.ret;
}

static json_object *member(json_object *obj, const char *key)
{
    json_object *m = NULL;
    if (!json_object_object_get_ex(obj, key, &m))
        check_fail(__FILE__, __LINE__, "no member '%s' in %s", key,
                   json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN));
    return m;
}

/* The element of array whose `key` is the string `value`. */
static json_object *find_by(json_object *array, const char *key, const char *value)
{
    CHECK(json_object_is_type(array, json_type_array));
    for (size_t i = 0; i < json_object_array_length(array); i++) {
        json_object *e = json_object_array_get_idx(array, i), *m = NULL;
        if (json_object_object_get_ex(e, key, &m) && strcmp(json_object_get_string(m), value) == 0)
            return e;
    }
    check_fail(__FILE__, __LINE__, "no element with %s=%s in %s", key, value,
               json_object_to_json_string_ext(array, JSON_C_TO_STRING_PLAIN));
}

/* One guest from start to quit, with KVM or with TCG. */
static void run_guest(const char *qemu, bool kvm)
{
    char disk[600], sock[600], log_path[600];
    snprintf(disk, sizeof(disk), "%s/disk.img", tmpdir);
    snprintf(sock, sizeof(sock), "%s/qmp.sock", tmpdir);
    snprintf(log_path, sizeof(log_path), "%s/qemu.log", tmpdir);
    int fd = open(disk, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    CHECK(fd >= 0);
    CHECK(ftruncate(fd, 1 << 20) == 0);
    close(fd);

    char xml[4096];
    snprintf(xml, sizeof(xml),
             "<domain type='qemu'><name>start-test</name>"
             "<uuid>0b0e2a9c-6a1e-4c57-9d7e-3f2b8c1d4e5f</uuid>"
             "<memory unit='MiB'>64</memory><vcpu>2</vcpu>"
             "<os><type machine='q35'>hvm</type><boot dev='cdrom'/><boot dev='hd'/></os>"
             "<devices>"
             "<disk type='file'><driver name='qemu' type='raw'/><source file='%s'/><target dev='vda'/></disk>"
             "<disk type='file' device='cdrom'><target dev='sda'/></disk>"
             "<interface type='user'><mac address='52:54:00:12:34:56'/></interface>"
             "<console type='pty'/>"
             "<graphics type='vnc' autoport='yes' listen='127.0.0.1'/>"
             "</devices></domain>", disk);
    rv_err err = { 0 };
    rv_qemu_domain_def *def = rv_qemu_domain_parse(xml, strlen(xml), &err);
    if (!def)
        check_fail(__FILE__, __LINE__, "domain XML refused: %s", err.message);
    def->accel = kvm ? RV_QEMU_VIRT_KVM : RV_QEMU_VIRT_QEMU;
    fprintf(stderr, "accelerator: %s\n", kvm ? "kvm" : "tcg");
    rv_qemu_command_opts opts = { qemu, sock, kvm, NULL };
    char **argv = rv_qemu_build_argv(def, &opts, &err);
    if (!argv)
        check_fail(__FILE__, __LINE__, "argv: %s", err.message);

    qemu_pid = spawn_logged(argv, log_path);
    CHECK(qemu_pid >= 0);
    rv_qemu_argv_free(argv);

    session s = { 0 };
    static const rv_qmp_callbacks cbs = { .on_ready = on_ready, .on_close = on_close };
    rv_qmp_options qopts = { .connect_timeout = 30, .command_timeout = 60 };
    s.qmp = rv_qmp_connect_unix(loop, sock, &qopts, &cbs, &s, &err);
    CHECK(s.qmp != NULL);
    run_until(&s.ready, 60, "the QMP handshake");

    json_object *r = qmp_call(&s, "query-status", NULL);
    CHECK_STR_EQ(json_object_get_string(member(r, "status")), "prelaunch");
    json_object_put(r);

    r = qmp_call(&s, "query-name", NULL);
    CHECK_STR_EQ(json_object_get_string(member(r, "name")), "start-test");
    json_object_put(r);
    r = qmp_call(&s, "query-uuid", NULL);
    CHECK_STR_EQ(json_object_get_string(member(r, "UUID")), "0b0e2a9c-6a1e-4c57-9d7e-3f2b8c1d4e5f");
    json_object_put(r);
    r = qmp_call(&s, "query-cpus-fast", NULL);
    CHECK_UINT_EQ(json_object_array_length(r), 2);
    json_object_put(r);

    r = qmp_call(&s, "query-block", NULL);
    json_object *vda = find_by(r, "qdev", "/machine/peripheral/vda/virtio-backend");
    json_object *inserted = member(vda, "inserted");
    CHECK_STR_EQ(json_object_get_string(member(inserted, "file")), disk);
    CHECK_STR_EQ(json_object_get_string(member(inserted, "drv")), "raw");
    CHECK(!json_object_get_boolean(member(inserted, "ro")));
    json_object *sda = find_by(r, "qdev", "sda");
    CHECK(json_object_get_boolean(member(sda, "removable")));
    json_object_put(r);

    json_object *args = json_object_new_object();
    json_object_object_add(args, "name", json_object_new_string("net0"));
    r = qmp_call(&s, "query-rx-filter", args);
    CHECK_STR_EQ(json_object_get_string(member(json_object_array_get_idx(r, 0), "main-mac")),
                 "52:54:00:12:34:56");
    json_object_put(r);

    r = qmp_call(&s, "query-chardev", NULL);
    json_object *serial = find_by(r, "label", "charserial0");
    CHECK(strncmp(json_object_get_string(member(serial, "filename")), "pty:", 4) == 0);
    json_object_put(r);

    r = qmp_call(&s, "query-vnc", NULL);
    CHECK(json_object_get_boolean(member(r, "enabled")));
    CHECK_STR_EQ(json_object_get_string(member(r, "host")), "127.0.0.1");
    int port = atoi(json_object_get_string(member(r, "service")));
    CHECK(port >= 5900 && port <= 5999);
    json_object_put(r);

    /* quit's own reply may be lost to the close: only the close counts. */
    reply_box quit = { 0 };
    CHECK(rv_qmp_command(s.qmp, "quit", NULL, 0, on_reply, &quit, &err) == 0);
    run_until(&s.closed, 60, "the monitor's end of file");
    int status;
    CHECK(waitpid(qemu_pid, &status, 0) == qemu_pid);
    qemu_pid = -1;
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);

    CHECK(quit.done);
    json_object_put(quit.ret);
    free(quit.error);
    rv_qmp_free(s.qmp);
    rv_err_clear(&s.close_reason);
    rv_qemu_domain_free(def);
}

int main(void)
{
    const char *qemu = find_qemu();
    if (!qemu) {
        fprintf(stderr, "SKIP: qemu-system-x86_64 not found (Debian package qemu-system-x86)\n");
        return CHECK_SKIP;
    }
    signal(SIGPIPE, SIG_IGN);
    loop = ev_default_loop(0);
    CHECK(mkdtemp(tmpdir) != NULL);
    tmpdir_made = true;
    atexit(cleanup);

    if (rv_qemu_kvm_usable())
        run_guest(qemu, true);
    else
        fprintf(stderr, "KVM cannot create a VM here: TCG only\n");
    run_guest(qemu, false);
    ev_loop_destroy(loop);
    return 0;
}
