/* Logging: filter, output and level specs (good and bad, with their
 * messages), thresholds per category, batching to a file, and the
 * promise that a disabled call evaluates nothing. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/log.h"
#include "tests/unit/check.h"

RV_LOG_CATEGORY("tests.unit.log");

static char tmpdir[] = "/tmp/rv-test-log-XXXXXX";

static char *path_in_tmp(const char *name)
{
    char *p = NULL;
    CHECK(asprintf(&p, "%s/%s", tmpdir, name) > 0);
    return p;
}

/* The whole content of a file (empty string if it is empty). */
static char *slurp(const char *path)
{
    int fd = open(path, O_RDONLY);
    CHECK(fd >= 0);
    struct stat st;
    CHECK(fstat(fd, &st) == 0);
    char *s = malloc((size_t)st.st_size + 1);
    CHECK(s != NULL);
    CHECK(read(fd, s, (size_t)st.st_size) == st.st_size);
    s[st.st_size] = '\0';
    close(fd);
    return s;
}

static void expect_filters_error(const char *spec, const char *why)
{
    rv_err err = { 0 };
    CHECK_INT_EQ(rv_log_set_filters(spec, &err), -1);
    CHECK_INT_EQ(err.code, RV_ERR_CONFIG_UNSUPPORTED);
    CHECK_STR_HAS(err.message, why);
    rv_err_clear(&err);
}

static void expect_outputs_error(const char *spec, int code, const char *why)
{
    rv_err err = { 0 };
    CHECK_INT_EQ(rv_log_set_outputs(spec, &err), -1);
    CHECK_INT_EQ(err.code, code);
    CHECK_STR_HAS(err.message, why);
    rv_err_clear(&err);
}

static void test_filters(void)
{
    rv_err err = { 0 };
    char *out = path_in_tmp("filters.log");
    char *spec = NULL;

    /* With the default stderr output at level 3, nothing below warnings
     * can pass whatever the filters say. */
    CHECK_INT_EQ(rv_log_set_filters("1:server", &err), 0);
    CHECK_INT_EQ(rv_log_threshold_for("server.client"), RV_LOG_WARN);

    /* An output at level 1 lets the filters decide. */
    CHECK(asprintf(&spec, "1:file:%s", out) > 0);
    CHECK_INT_EQ(rv_log_set_outputs(spec, &err), 0);
    CHECK_INT_EQ(rv_log_set_filters("1:server.client 2:transport  4:drivers.test", &err), 0);
    CHECK_INT_EQ(rv_log_threshold_for("server.client"), RV_LOG_DEBUG);
    CHECK_INT_EQ(rv_log_threshold_for("transport.unix"), RV_LOG_INFO);
    CHECK_INT_EQ(rv_log_threshold_for("server.drivers.test"), RV_LOG_ERROR);
    /* Categories no filter names take the default level. */
    CHECK_INT_EQ(rv_log_threshold_for("server.dispatch"), RV_LOG_WARN);
    CHECK_INT_EQ(rv_log_set_level(RV_LOG_INFO, &err), 0);
    CHECK_INT_EQ(rv_log_threshold_for("server.dispatch"), RV_LOG_INFO);
    CHECK_INT_EQ(rv_log_threshold_for("server.client"), RV_LOG_DEBUG);

    /* An empty spec drops every filter. */
    CHECK_INT_EQ(rv_log_set_filters("", &err), 0);
    CHECK_INT_EQ(rv_log_threshold_for("server.client"), RV_LOG_INFO);
    CHECK(!rv_err_is_set(&err));

    CHECK_INT_EQ(rv_log_set_filters("1:server.client", &err), 0);
    expect_filters_error("0:server", "log filter '0:server': expected LEVEL:... with LEVEL 1 to 4");
    expect_filters_error("5:server", "with LEVEL 1 to 4");
    expect_filters_error("server", "log filter 'server'");
    expect_filters_error("1server", "expected LEVEL:");
    expect_filters_error("1:", "log filter '1:': missing category name");
    expect_filters_error("1:server 3:", "missing category name");
    /* A rejected spec leaves the previous filters in force. */
    CHECK_INT_EQ(rv_log_threshold_for("server.client"), RV_LOG_DEBUG);

    /* 64 filters are accepted, the 65th is not. */
    char many[65 * 8 + 1] = "";
    for (int i = 0; i < 64; i++)
        sprintf(many + strlen(many), "1:c%02d ", i);
    CHECK_INT_EQ(rv_log_set_filters(many, &err), 0);
    CHECK_INT_EQ(rv_log_threshold_for("c63"), RV_LOG_DEBUG);
    strcat(many, "1:c64");
    expect_filters_error(many, "too many log filters (at most 64)");
    CHECK_INT_EQ(rv_log_threshold_for("c00"), RV_LOG_DEBUG);

    expect_outputs_error("1:syslog", RV_ERR_CONFIG_UNSUPPORTED,
                         "log output '1:syslog': destination must be 'stderr', 'file:PATH', "
                         "'syslog:NAME' or 'journald'");
    expect_outputs_error("1:syslog:", RV_ERR_CONFIG_UNSUPPORTED,
                         "log output '1:syslog:': syslog needs a name of 1 to 64 characters");
    expect_outputs_error("1:journal", RV_ERR_CONFIG_UNSUPPORTED, "destination must be");
    expect_outputs_error("1:file:", RV_ERR_CONFIG_UNSUPPORTED, "destination must be");
    expect_outputs_error("9:stderr", RV_ERR_CONFIG_UNSUPPORTED,
                         "log output '9:stderr': expected LEVEL:");
    expect_outputs_error("stderr", RV_ERR_CONFIG_UNSUPPORTED, "expected LEVEL:");
    expect_outputs_error("1:file:/nonexistent-dir/x.log", RV_ERR_SYSTEM_ERROR,
                         "cannot open /nonexistent-dir/x.log: /nonexistent-dir: No such file or directory");
    expect_outputs_error("1:stderr 1:stderr 1:stderr 1:stderr 1:stderr 1:stderr 1:stderr "
                         "1:stderr 1:stderr", RV_ERR_CONFIG_UNSUPPORTED,
                         "too many log outputs (at most 8)");
    /* Still the level-1 file output from before. */
    CHECK_INT_EQ(rv_log_threshold_for("c00"), RV_LOG_DEBUG);

    rv_err err2 = { 0 };
    CHECK_INT_EQ(rv_log_set_level(0, &err2), -1);
    CHECK_STR_HAS(err2.message, "log level 0: must be 1 (debug) to 4 (error)");
    rv_err_clear(&err2);
    CHECK_INT_EQ(rv_log_set_level(5, &err2), -1);
    CHECK_STR_HAS(err2.message, "log level 5");
    rv_err_clear(&err2);

    rv_log_reset();
    CHECK_INT_EQ(rv_log_threshold_for("c00"), RV_LOG_WARN);
    free(spec);
    unlink(out);
    free(out);
}

static int side_effects;

static int bump(void)
{
    return ++side_effects;
}

static void test_file_output_and_cost(void)
{
    rv_err err = { 0 };
    char *out = path_in_tmp("out.log");
    char *spec = NULL;
    CHECK(asprintf(&spec, "2:file:%s", out) > 0);
    CHECK_INT_EQ(rv_log_set_outputs(spec, &err), 0);
    CHECK_INT_EQ(rv_log_set_filters("2:tests.unit", &err), 0);

    /* Batched: nothing reaches the file before a flush. */
    RV_INFO("first message %d", 42);
    RV_DEBUG("below the level %d", bump());
    char *text = slurp(out);
    CHECK_STR_EQ(text, "");
    free(text);

    rv_log_flush();
    text = slurp(out);
    CHECK_STR_HAS(text, ": info : tests.unit.log : test_file_output_and_cost:");
    CHECK_STR_HAS(text, "first message 42\n");
    CHECK(strstr(text, "below the level") == NULL);
    free(text);

    /* Errors are written at once, without a flush. */
    RV_ERROR("broken %s", "thing");
    text = slurp(out);
    CHECK_STR_HAS(text, ": error : tests.unit.log : test_file_output_and_cost:");
    CHECK_STR_HAS(text, "broken thing\n");
    free(text);

    /* The category's threshold is now cached for this configuration, so
     * a disabled call stops at the integer comparisons: its arguments are
     * not even evaluated, let alone formatted. */
    side_effects = 0;
    RV_DEBUG("not evaluated %d", bump());
    RV_DEBUG("not evaluated %d %d", bump(), bump());
    CHECK_INT_EQ(side_effects, 0);
    RV_INFO("evaluated %d", bump());
    CHECK_INT_EQ(side_effects, 1);

    /* A new configuration reaches the cached category: debug on... */
    free(spec);
    CHECK(asprintf(&spec, "1:file:%s", out) > 0);
    CHECK_INT_EQ(rv_log_set_outputs(spec, &err), 0);
    CHECK_INT_EQ(rv_log_set_filters("1:tests.unit.log", &err), 0);
    RV_DEBUG("debug now %d", bump());
    CHECK_INT_EQ(side_effects, 2);
    rv_log_flush();
    text = slurp(out);
    CHECK_STR_HAS(text, "evaluated 1\n");
    CHECK_STR_HAS(text, ": debug : tests.unit.log : test_file_output_and_cost:");
    CHECK_STR_HAS(text, "debug now 2\n");
    free(text);

    /* The daemon's flush before sleeping leaves a batch of debug messages
     * for its timer, and writes one that holds anything above debug, the
     * debug lines before it included, in order. */
    CHECK_INT_EQ(rv_log_flush_urgent(), 0);
    RV_DEBUG("waits for more");
    CHECK_INT_EQ(rv_log_flush_urgent(), 1);
    text = slurp(out);
    CHECK(strstr(text, "waits for more") == NULL);
    free(text);
    RV_INFO("goes out now");
    CHECK_INT_EQ(rv_log_flush_urgent(), 0);
    text = slurp(out);
    char *waited = strstr(text, "waits for more\n");
    CHECK(waited != NULL);
    CHECK(strstr(waited, "goes out now\n") != NULL);
    free(text);

    /* ...and off again.  The first call after the change may take the slow
     * path to refresh the cache; every later one is back to the fast path. */
    CHECK_INT_EQ(rv_log_set_filters("3:tests.unit", &err), 0);
    RV_DEBUG("refresh");
    side_effects = 0;
    for (int i = 0; i < 1000; i++)
        RV_DEBUG("off %d", bump());
    CHECK_INT_EQ(side_effects, 0);
    RV_WARN("still on %d", bump());
    CHECK_INT_EQ(side_effects, 1);

    /* A message longer than the line buffer is cut but stays one line. */
    char *long_msg = malloc(5000);
    CHECK(long_msg != NULL);
    memset(long_msg, 'x', 4999);
    long_msg[4999] = '\0';
    RV_WARN("%s", long_msg);
    RV_WARN("after the long one");
    rv_log_flush();
    text = slurp(out);
    char *start = strstr(text, "xxxx");
    CHECK(start != NULL);
    char *end = strchr(start, '\n');
    CHECK(end != NULL);
    CHECK((size_t)(end - start) < 2048);
    CHECK_STR_HAS(end + 1, "after the long one\n");
    free(text);
    free(long_msg);

    rv_log_reset();
    free(spec);
    unlink(out);
    free(out);
}

/* What a peer sends (a SASL user name, a certificate's DN) ends up in
 * messages: its control characters are escaped, so it can neither forge
 * a line of its own nor send escape sequences to whoever reads the log on
 * a terminal. */
static void test_peer_text_escaped(void)
{
    rv_err err = { 0 };
    char *out = path_in_tmp("peer.log");
    char *spec = NULL;
    CHECK(asprintf(&spec, "1:file:%s", out) > 0);
    CHECK_INT_EQ(rv_log_set_outputs(spec, &err), 0);
    const char *user = "eve\n2026-11-25 05:00:00.000+0000: 1: info : forged : "
                       "alice logged in\r\x1b[2K\x1b]0;pwned\x07";
    RV_WARN("SASL authentication as '%s' failed: %s", user, "unknown user");
    RV_WARN("a %c in the middle", '\0');
    RV_WARN("caf\xc3\xa9 stays, \xc2\x9b and \xff do not");
    rv_log_flush();
    char *text = slurp(out);
    CHECK_STR_HAS(text, "SASL authentication as 'eve\\n2026-11-25 05:00:00.000+0000: 1: info : "
                        "forged : alice logged in\\r\\x1b[2K\\x1b]0;pwned\\x07' failed: "
                        "unknown user\n");
    CHECK_STR_HAS(text, "a \\x00 in the middle\n");
    CHECK_STR_HAS(text, "caf\xc3\xa9 stays, \\xc2\\x9b and \\xff do not\n");
    /* Three messages, three lines, and no control character but their ends. */
    size_t lines = 0;
    for (const char *p = text; *p; p++) {
        CHECK(*p == '\n' || (unsigned char)*p >= 0x20);
        CHECK((unsigned char)*p != 0x7f);
        lines += *p == '\n';
    }
    CHECK_UINT_EQ(lines, 3);
    free(text);
    rv_log_reset();
    free(spec);
    unlink(out);
    free(out);
}

/* ---- syslog and journald: datagrams to a stand-in socket ---- */

static int dgram_bind(const char *path)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    CHECK(fd >= 0);
    CHECK(bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
    return fd;
}

/* The next datagram waiting on fd, NUL-terminated; NULL when none is. */
static char *dgram_next(int fd)
{
    static char buf[8192];
    ssize_t n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);
    if (n < 0) {
        CHECK(errno == EAGAIN || errno == EWOULDBLOCK);
        return NULL;
    }
    buf[n] = '\0';
    return buf;
}

/* The value of journal field KEY in a datagram ("KEY=value\n" lines). */
static const char *field(const char *dgram, const char *key)
{
    static char value[4096];
    size_t klen = strlen(key);
    for (const char *line = dgram; *line;) {
        const char *end = strchr(line, '\n');
        CHECK(end != NULL);     /* every field ends with a newline */
        if (strncmp(line, key, klen) == 0 && line[klen] == '=') {
            size_t n = (size_t)(end - line) - klen - 1;
            CHECK(n < sizeof(value));
            memcpy(value, line + klen + 1, n);
            value[n] = '\0';
            return value;
        }
        line = end + 1;
    }
    return NULL;
}

static const char *describe_client(const void *client, char *buf, size_t len)
{
    snprintf(buf, len, "%s", (const char *)client);
    return buf;
}

static void test_datagram_outputs(void)
{
    rv_err err = { 0 };
    char *journal = path_in_tmp("journal.sock"), *syslog_path = path_in_tmp("syslog.sock");
    int jfd = dgram_bind(journal), sfd = dgram_bind(syslog_path);
    rv_log_set_socket_paths(journal, syslog_path);
    CHECK_INT_EQ(rv_log_set_filters("1:tests.unit.log", &err), 0);
    CHECK_INT_EQ(rv_log_set_outputs("1:journald 3:syslog:rvtest", &err), 0);
    int n;
    char *text = rv_log_get_outputs(&n);
    CHECK_STR_EQ(text, "1:journald 3:syslog:rvtest");
    CHECK_INT_EQ(n, 2);
    free(text);

    /* One datagram per message, its fields one by one. */
    rv_log_set_client("client 42 (uid 0, SASL user e\nve)", 42, describe_client);
    int line = __LINE__ + 1;
    RV_INFO("hello %s", "journal");
    rv_log_set_client(NULL, 0, NULL);
    const char *d = dgram_next(jfd);
    CHECK(d != NULL);
    CHECK_STR_EQ(field(d, "PRIORITY"), "6");
    CHECK_STR_EQ(field(d, "MESSAGE"), "hello journal");
    CHECK_STR_EQ(field(d, "REMVIRT_CATEGORY"), "tests.unit.log");
    CHECK_STR_EQ(field(d, "CODE_FUNC"), "test_datagram_outputs");
    char want_line[16];
    snprintf(want_line, sizeof(want_line), "%d", line);
    CHECK_STR_EQ(field(d, "CODE_LINE"), want_line);
    CHECK_STR_EQ(field(d, "CODE_FILE"), "tests/unit/test-log.c");
    CHECK_STR_EQ(field(d, "SYSLOG_IDENTIFIER"), "test-log");
    CHECK_STR_EQ(field(d, "REMVIRT_CLIENT"), "42");
    /* A peer's text cannot add a field of its own. */
    CHECK_STR_EQ(field(d, "REMVIRT_CLIENT_IDENTITY"), "client 42 (uid 0, SASL user e\\nve)");
    CHECK(field(d, "TID") != NULL);
    CHECK(dgram_next(jfd) == NULL);
    /* Below syslog's level: nothing there. */
    CHECK(dgram_next(sfd) == NULL);

    /* No client: no client fields; syslog gets a warning as RFC 3164. */
    RV_WARN("careful");
    d = dgram_next(jfd);
    CHECK(d != NULL);
    CHECK_STR_EQ(field(d, "PRIORITY"), "4");
    CHECK(field(d, "REMVIRT_CLIENT") == NULL);
    d = dgram_next(sfd);
    CHECK(d != NULL);
    CHECK(strncmp(d, "<28>", 4) == 0);     /* facility daemon, warning */
    char tag[64];
    snprintf(tag, sizeof(tag), " rvtest[%d]: careful", (int)getpid());
    CHECK_STR_HAS(d, tag);

    /* A full socket never blocks the caller: messages are dropped and
     * counted, and the count arrives first once there is room again. */
    for (int i = 0; i < 500; i++)
        RV_DEBUG("flood %d", i);
    int got = 0;
    while ((d = dgram_next(jfd)) != NULL) {
        CHECK_STR_HAS(field(d, "MESSAGE"), "flood ");
        got++;
    }
    CHECK(got > 0 && got < 500);
    RV_INFO("room again");
    d = dgram_next(jfd);
    CHECK(d != NULL);
    char note[96];
    snprintf(note, sizeof(note), "%d log messages were dropped: the journal socket was full",
             500 - got);
    CHECK_STR_EQ(field(d, "MESSAGE"), note);
    CHECK_STR_EQ(field(d, "PRIORITY"), "4");
    d = dgram_next(jfd);
    CHECK(d != NULL);
    CHECK_STR_EQ(field(d, "MESSAGE"), "room again");
    CHECK(dgram_next(jfd) == NULL);

    /* No socket there: refused with the reason, the old outputs kept. */
    rv_log_set_socket_paths("/nonexistent-dir/journal", NULL);
    expect_outputs_error("1:journald", RV_ERR_SYSTEM_ERROR,
                         "log output '1:journald': cannot reach /nonexistent-dir/journal: "
                         "No such file or directory");
    text = rv_log_get_outputs(&n);
    CHECK_STR_EQ(text, "1:journald 3:syslog:rvtest");
    free(text);

    rv_log_reset();
    rv_log_set_socket_paths("/run/systemd/journal/socket", "/dev/log");
    close(jfd);
    close(sfd);
    unlink(journal);
    unlink(syslog_path);
    free(journal);
    free(syslog_path);
}

/* logrotate renames the file, then remvirtd reopens it by name: the
 * lines before go to the old file, those after to the new one. */
static void test_reopen(void)
{
    rv_err err = { 0 };
    char *out = path_in_tmp("rot.log"), *old = path_in_tmp("rot.log.1"), *spec = NULL;
    CHECK(asprintf(&spec, "1:file:%s", out) > 0);
    CHECK_INT_EQ(rv_log_set_outputs(spec, &err), 0);
    RV_WARN("before the rename");
    CHECK(rename(out, old) == 0);
    RV_WARN("batched before the reopen");
    CHECK_INT_EQ(rv_log_reopen(&err), 0);
    RV_WARN("after the reopen");
    rv_log_flush();
    char *text = slurp(old);
    CHECK_STR_HAS(text, "before the rename\n");
    CHECK_STR_HAS(text, "batched before the reopen\n");
    CHECK(strstr(text, "after the reopen") == NULL);
    free(text);
    text = slurp(out);
    CHECK_STR_HAS(text, "after the reopen\n");
    CHECK(strstr(text, "before") == NULL);
    free(text);
    rv_log_reset();
    unlink(out);
    unlink(old);
    free(out);
    free(old);
    free(spec);
}

int main(void)
{
    CHECK(mkdtemp(tmpdir) != NULL);
    test_filters();
    test_file_output_and_cost();
    test_peer_text_escaped();
    test_datagram_outputs();
    test_reopen();
    rmdir(tmpdir);
    printf("log tests passed\n");
    return 0;
}
