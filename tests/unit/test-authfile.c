/* The auth file reader: GLib key-file syntax as libvirt reads auth.conf,
 * the host's group before [auth-libvirt-default], errors that name the
 * file and line (without showing a line that may be a secret), reading
 * files, and which file is read. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "client/authfile.h"

static rvc_authfile *parse(const char *text)
{
    rv_err err = { 0 };
    rvc_authfile *f = rvc_authfile_parse("auth.conf", text, strlen(text), &err);
    if (!f)
        check_fail(__FILE__, __LINE__, "parse failed: %s", err.message);
    return f;
}

/* The value of key for host, which must be found. */
static const char *get(const rvc_authfile *f, const char *host, const char *key)
{
    const char *value = NULL;
    rv_err err = { 0 };
    if (rvc_authfile_lookup(f, "libvirt", host, key, &value, &err) < 0)
        check_fail(__FILE__, __LINE__, "lookup %s/%s failed: %s", host ? host : "(null)", key,
                   err.message);
    return value;
}

/* The error text of a file that must not parse; checks code and domain. */
static char *parse_error(const char *text, size_t len)
{
    rv_err err = { 0 };
    rvc_authfile *f = rvc_authfile_parse("bad.conf", text, len, &err);
    if (f)
        check_fail(__FILE__, __LINE__, "'%s' parsed", text);
    CHECK_INT_EQ(err.code, RV_ERR_CONF_SYNTAX);
    CHECK_INT_EQ(err.domain, RV_FROM_CONF);
    return err.message;
}

/* A literal's bytes, NULs included. */
#define PARSE_ERROR(literal) parse_error(literal, sizeof(literal) - 1)

static void test_syntax(void)
{
    rvc_authfile *f = parse(
        "# a comment\n"
        "   # an indented comment\n"
        "\n"
        "  \t \n"
        "[credentials-fred]\n"
        "authname = fred\n"
        "  password\t=\t  first\n"
        "password=sp\\sace\\ttab\\\\back\\qodd\\\n"
        "trailing = kept  \n"
        "password[de] = localised keys are other keys\n"
        "[auth-libvirt-default]  \r\n"
        "credentials=fred\r\n"
        "[credentials-fred]\n"
        "realm = merged group\n");
    CHECK_STR_EQ(rvc_authfile_name(f), "auth.conf");
    CHECK_STR_EQ(get(f, "any.example", "authname"), "fred");
    /* The later value wins; \s \t \\ unescape, \q stays, an end
     * backslash goes, as GLib reads them. */
    CHECK_STR_EQ(get(f, "any.example", "password"), "sp ace\ttab\\back\\qodd");
    CHECK_STR_EQ(get(f, "any.example", "trailing"), "kept  ");
    CHECK_STR_EQ(get(f, "any.example", "realm"), "merged group");
    CHECK(get(f, "any.example", "username") == NULL);
    rvc_authfile_free(f);

    /* Empty input, and a file that ends without a newline. */
    f = parse("");
    CHECK(get(f, "h", "password") == NULL);
    rvc_authfile_free(f);
    f = parse("[auth-libvirt-h]\ncredentials=c\n[credentials-c]\npassword=last line");
    CHECK_STR_EQ(get(f, "h", "password"), "last line");
    rvc_authfile_free(f);
}

static void test_lookup(void)
{
    rvc_authfile *f = parse(
        "[credentials-prod]\n"
        "authname=admin\n"
        "password=prod-secret\n"
        "[credentials-test]\n"
        "username=tester\n"
        "password=test-secret\n"
        "[auth-libvirt-prod.example.com]\n"
        "credentials=prod\n"
        "[auth-libvirt-localhost]\n"
        "credentials=test\n"
        "[auth-libvirt-default]\n"
        "credentials=test\n"
        "[auth-ssh-prod.example.com]\n"
        "credentials=test\n");
    /* The host's own group before the default one. */
    CHECK_STR_EQ(get(f, "prod.example.com", "authname"), "admin");
    CHECK_STR_EQ(get(f, "prod.example.com", "password"), "prod-secret");
    CHECK_STR_EQ(get(f, "other.example.com", "password"), "test-secret");
    /* No host is localhost. */
    CHECK_STR_EQ(get(f, NULL, "username"), "tester");
    /* Host names are matched exactly, as GLib's group names. */
    CHECK_STR_EQ(get(f, "PROD.example.com", "password"), "test-secret");
    rvc_authfile_free(f);

    /* Neither the host nor default: nothing, and no error. */
    f = parse("[auth-libvirt-a]\ncredentials=x\n[credentials-x]\npassword=p\n");
    CHECK(get(f, "b", "password") == NULL);
    rvc_authfile_free(f);

    /* A group without credentials=, or naming a set that is missing. */
    rv_err err = { 0 };
    const char *value = "untouched";
    f = parse("[credentials-x]\npassword=p\n\n[auth-libvirt-h]\nnothing=here\n");
    CHECK_INT_EQ(rvc_authfile_lookup(f, "libvirt", "h", "password", &value, &err), -1);
    CHECK(value == NULL);
    CHECK_INT_EQ(err.code, RV_ERR_CONF_SYNTAX);
    CHECK_STR_HAS(err.message, "auth.conf:4: [auth-libvirt-h] has no 'credentials' key");
    rv_err_clear(&err);
    rvc_authfile_free(f);

    f = parse("[auth-libvirt-default]\ncredentials=ghost\n");
    CHECK_INT_EQ(rvc_authfile_lookup(f, "libvirt", "h", "password", &value, &err), -1);
    CHECK_STR_HAS(err.message, "auth.conf:1: [auth-libvirt-default] names credentials 'ghost'");
    CHECK_STR_HAS(err.message, "no [credentials-ghost]");
    rv_err_clear(&err);
    rvc_authfile_free(f);
}

static void test_malformed(void)
{
    char *m = PARSE_ERROR("[credentials-x]\nauthname=fred\npassword hunter2\n");
    CHECK_STR_HAS(m, "bad.conf:3: ");
    CHECK_STR_HAS(m, "not a [group], a key = value or a # comment");
    /* The line may be a mistyped secret: it is not repeated. */
    CHECK(strstr(m, "hunter2") == NULL);
    free(m);

    m = PARSE_ERROR("password=p\n[g]\n");
    CHECK_STR_HAS(m, "bad.conf:1: key 'password' comes before the first [group]");
    free(m);

    m = PARSE_ERROR("[g]\nk=v\n[]\n");
    CHECK_STR_HAS(m, "bad.conf:3: bad group name");
    free(m);

    m = PARSE_ERROR("[g]\n\n\n[g]x\n");
    CHECK_STR_HAS(m, "bad.conf:4: ");
    free(m);

    m = PARSE_ERROR("[g\nk=v\n");
    CHECK_STR_HAS(m, "bad.conf:1: ");
    free(m);

    m = PARSE_ERROR("[g]\n = value without a key\n");
    CHECK_STR_HAS(m, "bad.conf:2: ");
    free(m);

    m = PARSE_ERROR("[g]\r\n; not a comment for GLib\r\n");
    CHECK_STR_HAS(m, "bad.conf:2: ");
    free(m);

    m = PARSE_ERROR("[g]\nk=a\0b\n");
    CHECK_STR_HAS(m, "bad.conf:2: the line holds a NUL byte");
    free(m);
}

static char tmpdir[] = "/tmp/test-authfile.XXXXXX";

static char *path_in(const char *name)
{
    char *p;
    if (asprintf(&p, "%s/%s", tmpdir, name) < 0)
        abort();
    return p;
}

static char *write_file(const char *name, const char *text, size_t len)
{
    char *p = path_in(name);
    FILE *fp = fopen(p, "w");
    CHECK(fp != NULL);
    CHECK_UINT_EQ(fwrite(text, 1, len, fp), len);
    CHECK_INT_EQ(fclose(fp), 0);
    return p;
}

static void test_load(void)
{
    const char *text =
        "[auth-libvirt-default]\ncredentials=c\n[credentials-c]\npassword=from file\n";
    char *good = write_file("good.conf", text, strlen(text));
    rv_err err = { 0 };
    rvc_authfile *f = rvc_authfile_load(good, &err);
    CHECK(f != NULL);
    CHECK_STR_EQ(rvc_authfile_name(f), good);
    CHECK_STR_EQ(get(f, "h", "password"), "from file");
    rvc_authfile_free(f);

    /* Errors in a file name the file. */
    char *bad = write_file("bad.conf", "[g]\nk=v\nnonsense\n", 17);
    CHECK(rvc_authfile_load(bad, &err) == NULL);
    char where[512];
    snprintf(where, sizeof(where), "%s:3: ", bad);
    CHECK_STR_HAS(err.message, where);
    rv_err_clear(&err);

    char *missing = path_in("missing.conf");
    CHECK(rvc_authfile_load(missing, &err) == NULL);
    CHECK_INT_EQ(err.code, RV_ERR_SYSTEM_ERROR);
    CHECK_STR_HAS(err.message, missing);
    CHECK_STR_HAS(err.message, "No such file");
    rv_err_clear(&err);

    CHECK(rvc_authfile_load(tmpdir, &err) == NULL);
    CHECK_STR_HAS(err.message, "is a directory");
    rv_err_clear(&err);

    /* /dev/null is an empty file: no credentials, no error. */
    f = rvc_authfile_load("/dev/null", &err);
    CHECK(f != NULL);
    CHECK(get(f, "h", "password") == NULL);
    rvc_authfile_free(f);

    /* The size limit holds for what is read, not what stat says. */
    size_t big_len = RVC_AUTHFILE_MAX + 1;
    char *big_text = malloc(big_len);
    CHECK(big_text != NULL);
    memset(big_text, '#', big_len);
    char *big = write_file("big.conf", big_text, big_len);
    CHECK(rvc_authfile_load(big, &err) == NULL);
    CHECK_STR_HAS(err.message, "larger than");
    rv_err_clear(&err);
    /* Exactly at the limit is fine (all one comment line). */
    CHECK_INT_EQ(truncate(big, RVC_AUTHFILE_MAX), 0);
    f = rvc_authfile_load(big, &err);
    CHECK(f != NULL);
    rvc_authfile_free(f);

    unlink(good);
    unlink(bad);
    unlink(big);
    free(big_text);
    free(good);
    free(bad);
    free(missing);
    free(big);
}

static char *locate(const char *uri_param)
{
    char *path = (char *)"unset";
    rv_err err = { 0 };
    CHECK_INT_EQ(rvc_authfile_locate(uri_param, &path, &err), 0);
    return path;
}

static void test_locate(void)
{
    char *xdg = path_in("xdg");
    char *home = path_in("home");
    CHECK_INT_EQ(mkdir(xdg, 0700), 0);
    char *xdg_dir = path_in("xdg/remvirt");
    CHECK_INT_EQ(mkdir(xdg_dir, 0700), 0);
    char *xdg_file = write_file("xdg/remvirt/auth.conf", "", 0);
    CHECK_INT_EQ(mkdir(home, 0700), 0);
    char *home_dirs[] = { path_in("home/.config"), path_in("home/.config/remvirt") };
    CHECK_INT_EQ(mkdir(home_dirs[0], 0700), 0);
    CHECK_INT_EQ(mkdir(home_dirs[1], 0700), 0);
    char *home_file = write_file("home/.config/remvirt/auth.conf", "", 0);

    setenv("HOME", home, 1);
    setenv("XDG_CONFIG_HOME", xdg, 1);
    setenv(RVC_AUTHFILE_ENV, "/from/env.conf", 1);
    /* The variable first, even over authfile= and even if missing. */
    char *p = locate("/from/uri.conf");
    CHECK_STR_EQ(p, "/from/env.conf");
    free(p);
    /* An empty variable counts as unset. */
    setenv(RVC_AUTHFILE_ENV, "", 1);
    p = locate("/from/uri.conf");
    CHECK_STR_EQ(p, "/from/uri.conf");
    free(p);
    unsetenv(RVC_AUTHFILE_ENV);
    p = locate(NULL);
    CHECK_STR_EQ(p, xdg_file);
    free(p);
    /* Without XDG_CONFIG_HOME, ~/.config. */
    unsetenv("XDG_CONFIG_HOME");
    p = locate(NULL);
    CHECK_STR_EQ(p, home_file);
    free(p);
    /* A default file that does not exist is skipped: the system one, or
     * none at all. */
    unlink(home_file);
    p = locate(NULL);
    if (access(RVC_AUTHFILE_SYSTEM, F_OK) == 0)
        CHECK_STR_EQ(p, RVC_AUTHFILE_SYSTEM);
    else
        CHECK(p == NULL);
    free(p);

    unlink(xdg_file);
    rmdir(xdg_dir);
    rmdir(xdg);
    rmdir(home_dirs[1]);
    rmdir(home_dirs[0]);
    rmdir(home);
    free(xdg);
    free(xdg_dir);
    free(xdg_file);
    free(home);
    free(home_dirs[0]);
    free(home_dirs[1]);
    free(home_file);
}

int main(void)
{
    test_syntax();
    test_lookup();
    test_malformed();
    CHECK(mkdtemp(tmpdir) != NULL);
    test_load();
    test_locate();
    CHECK_INT_EQ(rmdir(tmpdir), 0);
    return 0;
}
