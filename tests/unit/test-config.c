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
    CHECK_STR_EQ(cfg.unix_sock_dir, RV_UNIX_SOCK_DIR);
    CHECK_UINT_EQ(cfg.unix_sock_rw_perms, RV_UNIX_SOCK_GROUP[0] ? 0770 : 0700);
    CHECK_UINT_EQ(cfg.unix_sock_ro_perms, 0777);
    CHECK_INT_EQ(cfg.max_clients, 5000);
    CHECK_INT_EQ(cfg.max_client_requests, 5);
    CHECK(cfg.log_outputs == NULL);
    CHECK_INT_EQ(cfg.listen_tcp, 0);
    CHECK_INT_EQ(cfg.listen_tls, 0);
    CHECK_STR_EQ(cfg.tcp_port, "16509");
    CHECK_STR_EQ(cfg.tls_port, "16514");
    CHECK(cfg.listen_addr == NULL);
    CHECK(cfg.tls_allowed_dn_list == NULL);
    CHECK_INT_EQ(cfg.tls_handshake_timeout, 30);
    CHECK_STR_EQ(cfg.auth_unix_rw, "none");
    CHECK_STR_EQ(cfg.auth_tcp, "sasl");
    CHECK_STR_EQ(cfg.auth_tls, "none");
    CHECK_INT_EQ(cfg.tcp_min_ssf, 56);
    CHECK_INT_EQ(cfg.auth_timeout, 30);
    CHECK_INT_EQ(cfg.max_anonymous_clients, 20);
    CHECK(cfg.sasl_allowed_username_list == NULL);
    CHECK_UINT_EQ(cfg.memory_budget_bytes, 1u << 30);
    CHECK_UINT_EQ(cfg.memory_budget_readonly_bytes, 256u << 20);
    CHECK_UINT_EQ(cfg.memory_budget_user_bytes, 128u << 20);
    CHECK_INT_EQ(cfg.qemu_keepalive_interval, 5);   /* libvirtd's qemu.conf keepalive_* */
    CHECK_INT_EQ(cfg.qemu_keepalive_count, 5);
    rvs_config_free(&cfg);
    CHECK(parse("qemu_keepalive_interval = -1\nqemu_keepalive_count = 0\n", &cfg) == NULL);
    CHECK_INT_EQ(cfg.qemu_keepalive_interval, -1);
    CHECK_INT_EQ(cfg.qemu_keepalive_count, 0);
    rvs_config_free(&cfg);
}

/* The memory budget's three keys take bytes, as the other byte limits. */
static void test_memory_budget_keys(void)
{
    rvs_config cfg;
    CHECK(parse("memory_budget_bytes = 67108864\n"
                "memory_budget_readonly_bytes = 16777216\n"
                "memory_budget_user_bytes = 4194304\n", &cfg) == NULL);
    CHECK_UINT_EQ(cfg.memory_budget_bytes, 64u << 20);
    CHECK_UINT_EQ(cfg.memory_budget_readonly_bytes, 16u << 20);
    CHECK_UINT_EQ(cfg.memory_budget_user_bytes, 4u << 20);
    rvs_config_free(&cfg);
    expect_error("memory_budget_user_bytes = 100\n",
                 "remvirtd.conf:1: memory_budget_user_bytes: expected a number of bytes from "
                 "4096 to 1099511627776");
}

static void test_network_keys(void)
{
    rvs_config cfg;
    const char *text =
        "listen_tcp = 1\n"
        "listen_tls = 1\n"
        "tcp_port = \"1234\"\n"
        "tls_port = 2345\n"
        "listen_addr = \"::1\"\n"
        "tls_no_verify_certificate = 0\n"
        "tls_no_sanity_certificate = 1\n"
        "tls_allowed_dn_list = [\"C=GB,O=remvirt,CN=*\",   # one per line\n"
        "                       'CN=admin, with a comma]'\n"
        "                      ]\n"
        "tls_handshake_timeout = 5\n";
    CHECK(parse(text, &cfg) == NULL);
    CHECK_INT_EQ(cfg.listen_tcp, 1);
    CHECK_INT_EQ(cfg.listen_tls, 1);
    CHECK_STR_EQ(cfg.tcp_port, "1234");
    CHECK_STR_EQ(cfg.tls_port, "2345");
    CHECK_STR_EQ(cfg.listen_addr, "::1");
    CHECK_INT_EQ(cfg.tls_no_sanity_certificate, 1);
    CHECK(cfg.tls_allowed_dn_list != NULL);
    if (cfg.tls_allowed_dn_list) {
        CHECK_STR_EQ(cfg.tls_allowed_dn_list[0], "C=GB,O=remvirt,CN=*");
        CHECK_STR_EQ(cfg.tls_allowed_dn_list[1], "CN=admin, with a comma]");
        CHECK(cfg.tls_allowed_dn_list[2] == NULL);
    }
    CHECK_INT_EQ(cfg.tls_handshake_timeout, 5);
    rvs_config_free(&cfg);

    /* An empty list allows nobody; a later setting replaces an earlier one. */
    CHECK(parse("tls_allowed_dn_list = [\"a\"]\ntls_allowed_dn_list = []\n", &cfg) == NULL);
    CHECK(cfg.tls_allowed_dn_list != NULL && cfg.tls_allowed_dn_list[0] == NULL);
    rvs_config_free(&cfg);

    /* A comma after the last item, as libvirtd.conf allows; then the
     * setting on the next line is read as its own. */
    CHECK(parse("tls_allowed_dn_list = [\n  \"CN=a\",\n  \"CN=b\",\n]\nlisten_tls = 1\n",
                &cfg) == NULL);
    CHECK(cfg.tls_allowed_dn_list != NULL);
    if (cfg.tls_allowed_dn_list) {
        CHECK_STR_EQ(cfg.tls_allowed_dn_list[0], "CN=a");
        CHECK_STR_EQ(cfg.tls_allowed_dn_list[1], "CN=b");
        CHECK(cfg.tls_allowed_dn_list[2] == NULL);
    }
    CHECK_INT_EQ(cfg.listen_tls, 1);
    rvs_config_free(&cfg);
    expect_error("tls_allowed_dn_list = [\"a\",,]\n",
                 "remvirtd.conf:1: tls_allowed_dn_list: expected a list of quoted strings, such as [\"a\", \"b\"]");

    expect_error("listen_tls = 2\n", "remvirtd.conf:1: listen_tls: expected 0 or 1");
    expect_error("tcp_port = \"http\"\n",
                 "remvirtd.conf:1: tcp_port: expected a port number from 1 to 65535");
    expect_error("tls_port = 70000\n",
                 "remvirtd.conf:1: tls_port: expected a port number from 1 to 65535");
    expect_error("tls_allowed_dn_list = \"CN=x\"\n",
                 "remvirtd.conf:1: tls_allowed_dn_list: expected a list of quoted strings, such as [\"a\", \"b\"]");
    expect_error("tls_allowed_dn_list = [\"a\" \"b\"]\n",
                 "remvirtd.conf:1: tls_allowed_dn_list: expected ',' or ']' after a list item");
    expect_error("\ntls_allowed_dn_list = [\"a\",\n",
                 "remvirtd.conf:2: tls_allowed_dn_list: expected a list of quoted strings, such as [\"a\", \"b\"]");
    expect_error("tls_allowed_dn_list = [\"a\"] x\n",
                 "remvirtd.conf:1: tls_allowed_dn_list: unexpected text after the closing ']'");
    expect_error("max_clients = [1]\n", "remvirtd.conf:1: max_clients: expected a single value, not a list");
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
    expect_error("auth_unix_rw = \"kerberos\"\n",
                 "remvirtd.conf:1: auth_unix_rw: expected \"none\" or \"sasl\"");
    expect_error("auth_tcp = \"polkit\"\n",
                 "remvirtd.conf:1: auth_tcp: polkit is not supported (use \"none\" or \"sasl\")");
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
    test_network_keys();
    test_memory_budget_keys();
    test_bad_lines();
    test_load_file();
    return 0;
}
