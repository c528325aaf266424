/* rvsh: the secret commands: secret-list, secret-dumpxml, secret-define,
 * secret-undefine, secret-set-value and secret-get-value. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gnutls/gnutls.h>

#include "rvsh.h"

/* What virsh prints for a secret's usage type. */
static const char *usage_name(int type)
{
    static const char *const names[] = { "none", "volume", "ceph", "iscsi", "tls", "vtpm" };
    return type >= 0 && type < (int)(sizeof(names) / sizeof(names[0])) ? names[type] : "unknown";
}

static int compare_secrets(const void *pa, const void *pb)
{
    return strcmp(((const rv_secret_ref *)pa)->uuid, ((const rv_secret_ref *)pb)->uuid);
}

static int cmd_secret_list(shell *sh, const command *cmd, const cmd_args *a)
{
    /* libvirt's EPHEMERAL 1, NO_EPHEMERAL 2, PRIVATE 4, NO_PRIVATE 8, in
     * the options' order. */
    unsigned int flags = 0;
    for (unsigned int k = 0; k < 4; k++)
        if (a->opts & (1u << k))
            flags |= 1u << k;
    rv_secret_ref *secrets = NULL;
    int n = rv_connect_list_all_secrets(sh->conn, &secrets, flags);
    if (n < 0) {
        list_failed(sh, rv_connect_num_of_secrets, "secrets");
        return -1;
    }
    qsort(secrets, (size_t)n, sizeof(*secrets), compare_secrets);
    char **usages = calloc((size_t)n + 1, sizeof(*usages));
    const char **cells = calloc((size_t)n * 2 + 1, sizeof(*cells));
    int rc = usages && cells ? 0 : -1;
    for (int i = 0; rc == 0 && i < n; i++) {
        if (secrets[i].usage_type == 0)
            usages[i] = strdup("Unused");
        else if (asprintf(&usages[i], "%s %s", usage_name(secrets[i].usage_type),
                          secrets[i].usage_id) < 0)
            usages[i] = NULL;
        rc = usages[i] ? 0 : -1;
        cells[i * 2] = secrets[i].uuid;
        cells[i * 2 + 1] = usages[i];
    }
    if (rc < 0) {
        error_line("out of memory");
    } else if (sh->json || has_opt(cmd, a, "json")) {
        putchar('[');
        for (int i = 0; i < n; i++) {
            int first = 1;
            printf("%s{", i ? ", " : "");
            json_str_field("uuid", secrets[i].uuid, &first);
            json_str_field("usage_type", usage_name(secrets[i].usage_type), &first);
            json_str_field("usage_id", secrets[i].usage_id, &first);
            putchar('}');
        }
        puts("]");
    } else {
        static const char *const heads[] = { "UUID", "Usage" };
        print_table(heads, 2, cells, (size_t)n);
    }
    for (int i = 0; usages && i < n; i++)
        free(usages[i]);
    free(usages);
    free(cells);
    rv_secret_refs_free(secrets, n);
    return rc;
}

/* The secret named by its UUID, with virsh's error lines when not found. */
static int lookup_secret(shell *sh, const char *text, rv_secret_ref *secret)
{
    if (rv_secret_lookup_by_uuid_string(sh->conn, text, secret) == 0)
        return 0;
    const rv_error_info *e = rv_last_error();
    error_line("failed to get secret '%s'", text);
    /* Not a UUID: virsh's library refuses it before asking the server,
     * in these words. */
    if (e && e->code == RV_ERROR_INVALID_ARG)
        error_line("uuidstr in virSecretLookupByUUIDString must be a valid UUID");
    else
        lib_error();
    return -1;
}

static int cmd_secret_dumpxml(shell *sh, const command *cmd, const cmd_args *a)
{
    (void)cmd;
    rv_secret_ref secret = { .usage_id = NULL };
    if (lookup_secret(sh, a->value, &secret) < 0)
        return -1;
    char *xml = rv_secret_get_xml_desc(sh->conn, &secret, 0);
    if (xml)
        fputs(xml, stdout);
    else
        lib_error();
    free(xml);
    free(secret.usage_id);
    return xml ? 0 : -1;
}

static int cmd_secret_define(shell *sh, const command *cmd, const cmd_args *a)
{
    char *xml;
    if (read_file(a->value, &xml) < 0)
        return -1;
    rv_secret_ref secret = { .usage_id = NULL };
    int rc = rv_secret_define_xml(sh->conn, xml, has_opt(cmd, a, "validate") ? 1 : 0, &secret);
    free(xml);
    if (rc < 0) {
        error_line("Failed to set attributes from %s", a->value);
        lib_error();
        return -1;
    }
    printf("Secret %s created\n", secret.uuid);
    free(secret.usage_id);
    return 0;
}

static int cmd_secret_undefine(shell *sh, const command *cmd, const cmd_args *a)
{
    (void)cmd;
    rv_secret_ref secret = { .usage_id = NULL };
    if (lookup_secret(sh, a->value, &secret) < 0)
        return -1;
    int rc = rv_secret_undefine(sh->conn, &secret);
    if (rc < 0) {
        error_line("Failed to delete secret %s", a->value);
        lib_error();
    } else {
        printf("Secret %s deleted\n", a->value);
    }
    free(secret.usage_id);
    return rc;
}

/* virsh reads a value file whole, refusing one over this many bytes. */
#define SECRET_FILE_MAX 1024

/* The file's bytes (any, NULs too) into *data, *size; virsh's error lines. */
static int read_value_file(const char *path, unsigned char **data, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        error_line("Failed to open file '%s': %s", path, strerror(errno));
        return -1;
    }
    unsigned char *buf = malloc(SECRET_FILE_MAX + 1);
    size_t n = buf ? fread(buf, 1, SECRET_FILE_MAX + 1, f) : 0;
    int failed = !buf || ferror(f), saved = errno;
    fclose(f);
    if (failed || n > SECRET_FILE_MAX) {
        if (!buf)
            error_line("out of memory");
        else
            error_line("Failed to read file '%s': %s", path, strerror(failed ? saved : EOVERFLOW));
        free(buf);
        return -1;
    }
    *data = buf;
    *size = n;
    return 0;
}

/* Base64 read as virsh reads it (glib's g_base64_decode), so that any
 * text gives the bytes virsh would send: characters outside the alphabet
 * are skipped, '=' counts as a zero digit that drops the bytes it pads,
 * and a last group short of four digits is dropped.  gnutls' decoder
 * refuses such text instead, so it cannot give virsh's results.  The
 * output is at most 3/4 of the input: decoded in place. */
static size_t decode_base64_as_virsh(unsigned char *text, size_t len)
{
    static const char alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    unsigned long group = 0;
    int digits = 0, pad_last = 0, pad_before_last = 0;
    size_t out = 0;
    for (size_t i = 0; i < len; i++) {
        const char *at = text[i] ? strchr(alphabet, text[i]) : NULL;
        if (!at && text[i] != '=')
            continue;
        pad_before_last = pad_last;
        pad_last = text[i] == '=';
        group = (group << 6) | (at ? (unsigned long)(at - alphabet) : 0);
        if (++digits < 4)
            continue;
        text[out++] = (unsigned char)(group >> 16);
        if (!pad_before_last)
            text[out++] = (unsigned char)(group >> 8);
        if (!pad_last)
            text[out++] = (unsigned char)group;
        digits = 0;
        group = 0;
    }
    return out;
}

/* The value comes from --base64 TEXT (or TEXT alone, as virsh takes it),
 * or --file FILE; base64 unless --plain. */
static int cmd_secret_set_value(shell *sh, const command *cmd, const cmd_args *a)
{
    const char *file = opt_value(cmd, a, "file");
    const char *base64 = a->value2;
    int interactive = has_opt(cmd, a, "interactive");
    /* virsh's checks, in its order. */
    const char *clash = file && base64 ? "--file and --base64"
                      : interactive && base64 ? "--interactive and --base64"
                      : interactive && file ? "--interactive and --file" : NULL;
    if (clash) {
        error_line("Options %s are mutually exclusive", clash);
        return -1;
    }
    rv_secret_ref secret = { .usage_id = NULL };
    if (lookup_secret(sh, a->value, &secret) < 0)
        return -1;
    const char *empty = base64 && !*base64 ? "base64" : file && !*file ? "file" : NULL;
    unsigned char *text = NULL;
    size_t text_len = 0;
    int rc = -1;
    if (empty) {
        error_line("Failed to get option '%s': Option argument is empty", empty);
    } else if (base64) {
        error_line("Passing secret value as command-line argument is insecure!");
        text = (unsigned char *)strdup(base64);
        text_len = strlen(base64);
        if (!text)
            error_line("out of memory");
    } else if (file) {
        read_value_file(file, &text, &text_len);
    } else if (interactive) {
        error_line("--interactive is not supported by rvsh: use --file");
    } else {
        error_line("Input secret value is missing");
    }
    if (text) {
        size_t size = has_opt(cmd, a, "plain") ? text_len : decode_base64_as_virsh(text, text_len);
        rc = rv_secret_set_value(sh->conn, &secret, text, size, 0);
        if (rc < 0) {
            error_line("Failed to set secret value");
            lib_error();
        } else {
            puts("Secret value set");
        }
        /* The value was a secret: not left in freed memory. */
        memset(text, 0, text_len);
    }
    free(text);
    free(secret.usage_id);
    return rc;
}

static int cmd_secret_get_value(shell *sh, const command *cmd, const cmd_args *a)
{
    rv_secret_ref secret = { .usage_id = NULL };
    if (lookup_secret(sh, a->value, &secret) < 0)
        return -1;
    unsigned char *value = NULL;
    size_t size = 0;
    int rc = rv_secret_get_value(sh->conn, &secret, &value, &size, 0);
    free(secret.usage_id);
    if (rc < 0) {
        lib_error();
        return -1;
    }
    gnutls_datum_t in = { .data = value, .size = (unsigned int)size };
    gnutls_datum_t b64 = { .data = NULL, .size = 0 };
    int plain = has_opt(cmd, a, "plain");
    if (plain) {
        /* The bytes as they are; the line ends with the blank line
         * after every command, as in virsh. */
        if (fwrite(value, 1, size, stdout) != size) {
            error_line("failed to write secret");
            rc = -1;
        }
    } else if (size > 0 && gnutls_base64_encode2(&in, &b64) < 0) {
        error_line("out of memory");
        rc = -1;
    } else if (sh->json || has_opt(cmd, a, "json")) {
        int first = 1;
        putchar('{');
        json_str_field("value", b64.data ? (const char *)b64.data : "", &first);
        puts("}");
    } else {
        /* No newline: the one after every command ends the line, as in virsh. */
        printf("%.*s", (int)b64.size, b64.data ? (const char *)b64.data : "");
    }
    gnutls_free(b64.data);
    /* The value was a secret: not left in freed memory. */
    memset(value, 0, size);
    free(value);
    return rc;
}

static const char *const opts_secret_list[] = {
    "ephemeral", "no-ephemeral", "private", "no-private", "json", NULL,
};

static const char *const opts_secret_define[] = { "validate", NULL };
static const char *const opts_secret_set_value[] = {
    "file=", "plain", "interactive", NULL,
};
static const char *const opts_secret_get_value[] = { "plain", "json", NULL };

const command rvsh_secret_commands[] = {
    { .name = "secret-list", .run = cmd_secret_list,
      .options = opts_secret_list,
      .summary = "list secrets (--ephemeral, --no-ephemeral, --private, --no-private: only those)" },
    { .name = "secret-dumpxml", .run = cmd_secret_dumpxml, .arg = "secret",
      .summary = "secret attributes in XML (by UUID)" },
    { .name = "secret-define", .run = cmd_secret_define, .arg = "file",
      .options = opts_secret_define,
      .summary = "define or modify a secret from an XML file" },
    { .name = "secret-undefine", .run = cmd_secret_undefine, .arg = "secret",
      .summary = "undefine a secret (by UUID)" },
    { .name = "secret-set-value", .run = cmd_secret_set_value, .arg = "secret",
      .arg2 = "base64", .options = opts_secret_set_value,
      .summary = "set a secret's value: [--base64] TEXT, or --file FILE (base64; --plain: the bytes)" },
    { .name = "secret-get-value", .run = cmd_secret_get_value, .arg = "secret",
      .options = opts_secret_get_value,
      .summary = "a secret's value in base64 (--plain: the bytes)" },
    { .name = NULL },
};
