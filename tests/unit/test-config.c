/* remvirtd.conf parsing: defaults, every key kind, and that each bad line
 * stops with the file, the line and the reason. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "server/config.h"
#include "tests/unit/check.h"

/* Parse text into a fresh config; returns the error message or NULL. */
static char *parse(const char *text, rvs_config *cfg)
{
    rv_err err = { 0 };
    rvs_config_init(cfg);
    if (rvs_config_parse(cfg, text, "remvirtd.conf", &err) == 0)
        return NULL;
    char *msg = err.message;
    err.message = NULL;
    CHECK_INT_EQ(err.code, RV_ERR_CONFIG_UNSUPPORTED);
    rv_err_clear(&err);
    return msg;
}

static void expect_error(const char *text, const char *expected)
{
    rvs_config cfg;
    char *msg = parse(text, &cfg);
    CHECK_STR_EQ(msg, expected);
    free(msg);
    rvs_config_free(&cfg);
}

static void test_defaults(void)
{
    rvs_config cfg;
    CHECK(parse("", &cfg) == NULL);
    CHECK_STR_EQ(cfg.unix_sock_dir, "/run/remvirt");
    CHECK_UINT_EQ(cfg.unix_sock_rw_perms, 0700);
    CHECK_UINT_EQ(cfg.unix_sock_ro_perms, 0777);
    CHECK_INT_EQ(cfg.max_clients, 5000);
    CHECK_INT_EQ(cfg.max_client_requests, 5);
    CHECK(cfg.log_outputs == NULL);
    rvs_config_free(&cfg);
}

static void test_good_file(void)
{
    rvs_config cfg;
    const char *text =
        "# a comment line\n"
        "\n"
        "unix_sock_dir = \"/tmp/rv dir\"   # trailing comment\n"
        "unix_sock_rw_perms = \"0770\"\n"
        "unix_sock_ro_perms='0755'\n"
        "max_clients = 20000\n"
        "max_client_requests = 010\n"
        "auth_unix_rw = \"none\"\n"
        "log_level = 2\n"
        "log_filters = \"1:server 3:transport#not-a-comment\"\n"
        "log_outputs = \"2:file:/tmp/x.log\"\n";
    CHECK(parse(text, &cfg) == NULL);
    CHECK_STR_EQ(cfg.unix_sock_dir, "/tmp/rv dir");
    CHECK_UINT_EQ(cfg.unix_sock_rw_perms, 0770);
    CHECK_UINT_EQ(cfg.unix_sock_ro_perms, 0755);
    CHECK_INT_EQ(cfg.max_clients, 20000);
    CHECK_INT_EQ(cfg.max_client_requests, 10);
    CHECK_INT_EQ(cfg.log_level, 2);
    CHECK_STR_EQ(cfg.log_filters, "1:server 3:transport#not-a-comment");
    CHECK_STR_EQ(cfg.log_outputs, "2:file:/tmp/x.log");
    rvs_config_free(&cfg);
}

static void test_bad_lines(void)
{
    expect_error("max_clients = 5\nno_such_key = 1\n",
                 "remvirtd.conf:2: unknown setting 'no_such_key'");
    expect_error("\n\n\nmax_clients = many\n",
                 "remvirtd.conf:4: max_clients: expected a number or a quoted string");
    expect_error("max_clients = 0\n", "remvirtd.conf:1: max_clients: expected an integer from 1 to 1000000");
    expect_error("max_clients = \"10\"\n", "remvirtd.conf:1: max_clients: expected a number, not a string");
    expect_error("max_client_requests = -3\n",
                 "remvirtd.conf:1: max_client_requests: expected an integer from 1 to 1000000");
    expect_error("unix_sock_dir = /tmp\n",
                 "remvirtd.conf:1: unix_sock_dir: expected a number or a quoted string");
    expect_error("unix_sock_dir = \"/tmp\n", "remvirtd.conf:1: unix_sock_dir: unterminated string");
    expect_error("unix_sock_dir = \"/tmp\" x\n",
                 "remvirtd.conf:1: unix_sock_dir: unexpected text after the closing quote");
    expect_error("unix_sock_rw_perms = \"0999\"\n",
                 "remvirtd.conf:1: unix_sock_rw_perms: expected an octal mode in quotes, such as \"0770\"");
    expect_error("auth_unix_rw = \"sasl\"\n",
                 "remvirtd.conf:1: auth_unix_rw: only \"none\" is supported in this version");
    expect_error("log_level = 7\n",
                 "remvirtd.conf:1: log_level: expected 1 (debug), 2 (info), 3 (warning) or 4 (error)");
    expect_error("max_clients 5\n", "remvirtd.conf:1: expected 'key = value'");
    expect_error("max_clients =\n", "remvirtd.conf:1: expected 'key = value'");
}

static void test_load_file(void)
{
    char path[] = "/tmp/rv-config-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    const char text[] = "max_clients = 7\nbogus = 1\n";
    CHECK(write(fd, text, sizeof(text) - 1) == (ssize_t)sizeof(text) - 1);
    close(fd);
    rvs_config cfg;
    rvs_config_init(&cfg);
    rv_err err = { 0 };
    CHECK_INT_EQ(rvs_config_load(&cfg, path, &err), -1);
    char expected[256];
    snprintf(expected, sizeof(expected), "%s:2: unknown setting 'bogus'", path);
    CHECK_STR_EQ(err.message, expected);
    CHECK_INT_EQ(cfg.max_clients, 7);
    rv_err_clear(&err);
    unlink(path);
    CHECK_INT_EQ(rvs_config_load(&cfg, path, &err), -1);
    CHECK_INT_EQ(err.code, RV_ERR_SYSTEM_ERROR);
    CHECK_STR_HAS(err.message, "cannot read the configuration file");
    rv_err_clear(&err);
    rvs_config_free(&cfg);
}

int main(void)
{
    test_defaults();
    test_good_file();
    test_bad_lines();
    test_load_file();
    return 0;
}
