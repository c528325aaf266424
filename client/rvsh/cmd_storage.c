/* rvsh: the storage pool and volume commands, with vol-upload and vol-download over streams. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <libxml/parser.h>

#include "rvsh.h"

/* virsh's order: a UUID first (when the text is one), then a name. */
static rv_pool *lookup_pool_by(shell *sh, const char *text, unsigned int how)
{
    rv_pool *pool = NULL;
    int tried = 0;
    if ((how & BY_UUID) && strlen(text) == RV_UUID_STRING_BUFLEN - 1) {
        tried = 1;
        pool = rv_storage_pool_lookup_by_uuid_string(sh->conn, text);
    }
    if (!pool && (how & BY_NAME)) {
        tried = 1;
        pool = rv_storage_pool_lookup_by_name(sh->conn, text);
    }
    if (!pool) {
        const rv_error_info *e = rv_last_error();
        error_line("failed to get pool '%s'", text);
        /* A text that is no UUID was never sent: nothing more to say. */
        if (tried && e && e->code != RV_ERROR_INVALID_ARG)
            lib_error();
    }
    return pool;
}

rv_pool *lookup_pool(shell *sh, const char *text)
{
    return lookup_pool_by(sh, text, BY_UUID | BY_NAME);
}

/* virsh's order for a volume: by name in --pool (when given), then by
 * key, then by path; the last failure is the one reported. */
static rv_vol *lookup_vol(shell *sh, const command *cmd, const cmd_args *a)
{
    const char *pool_name = NULL, *text = a->value;
    int takes_pool = 0;
    for (unsigned int k = 0; cmd->options && cmd->options[k]; k++) {
        /* vol-create-from names its input volume's pool --inputpool */
        if (strcmp(cmd->options[k], "pool=") != 0 && strcmp(cmd->options[k], "inputpool=") != 0)
            continue;
        takes_pool = 1;
        if (a->opts & (1u << k))
            pool_name = a->opt_values[k];
    }
    rv_vol *vol = NULL;
    if (pool_name) {
        rv_pool *pool = lookup_pool(sh, pool_name);
        if (!pool)
            return NULL;
        vol = rv_storage_vol_lookup_by_name(pool, text);
        rv_storage_pool_free(pool);
    }
    if (!vol)
        vol = rv_storage_vol_lookup_by_key(sh->conn, text);
    if (!vol)
        vol = rv_storage_vol_lookup_by_path(sh->conn, text);
    if (!vol) {
        if (takes_pool && !pool_name && text[0] == '/')
            error_line("failed to get vol '%s', specifying --pool might help", text);
        else
            error_line("failed to get vol '%s'", text);
        lib_error();
    }
    return vol;
}

static const char *pool_state_name(int state)
{
    static const char *const names[] = { "inactive", "building", "running", "degraded",
                                         "inaccessible" };
    return state >= 0 && state < 5 ? names[state] : "unknown";
}

static const char *vol_type_name(int type)
{
    static const char *const names[] = { "file", "block", "dir", "network", "netdir", "ploop" };
    return type >= 0 && type < 6 ? names[type] : "unknown";
}

static int compare_pools(const void *pa, const void *pb)
{
    return strcasecmp(rv_storage_pool_get_name(*(rv_pool *const *)pa),
                      rv_storage_pool_get_name(*(rv_pool *const *)pb));
}

static int compare_vols(const void *pa, const void *pb)
{
    return strcasecmp(rv_storage_vol_get_name(*(rv_vol *const *)pa),
                      rv_storage_vol_get_name(*(rv_vol *const *)pb));
}

static int cmd_pool_list(shell *sh, const command *cmd, const cmd_args *a)
{
    unsigned int flags = RV_CONNECT_LIST_STORAGE_POOLS_ACTIVE;
    if (has_opt(cmd, a, "all"))
        flags = 0;
    else if (has_opt(cmd, a, "inactive"))
        flags = RV_CONNECT_LIST_STORAGE_POOLS_INACTIVE;
    rv_pool **pools = NULL;
    int n = rv_connect_list_all_storage_pools(sh->conn, &pools, flags);
    if (n < 0) {
        error_line("Failed to list pools");
        lib_error();
        return -1;
    }
    qsort(pools, (size_t)n, sizeof(*pools), compare_pools);
    const char **cells = calloc((size_t)n * 3 + 1, sizeof(*cells));
    int *persistent = calloc((size_t)n + 1, sizeof(*persistent));
    int rc = cells && persistent ? 0 : -1;
    if (rc < 0)
        error_line("out of memory");
    for (int i = 0; rc == 0 && i < n; i++) {
        int active = rv_storage_pool_is_active(pools[i]), autostart = 0;
        persistent[i] = rv_storage_pool_is_persistent(pools[i]);
        if (active < 0 || persistent[i] < 0 ||
            rv_storage_pool_get_autostart(pools[i], &autostart) < 0) {
            lib_error();
            rc = -1;
            break;
        }
        cells[i * 3] = rv_storage_pool_get_name(pools[i]);
        cells[i * 3 + 1] = active ? "active" : "inactive";
        cells[i * 3 + 2] = yes_no(autostart);
    }
    if (rc == 0 && (sh->json || has_opt(cmd, a, "json"))) {
        putchar('[');
        for (int i = 0; i < n; i++) {
            char uuid[RV_UUID_STRING_BUFLEN];
            int first = 1;
            rv_storage_pool_get_uuid_string(pools[i], uuid);
            printf("%s{", i ? ", " : "");
            json_str_field("name", cells[i * 3], &first);
            json_str_field("uuid", uuid, &first);
            json_str_field("state", cells[i * 3 + 1], &first);
            json_bool_field("autostart", strcmp(cells[i * 3 + 2], "yes") == 0, &first);
            json_bool_field("persistent", persistent[i], &first);
            putchar('}');
        }
        puts("]");
    } else if (rc == 0) {
        static const char *const heads[] = { "Name", "State", "Autostart" };
        print_table(heads, 3, cells, (size_t)n);
    }
    for (int i = 0; i < n; i++)
        rv_storage_pool_free(pools[i]);
    free(pools);
    free(cells);
    free(persistent);
    return rc;
}

static int cmd_pool_info(shell *sh, const command *cmd, const cmd_args *a)
{
    rv_pool *pool = lookup_pool(sh, a->value);
    if (!pool)
        return -1;
    char uuid[RV_UUID_STRING_BUFLEN];
    rv_storage_pool_get_uuid_string(pool, uuid);
    rv_storage_pool_info info;
    if (rv_storage_pool_get_info(pool, &info) < 0) {
        lib_error();
        rv_storage_pool_free(pool);
        return -1;
    }
    /* Each query may fail alone; virsh then prints a stand-in. */
    int persistent = rv_storage_pool_is_persistent(pool), autostart = -1;
    if (rv_storage_pool_get_autostart(pool, &autostart) < 0)
        autostart = -1;
    int sizes = info.state == RV_STORAGE_POOL_RUNNING || info.state == RV_STORAGE_POOL_DEGRADED;
    if (sh->json || has_opt(cmd, a, "json")) {
        int first = 1;
        putchar('{');
        json_str_field("name", rv_storage_pool_get_name(pool), &first);
        json_str_field("uuid", uuid, &first);
        json_str_field("state", pool_state_name(info.state), &first);
        if (persistent >= 0)
            json_bool_field("persistent", persistent, &first);
        if (autostart >= 0)
            json_bool_field("autostart", autostart, &first);
        json_num_field("capacity", info.capacity, sizes, &first);
        json_num_field("allocation", info.allocation, sizes, &first);
        json_num_field("available", info.available, sizes, &first);
        puts("}");
    } else {
        printf("%-15s %s\n", "Name:", rv_storage_pool_get_name(pool));
        printf("%-15s %s\n", "UUID:", uuid);
        printf("%-15s %s\n", "State:", pool_state_name(info.state));
        printf("%-15s %s\n", "Persistent:", persistent < 0 ? "unknown" : yes_no(persistent));
        printf("%-15s %s\n", "Autostart:", autostart < 0 ? "no autostart" : yes_no(autostart));
        if (sizes) {
            print_size("Capacity:", info.capacity);
            print_size("Allocation:", info.allocation);
            print_size("Available:", info.available);
        }
    }
    rv_storage_pool_free(pool);
    return 0;
}

static int cmd_pool_dumpxml(shell *sh, const command *cmd, const cmd_args *a)
{
    (void)cmd;
    rv_pool *pool = lookup_pool(sh, a->value);
    if (!pool)
        return -1;
    char *xml = rv_storage_pool_get_xml_desc(pool, 0);
    if (xml)
        fputs(xml, stdout);
    else
        lib_error();
    free(xml);
    rv_storage_pool_free(pool);
    return xml ? 0 : -1;
}

/* pool-define and pool-create: a pool from an XML file. */
static int cmd_pool_define(shell *sh, const command *cmd, const cmd_args *a)
{
    int create = strcmp(cmd->name, "pool-create") == 0;
    char *xml;
    if (read_file(a->value, &xml) < 0)
        return -1;
    rv_pool *pool = create ? rv_storage_pool_create_xml(sh->conn, xml, 0)
                           : rv_storage_pool_define_xml(sh->conn, xml, 0);
    free(xml);
    if (!pool) {
        error_line("Failed to %s pool from %s", create ? "create" : "define", a->value);
        lib_error();
        return -1;
    }
    printf("Pool %s %s from %s\n", rv_storage_pool_get_name(pool),
           create ? "created" : "defined", a->value);
    rv_storage_pool_free(pool);
    return 0;
}

static int op_pool_start(rv_pool *p) { return rv_storage_pool_create(p, 0); }

static int op_pool_build(rv_pool *p) { return rv_storage_pool_build(p, 0); }

static int op_pool_refresh(rv_pool *p) { return rv_storage_pool_refresh(p, 0); }

static int op_pool_delete(rv_pool *p) { return rv_storage_pool_delete(p, 0); }

/* pool-start, pool-destroy, pool-undefine: virsh names the pool as typed. */
static int cmd_pool_lifecycle(shell *sh, const command *cmd, const cmd_args *a)
{
    static const struct {
        const char *name;
        int (*op)(rv_pool *pool);
        const char *done, *verb;
    } ops[] = {
        { "pool-start", op_pool_start, "started", "start" },
        { "pool-destroy", rv_storage_pool_destroy, "destroyed", "destroy" },
        { "pool-undefine", rv_storage_pool_undefine, "has been undefined", "undefine" },
        { "pool-build", op_pool_build, "built", "build" },
        { "pool-refresh", op_pool_refresh, "refreshed", "refresh" },
        { "pool-delete", op_pool_delete, "deleted", "delete" },
    };
    size_t i = 0;
    while (strcmp(ops[i].name, cmd->name) != 0)
        i++;
    rv_pool *pool = lookup_pool(sh, a->value);
    if (!pool)
        return -1;
    int rc = ops[i].op(pool);
    if (rc < 0) {
        error_line("Failed to %s pool %s", ops[i].verb, a->value);
        lib_error();
    } else {
        printf("Pool %s %s\n", a->value, ops[i].done);
    }
    rv_storage_pool_free(pool);
    return rc;
}

static int cmd_pool_autostart(shell *sh, const command *cmd, const cmd_args *a)
{
    int enable = !has_opt(cmd, a, "disable");
    rv_pool *pool = lookup_pool(sh, a->value);
    if (!pool)
        return -1;
    int rc = rv_storage_pool_set_autostart(pool, enable);
    if (rc < 0) {
        error_line("failed to %smark pool %s as autostarted", enable ? "" : "un", a->value);
        lib_error();
    } else {
        printf("Pool %s %smarked as autostarted\n", a->value, enable ? "" : "un");
    }
    rv_storage_pool_free(pool);
    return rc;
}

/* pool-uuid (by name) and pool-name (by UUID). */
static int cmd_pool_ident(shell *sh, const command *cmd, const cmd_args *a)
{
    int uuid = strcmp(cmd->name, "pool-uuid") == 0;
    rv_pool *pool = lookup_pool_by(sh, a->value, uuid ? BY_NAME : BY_UUID);
    if (!pool)
        return -1;
    char text[RV_UUID_STRING_BUFLEN];
    rv_storage_pool_get_uuid_string(pool, text);
    puts(uuid ? text : rv_storage_pool_get_name(pool));
    rv_storage_pool_free(pool);
    return 0;
}

static int cmd_vol_list(shell *sh, const command *cmd, const cmd_args *a)
{
    rv_pool *pool = lookup_pool(sh, a->value);
    if (!pool)
        return -1;
    rv_vol **vols = NULL;
    int n = rv_storage_pool_list_all_volumes(pool, &vols, 0);
    rv_storage_pool_free(pool);
    if (n < 0) {
        error_line("Failed to list volumes");
        lib_error();
        return -1;
    }
    qsort(vols, (size_t)n, sizeof(*vols), compare_vols);
    char **paths = calloc((size_t)n + 1, sizeof(*paths));
    const char **cells = calloc((size_t)n * 2 + 1, sizeof(*cells));
    int rc = paths && cells ? 0 : -1;
    if (rc < 0)
        error_line("out of memory");
    for (int i = 0; rc == 0 && i < n; i++) {
        if (!(paths[i] = rv_storage_vol_get_path(vols[i]))) {
            lib_error();
            rc = -1;
            break;
        }
        cells[i * 2] = rv_storage_vol_get_name(vols[i]);
        cells[i * 2 + 1] = paths[i];
    }
    if (rc == 0 && (sh->json || has_opt(cmd, a, "json"))) {
        putchar('[');
        for (int i = 0; i < n; i++) {
            int first = 1;
            printf("%s{", i ? ", " : "");
            json_str_field("name", cells[i * 2], &first);
            json_str_field("path", cells[i * 2 + 1], &first);
            putchar('}');
        }
        puts("]");
    } else if (rc == 0) {
        static const char *const heads[] = { "Name", "Path" };
        print_table(heads, 2, cells, (size_t)n);
    }
    for (int i = 0; i < n; i++) {
        free(paths ? paths[i] : NULL);
        rv_storage_vol_free(vols[i]);
    }
    free(vols);
    free(paths);
    free(cells);
    return rc;
}

static int cmd_vol_info(shell *sh, const command *cmd, const cmd_args *a)
{
    rv_vol *vol = lookup_vol(sh, cmd, a);
    if (!vol)
        return -1;
    rv_storage_vol_info info;
    int rc = rv_storage_vol_get_info(vol, &info);
    if (rc < 0) {
        lib_error();
    } else if (sh->json || has_opt(cmd, a, "json")) {
        int first = 1;
        putchar('{');
        json_str_field("name", rv_storage_vol_get_name(vol), &first);
        json_str_field("type", vol_type_name(info.type), &first);
        json_num_field("capacity", info.capacity, 1, &first);
        json_num_field("allocation", info.allocation, 1, &first);
        puts("}");
    } else {
        printf("%-15s %s\n", "Name:", rv_storage_vol_get_name(vol));
        printf("%-15s %s\n", "Type:", vol_type_name(info.type));
        print_size("Capacity:", info.capacity);
        print_size("Allocation:", info.allocation);
    }
    rv_storage_vol_free(vol);
    return rc;
}

/* vol-dumpxml, vol-path, vol-key, vol-name, vol-pool: one string about
 * the volume. */
static int cmd_vol_string(shell *sh, const command *cmd, const cmd_args *a)
{
    rv_vol *vol = lookup_vol(sh, cmd, a);
    if (!vol)
        return -1;
    int xml = strcmp(cmd->name, "vol-dumpxml") == 0;
    char *s = NULL;
    if (xml)
        s = rv_storage_vol_get_xml_desc(vol, 0);
    else if (strcmp(cmd->name, "vol-path") == 0)
        s = rv_storage_vol_get_path(vol);
    else
        s = strdup(strcmp(cmd->name, "vol-key") == 0 ? rv_storage_vol_get_key(vol)
                   : strcmp(cmd->name, "vol-name") == 0 ? rv_storage_vol_get_name(vol)
                                                        : rv_storage_vol_get_pool_name(vol));
    if (!s)
        lib_error();
    else if (xml)
        fputs(s, stdout);
    else
        puts(s);
    free(s);
    rv_storage_vol_free(vol);
    return s ? 0 : -1;
}

static int cmd_vol_create(shell *sh, const command *cmd, const cmd_args *a)
{
    (void)cmd;
    rv_pool *pool = lookup_pool(sh, a->value);
    if (!pool)
        return -1;
    char *xml;
    if (read_file(a->value2, &xml) < 0) {
        rv_storage_pool_free(pool);
        return -1;
    }
    rv_vol *vol = rv_storage_vol_create_xml(pool, xml, 0);
    free(xml);
    rv_storage_pool_free(pool);
    if (!vol) {
        error_line("Failed to create vol from %s", a->value2);
        lib_error();
        return -1;
    }
    printf("Vol %s created from %s\n", rv_storage_vol_get_name(vol), a->value2);
    rv_storage_vol_free(vol);
    return 0;
}

static int cmd_vol_delete(shell *sh, const command *cmd, const cmd_args *a)
{
    rv_vol *vol = lookup_vol(sh, cmd, a);
    if (!vol)
        return -1;
    int rc = rv_storage_vol_delete(vol, 0);
    if (rc < 0) {
        error_line("Failed to delete vol %s", a->value);
        lib_error();
    } else {
        printf("Vol %s deleted\n", a->value);
    }
    rv_storage_vol_free(vol);
    return rc;
}

/* --offset and --length, as virsh reads them. */
static int parse_span(const cmd_args *a, unsigned long long *offset, unsigned long long *length)
{
    const char *names[] = { "offset", "length" };
    unsigned long long *out[] = { offset, length };
    for (int i = 0; i < 2; i++) {
        const char *text = a->opt_values[1 + i];
        *out[i] = 0;
        if (!text)
            continue;
        char *end;
        errno = 0;
        *out[i] = strtoull(text, &end, 10);
        if (errno || end == text || *end || text[0] == '-') {
            error_line("Numeric value '%s' for <%s> option is malformed or out of range", text,
                       names[i]);
            return -1;
        }
    }
    return 0;
}

#define RVSH_STREAM_BUF (256 * 1024)

/* Send the file's bytes from its current position to its end: all as
 * data, or (sparse) its holes as holes, found with SEEK_DATA/SEEK_HOLE
 * as virsh does.  0, -1 after the library failed, -2 after the file did. */
static int send_file(rv_stream *st, int fd, char *buf, int sparse)
{
    off_t pos = lseek(fd, 0, SEEK_CUR);
    off_t data_end = -1;        /* where the data at pos ends; -1: not known */
    for (;;) {
        if (sparse && (data_end < 0 || pos >= data_end)) {
            off_t data = lseek(fd, pos, SEEK_DATA);
            if (data < 0 && errno == ENXIO) {
                /* No data after pos: a hole to the end, if any. */
                struct stat sb;
                if (fstat(fd, &sb) < 0)
                    return -2;
                if (sb.st_size <= pos)
                    return 0;
                data = sb.st_size;
            } else if (data < 0) {
                return -2;
            }
            if (data > pos) {
                if (rv_stream_send_hole(st, (long long)(data - pos), 0) < 0)
                    return -1;
                pos = data;
                if (lseek(fd, pos, SEEK_SET) < 0)
                    return -2;
                continue;
            }
            if ((data_end = lseek(fd, pos, SEEK_HOLE)) < 0 || lseek(fd, pos, SEEK_SET) < 0)
                return -2;
        }
        size_t want = RVSH_STREAM_BUF;
        if (sparse && (unsigned long long)(data_end - pos) < want)
            want = (size_t)(data_end - pos);
        ssize_t n = read(fd, buf, want);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -2;
        if (n == 0)
            return 0;
        if (rv_stream_send(st, buf, (size_t)n) < 0)
            return -1;
        pos += n;
    }
}

/* vol-upload <vol> <file> [--pool P] [--offset N] [--length N] [--sparse]:
 * the file's bytes into the volume, as virsh vol-upload. */
static int cmd_vol_upload(shell *sh, const command *cmd, const cmd_args *a)
{
    unsigned long long offset, length;
    if (parse_span(a, &offset, &length) < 0)
        return -1;
    int sparse = has_opt(cmd, a, "sparse");
    int fd = open(a->value2, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        error_line("cannot read %s", a->value2);
        return -1;
    }
    rv_vol *vol = lookup_vol(sh, cmd, a);
    rv_stream *st = vol ? rv_stream_new(sh->conn, 0) : NULL;
    char *buf = malloc(RVSH_STREAM_BUF);
    int rc = -1;
    if (!vol || !st || !buf) {
        if (vol)
            lib_error();
    } else if (rv_storage_vol_upload(vol, st, offset, length,
                                     sparse ? RV_STORAGE_VOL_UPLOAD_SPARSE_STREAM : 0) < 0) {
        error_line("cannot upload to volume %s", a->value);
        lib_error();
    } else {
        rc = send_file(st, fd, buf, sparse);
        if (rc == -2) {
            error_line("cannot read %s", a->value2);
            rv_stream_abort(st);
            rc = -1;
        } else if (rc < 0) {
            error_line("cannot send data to volume %s", a->value);
            lib_error();
        } else if (rv_stream_finish(st) < 0) {
            error_line("cannot close volume %s", a->value);
            lib_error();
            rc = -1;
        }
    }
    free(buf);
    rv_stream_free(st);
    rv_storage_vol_free(vol);
    close(fd);
    return rc;
}

/* Write what st brings into fd until its end; with sparse, a hole moves
 * the position past it and makes the file end there (ftruncate), as
 * virsh does, so the file has the same holes.  0, -1 after the library
 * failed, -2 after the file did. */
static int receive_file(rv_stream *st, int fd, char *buf, int sparse)
{
    for (;;) {
        int n = rv_stream_recv_flags(st, buf, RVSH_STREAM_BUF,
                                     sparse ? RV_STREAM_RECV_STOP_AT_HOLE : 0);
        if (n == RV_STREAM_AT_HOLE) {
            long long hole;
            off_t end;
            if (rv_stream_recv_hole(st, &hole, 0) < 0)
                return -1;
            if ((end = lseek(fd, (off_t)hole, SEEK_CUR)) < 0 || ftruncate(fd, end) < 0)
                return -2;
            continue;
        }
        if (n < 0)
            return -1;
        if (n == 0)
            return 0;
        for (int done = 0; done < n;) {
            ssize_t w = write(fd, buf + done, (size_t)(n - done));
            if (w < 0 && errno != EINTR)
                return -2;
            done += w > 0 ? (int)w : 0;
        }
    }
}

/* vol-download <vol> <file> [--pool P] [--offset N] [--length N] [--sparse]:
 * the volume's bytes into the file (a file it created is removed again if
 * the download fails), as virsh vol-download. */
static int cmd_vol_download(shell *sh, const command *cmd, const cmd_args *a)
{
    unsigned long long offset, length;
    if (parse_span(a, &offset, &length) < 0)
        return -1;
    int sparse = has_opt(cmd, a, "sparse");
    int created = 1;
    int fd = open(a->value2, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno == EEXIST) {
        created = 0;
        fd = open(a->value2, O_WRONLY | O_TRUNC | O_CLOEXEC);
    }
    if (fd < 0) {
        error_line("cannot create %s", a->value2);
        return -1;
    }
    rv_vol *vol = lookup_vol(sh, cmd, a);
    rv_stream *st = vol ? rv_stream_new(sh->conn, 0) : NULL;
    char *buf = malloc(RVSH_STREAM_BUF);
    int rc = -1;
    if (!vol || !st || !buf) {
        if (vol)
            lib_error();
    } else if (rv_storage_vol_download(vol, st, offset, length,
                                       sparse ? RV_STORAGE_VOL_DOWNLOAD_SPARSE_STREAM : 0) < 0) {
        error_line("cannot download from volume %s", a->value);
        lib_error();
    } else {
        int got = receive_file(st, fd, buf, sparse);
        if (got == -2) {
            error_line("cannot write %s", a->value2);
            rv_stream_abort(st);
        } else if (got < 0) {
            error_line("cannot receive data from volume %s", a->value);
            lib_error();
        } else if (rv_stream_finish(st) < 0) {
            error_line("cannot close volume %s", a->value);
            lib_error();
        } else {
            rc = 0;
        }
    }
    free(buf);
    rv_stream_free(st);
    rv_storage_vol_free(vol);
    if (close(fd) != 0 && rc == 0) {
        error_line("cannot write %s", a->value2);
        rc = -1;
    }
    if (rc < 0 && created)
        unlink(a->value2);
    return rc;
}

/* ---- volumes and pools made from options (vol-create-as, ...) ---- */

/* A size as virsh reads one: a number and an optional unit, b/byte/bytes,
 * or k, M, G, T, P, E alone or followed by "iB" (powers of 1024) or "B"
 * (powers of 1000), any case.  -1 after virsh's error lines. */
static int parse_size(const char *text, unsigned long long *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno || end == text || strchr(text, '-')) {
        error_line("Malformed size %s", text);
        return -1;
    }
    unsigned long long base = 1024;
    int power = 0;
    if (*end && strcasecmp(end, "b") != 0 && strcasecmp(end, "byte") != 0 &&
        strcasecmp(end, "bytes") != 0) {
        const char *p = strchr("kmgtpe", tolower((unsigned char)end[0]));
        if (end[1] && strcasecmp(end + 1, "ib") != 0) {
            if ((end[1] == 'b' || end[1] == 'B') && !end[2])
                base = 1000;
            else
                p = NULL;
        }
        if (!p || !*p) {
            error_line("Malformed size %s", text);
            error_line("invalid argument: unknown suffix '%s'", end);
            return -1;
        }
        power = (int)(p - "kmgtpe") + 1;
    }
    for (int i = 0; i < power; i++) {
        if (v > ULLONG_MAX / base) {
            error_line("Malformed size %s", text);
            error_line("numerical overflow: value too large: %s", text);
            return -1;
        }
        v *= base;
    }
    *out = v;
    return 0;
}

/* Text for an XML element or attribute value. */
static void xml_escaped(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '\'': fputs("&apos;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
    }
}

/* fmt's %s are written escaped, nothing else is taken. */
static void xml_line(FILE *f, int indent, const char *fmt, const char *value)
{
    const char *hole = strstr(fmt, "%s");
    fprintf(f, "%*s", indent, "");
    if (!hole) {
        fputs(fmt, f);
        return;
    }
    fwrite(fmt, 1, (size_t)(hole - fmt), f);
    xml_escaped(f, value);
    fputs(hole + 2, f);
}

/* Close an open_memstream stream: 0, or -1 (out of memory; *xml freed). */
static int close_xml(FILE *f, char **xml)
{
    if (fclose(f) != 0 || !*xml) {
        free(*xml);
        *xml = NULL;
        error_line("out of memory");
        return -1;
    }
    return 0;
}

/* vol-create-as <pool> <name> <capacity> [--allocation] [--format]
 * [--backing-vol [--backing-vol-format]] [--prealloc-metadata]
 * [--print-xml]: the volume XML virsh writes for these, created (or
 * printed). */
static int cmd_vol_create_as(shell *sh, const command *cmd, const cmd_args *a)
{
    unsigned long long capacity, allocation = 0;
    const char *alloc_text = opt_value(cmd, a, "allocation");
    const char *format = opt_value(cmd, a, "format");
    const char *backing = opt_value(cmd, a, "backing-vol");
    const char *backing_format = opt_value(cmd, a, "backing-vol-format");
    rv_pool *pool = lookup_pool(sh, a->value);
    if (!pool)
        return -1;
    int rc = -1;
    char *backing_path = NULL, *xml = NULL;
    size_t len = 0;
    FILE *f = NULL;
    if (parse_size(a->value3, &capacity) < 0)
        goto out;
    if (alloc_text && parse_size(alloc_text, &allocation) < 0)
        goto out;
    if (backing) {
        /* The backing volume by name in the pool, else by key or path. */
        rv_vol *bv = rv_storage_vol_lookup_by_name(pool, backing);
        if (!bv)
            bv = rv_storage_vol_lookup_by_key(sh->conn, backing);
        if (!bv)
            bv = rv_storage_vol_lookup_by_path(sh->conn, backing);
        if (!bv) {
            error_line("failed to get vol '%s'", backing);
            lib_error();
            goto out;
        }
        backing_path = rv_storage_vol_get_path(bv);
        rv_storage_vol_free(bv);
        if (!backing_path) {
            lib_error();
            goto out;
        }
    }
    if (!(f = open_memstream(&xml, &len))) {
        error_line("out of memory");
        goto out;
    }
    fputs("<volume>\n", f);
    xml_line(f, 2, "<name>%s</name>\n", a->value2);
    fprintf(f, "  <capacity>%llu</capacity>\n", capacity);
    if (alloc_text)
        fprintf(f, "  <allocation>%llu</allocation>\n", allocation);
    if (format) {
        fputs("  <target>\n", f);
        xml_line(f, 4, "<format type='%s'/>\n", format);
        fputs("  </target>\n", f);
    }
    if (backing_path) {
        fputs("  <backingStore>\n", f);
        xml_line(f, 4, "<path>%s</path>\n", backing_path);
        if (backing_format)
            xml_line(f, 4, "<format type='%s'/>\n", backing_format);
        fputs("  </backingStore>\n", f);
    }
    fputs("</volume>\n", f);
    if (close_xml(f, &xml) < 0)
        goto out;
    if (has_opt(cmd, a, "print-xml")) {
        fputs(xml, stdout);
        rc = 0;
        goto out;
    }
    rv_vol *vol = rv_storage_vol_create_xml(pool, xml, has_opt(cmd, a, "prealloc-metadata") ? 1 : 0);
    if (!vol) {
        error_line("Failed to create vol %s", a->value2);
        lib_error();
        goto out;
    }
    printf("Vol %s created\n", a->value2);
    rv_storage_vol_free(vol);
    rc = 0;
out:
    free(xml);
    free(backing_path);
    rv_storage_pool_free(pool);
    return rc;
}

/* The volume XML with its name changed (virsh's vol-clone). */
static char *renamed_vol_xml(const char *xml, const char *name)
{
    xmlDoc *doc = xmlReadMemory(xml, (int)strlen(xml), "volume.xml", NULL,
                                XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    xmlNode *root = doc ? xmlDocGetRootElement(doc) : NULL;
    xmlNode *node = xml_child(root, "name");
    xmlChar *out = NULL;
    int n = 0;
    if (node) {
        xmlNodeSetContent(node, NULL);
        xmlNodeAddContent(node, (const xmlChar *)name);
        xmlDocDumpMemory(doc, &out, &n);
    }
    xmlFreeDoc(doc);
    char *copy = out ? strdup((const char *)out) : NULL;
    xmlFree(out);
    return copy;
}

/* vol-clone <vol> <newname> [--pool] [--prealloc-metadata] [--reflink] */
static int cmd_vol_clone(shell *sh, const command *cmd, const cmd_args *a)
{
    rv_vol *vol = lookup_vol(sh, cmd, a);
    if (!vol)
        return -1;
    int rc = -1;
    const char *name = rv_storage_vol_get_name(vol);
    rv_pool *pool = rv_storage_pool_lookup_by_volume(vol);
    char *xml = pool ? rv_storage_vol_get_xml_desc(vol, 0) : NULL;
    char *new_xml = NULL;
    if (!xml) {
        lib_error();
    } else if (!(new_xml = renamed_vol_xml(xml, a->value2))) {
        error_line("Failed to clone vol from %s", name);
        error_line("the server's volume XML has no name to change");
    } else {
        /* libvirt's PREALLOC_METADATA 1, REFLINK 2 */
        unsigned int flags = (has_opt(cmd, a, "prealloc-metadata") ? 1 : 0) |
                             (has_opt(cmd, a, "reflink") ? 2 : 0);
        rv_vol *copy = rv_storage_vol_create_xml_from(pool, new_xml, vol, flags);
        if (!copy) {
            error_line("Failed to clone vol from %s", name);
            lib_error();
        } else {
            printf("Vol %s cloned from %s\n", rv_storage_vol_get_name(copy), name);
            rv_storage_vol_free(copy);
            rc = 0;
        }
    }
    free(new_xml);
    free(xml);
    rv_storage_pool_free(pool);
    rv_storage_vol_free(vol);
    return rc;
}

/* vol-create-from <pool> <file> <vol> [--inputpool] [--prealloc-metadata]
 * [--reflink]: a volume from an XML file, its data copied from vol. */
static int cmd_vol_create_from(shell *sh, const command *cmd, const cmd_args *a)
{
    rv_pool *pool = lookup_pool(sh, a->value);
    if (!pool)
        return -1;
    /* The input volume: by name in --inputpool, else by key or path. */
    cmd_args in = *a;
    in.value = a->value3;
    rv_vol *input = lookup_vol(sh, cmd, &in);
    char *xml = NULL;
    int rc = -1;
    if (input && read_file(a->value2, &xml) == 0) {
        unsigned int flags = (has_opt(cmd, a, "prealloc-metadata") ? 1 : 0) |
                             (has_opt(cmd, a, "reflink") ? 2 : 0);
        rv_vol *vol = rv_storage_vol_create_xml_from(pool, xml, input, flags);
        if (!vol) {
            error_line("Failed to create vol from %s", a->value2);
            lib_error();
        } else {
            printf("Vol %s created from input vol %s\n", rv_storage_vol_get_name(vol),
                   rv_storage_vol_get_name(input));
            rv_storage_vol_free(vol);
            rc = 0;
        }
    }
    free(xml);
    rv_storage_vol_free(input);
    rv_storage_pool_free(pool);
    return rc;
}

/* vol-resize <vol> <capacity> [--pool] [--allocate] [--delta] [--shrink];
 * a negative capacity (with --shrink) shrinks by that much. */
static int cmd_vol_resize(shell *sh, const command *cmd, const cmd_args *a)
{
    /* libvirt's RESIZE_ALLOCATE 1, _DELTA 2, _SHRINK 4 */
    unsigned int flags = (has_opt(cmd, a, "allocate") ? 1 : 0) |
                         (has_opt(cmd, a, "delta") ? 2 : 0) | (has_opt(cmd, a, "shrink") ? 4 : 0);
    rv_vol *vol = lookup_vol(sh, cmd, a);
    if (!vol)
        return -1;
    const char *text = a->value2 + strspn(a->value2, " \t\n");
    unsigned long long capacity;
    if (*text == '-') {
        if (!(flags & 4)) {
            error_line("negative size requires --shrink");
            rv_storage_vol_free(vol);
            return -1;
        }
        flags |= 2;
        text++;
    }
    if (parse_size(text, &capacity) < 0) {
        rv_storage_vol_free(vol);
        return -1;
    }
    const char *name = rv_storage_vol_get_name(vol);
    int rc = rv_storage_vol_resize(vol, capacity, flags);
    if (rc < 0) {
        error_line("Failed to change size of volume '%s' %s %s", name, flags & 2 ? "by" : "to",
                   text);
        lib_error();
    } else {
        printf("Size of volume '%s' successfully changed %s %s\n", name,
               flags & 2 ? "by" : "to", text);
    }
    rv_storage_vol_free(vol);
    return rc;
}

/* vol-wipe <vol> [--pool] [--algorithm ALG]: zero by STORAGE_VOL_WIPE,
 * the others by STORAGE_VOL_WIPE_PATTERN (their number), as virsh. */
static int cmd_vol_wipe(shell *sh, const command *cmd, const cmd_args *a)
{
    static const char *const algorithms[] = {
        "zero", "nnsa", "dod", "bsi", "gutmann", "schneier", "pfitzner7", "pfitzner33",
        "random", "trim",
    };
    rv_vol *vol = lookup_vol(sh, cmd, a);
    if (!vol)
        return -1;
    const char *algorithm = opt_value(cmd, a, "algorithm");
    size_t k = 0;
    while (algorithm && k < sizeof(algorithms) / sizeof(algorithms[0]) &&
           strcmp(algorithms[k], algorithm) != 0)
        k++;
    int rc = -1;
    if (k == sizeof(algorithms) / sizeof(algorithms[0]))
        error_line("Unsupported algorithm '%s'", algorithm);
    else if ((rc = k == 0 ? rv_storage_vol_wipe(vol, 0)
                          : rv_storage_vol_wipe_pattern(vol, (unsigned int)k, 0)) < 0) {
        error_line("Failed to wipe vol %s", a->value);
        lib_error();
    } else {
        printf("Vol %s wiped\n", a->value);
    }
    rv_storage_vol_free(vol);
    return rc;
}

/* pool-define-as and pool-create-as <name> <type> [--source-host]
 * [--source-path] [--source-dev] [--source-name] [--source-format]
 * [--target] [--print-xml]: the pool XML virsh writes for these. */
static int cmd_pool_define_as(shell *sh, const command *cmd, const cmd_args *a)
{
    int create = strcmp(cmd->name, "pool-create-as") == 0;
    const char *host = opt_value(cmd, a, "source-host");
    const char *path = opt_value(cmd, a, "source-path");
    const char *dev = opt_value(cmd, a, "source-dev");
    const char *name = opt_value(cmd, a, "source-name");
    const char *format = opt_value(cmd, a, "source-format");
    const char *target = opt_value(cmd, a, "target");
    char *xml = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&xml, &len);
    if (!f) {
        error_line("out of memory");
        return -1;
    }
    xml_line(f, 0, "<pool type='%s'>\n", a->value2);
    xml_line(f, 2, "<name>%s</name>\n", a->value);
    if (host || path || dev || name || format) {
        fputs("  <source>\n", f);
        if (host)
            xml_line(f, 4, "<host name='%s'/>\n", host);
        if (path)
            xml_line(f, 4, "<dir path='%s'/>\n", path);
        if (dev)
            xml_line(f, 4, "<device path='%s'/>\n", dev);
        if (format)
            xml_line(f, 4, "<format type='%s'/>\n", format);
        if (name)
            xml_line(f, 4, "<name>%s</name>\n", name);
        fputs("  </source>\n", f);
    }
    if (target) {
        fputs("  <target>\n", f);
        xml_line(f, 4, "<path>%s</path>\n", target);
        fputs("  </target>\n", f);
    }
    fputs("</pool>\n", f);
    if (close_xml(f, &xml) < 0)
        return -1;
    int rc = 0;
    if (has_opt(cmd, a, "print-xml")) {
        fputs(xml, stdout);
    } else {
        rv_pool *pool = create ? rv_storage_pool_create_xml(sh->conn, xml, 0)
                               : rv_storage_pool_define_xml(sh->conn, xml, 0);
        if (!pool) {
            error_line("Failed to %s pool %s", create ? "create" : "define", a->value);
            lib_error();
            rc = -1;
        } else {
            printf("Pool %s %s\n", a->value, create ? "created" : "defined");
            rv_storage_pool_free(pool);
        }
    }
    free(xml);
    return rc;
}

/* find-storage-pool-sources <type> [<srcSpec file>], and
 * find-storage-pool-sources-as <type> [<host>] [--port] [--initiator]
 * with the <source> virsh writes for those. */
static int cmd_find_pool_sources(shell *sh, const command *cmd, const cmd_args *a)
{
    char *spec = NULL;
    if (strcmp(cmd->name, "find-storage-pool-sources-as") == 0) {
        const char *port = opt_value(cmd, a, "port");
        const char *initiator = opt_value(cmd, a, "initiator");
        size_t len = 0;
        FILE *f = a->value2 ? open_memstream(&spec, &len) : NULL;
        if (a->value2 && !f) {
            error_line("out of memory");
            return -1;
        }
        if (f) {
            fputs("<source>\n", f);
            xml_line(f, 2, "<host name='%s'", a->value2);
            if (port)
                xml_line(f, 0, " port='%s'", port);
            fputs("/>\n", f);
            if (initiator) {
                fputs("  <initiator>\n", f);
                xml_line(f, 4, "<iqn name='%s'/>\n", initiator);
                fputs("  </initiator>\n", f);
            }
            fputs("</source>\n", f);
            if (close_xml(f, &spec) < 0)
                return -1;
        }
    } else if (a->value2 && read_file(a->value2, &spec) < 0) {
        return -1;
    }
    char *xml = rv_connect_find_storage_pool_sources(sh->conn, a->value, spec, 0);
    free(spec);
    if (!xml) {
        error_line("Failed to find any %s pool sources", a->value);
        lib_error();
        return -1;
    }
    fputs(xml, stdout);
    free(xml);
    return 0;
}

static const char *const opts_pool_event[] = { "loop", "timeout=", "pool=", "event=", NULL };
static const char *const opts_vol[] = { "pool=", NULL };
static const char *const opts_vol_json[] = { "pool=", "json", NULL };
static const char *const opts_vol_stream[] = { "pool=", "offset=", "length=", "sparse", NULL };
static const char *const opts_vol_create_as[] = {
    "allocation=", "format=", "backing-vol=", "backing-vol-format=", "prealloc-metadata",
    "print-xml", NULL,
};
static const char *const opts_vol_clone[] = { "pool=", "prealloc-metadata", "reflink", NULL };
static const char *const opts_vol_create_from[] = {
    "inputpool=", "prealloc-metadata", "reflink", NULL,
};
static const char *const opts_vol_resize[] = { "pool=", "allocate", "delta", "shrink", NULL };
static const char *const opts_vol_wipe[] = { "pool=", "algorithm=", NULL };
static const char *const opts_find_as[] = { "port=", "initiator=", NULL };
static const char *const opts_pool_as[] = {
    "source-host=", "source-path=", "source-dev=", "source-name=", "source-format=", "target=",
    "print-xml", NULL,
};

const command rvsh_storage_commands[] = {
    { .name = "pool-list", .run = cmd_pool_list,
      .options = opts_list,
      .summary = "list storage pools (active ones; --all: all; --inactive: inactive ones)" },
    { .name = "pool-info", .run = cmd_pool_info, .arg = "pool",
      .options = opts_json,
      .summary = "storage pool information" },
    { .name = "pool-dumpxml", .run = cmd_pool_dumpxml, .arg = "pool",
      .summary = "storage pool information in XML" },
    { .name = "pool-define", .run = cmd_pool_define, .arg = "file",
      .summary = "define (but don't start) a storage pool from an XML file" },
    { .name = "pool-create", .run = cmd_pool_define, .arg = "file",
      .summary = "create and start a transient storage pool from an XML file" },
    { .name = "pool-build", .run = cmd_pool_lifecycle, .arg = "pool",
      .summary = "build a storage pool's storage" },
    { .name = "pool-refresh", .run = cmd_pool_lifecycle, .arg = "pool",
      .summary = "read a storage pool's volumes again" },
    { .name = "pool-delete", .run = cmd_pool_lifecycle, .arg = "pool",
      .summary = "delete an inactive storage pool's storage" },
    { .name = "pool-uuid", .run = cmd_pool_ident, .arg = "pool",
      .summary = "convert a storage pool name to its UUID" },
    { .name = "pool-name", .run = cmd_pool_ident, .arg = "pool",
      .summary = "convert a storage pool UUID to its name" },
    { .name = "pool-start", .run = cmd_pool_lifecycle, .arg = "pool",
      .summary = "start a defined, inactive storage pool" },
    { .name = "pool-destroy", .run = cmd_pool_lifecycle, .arg = "pool",
      .summary = "stop a storage pool" },
    { .name = "pool-undefine", .run = cmd_pool_lifecycle, .arg = "pool",
      .summary = "undefine an inactive storage pool" },
    { .name = "pool-autostart", .run = cmd_pool_autostart, .arg = "pool",
      .options = opts_disable,
      .summary = "start a storage pool with the host (--disable: don't)" },
    { .name = "vol-list", .run = cmd_vol_list, .arg = "pool",
      .options = opts_json,
      .summary = "list the volumes of a storage pool" },
    { .name = "vol-info", .run = cmd_vol_info, .arg = "vol",
      .options = opts_vol_json,
      .summary = "storage volume information (by name with --pool, key or path)" },
    { .name = "vol-dumpxml", .run = cmd_vol_string, .arg = "vol",
      .options = opts_vol,
      .summary = "storage volume information in XML" },
    { .name = "vol-path", .run = cmd_vol_string, .arg = "vol",
      .options = opts_vol,
      .summary = "the path of a storage volume" },
    { .name = "vol-key", .run = cmd_vol_string, .arg = "vol",
      .options = opts_vol,
      .summary = "the key of a storage volume" },
    { .name = "vol-name", .run = cmd_vol_string, .arg = "vol",
      .summary = "the name of a storage volume (by key or path)" },
    { .name = "vol-pool", .run = cmd_vol_string, .arg = "vol",
      .summary = "the pool of a storage volume (by key or path)" },
    { .name = "vol-create", .run = cmd_vol_create, .arg = "pool",
      .arg2 = "file", .arg2_required = 1,
      .summary = "create a storage volume from an XML file" },
    { .name = "vol-delete", .run = cmd_vol_delete, .arg = "vol",
      .options = opts_vol,
      .summary = "delete a storage volume" },
    { .name = "vol-upload", .run = cmd_vol_upload, .arg = "vol",
      .arg2 = "file", .arg2_required = 1, .options = opts_vol_stream,
      .summary = "upload a file into a storage volume" },
    { .name = "vol-download", .run = cmd_vol_download, .arg = "vol",
      .arg2 = "file", .arg2_required = 1, .options = opts_vol_stream,
      .summary = "download a storage volume into a file" },
    { .name = "vol-create-as", .run = cmd_vol_create_as, .arg = "pool",
      .arg2 = "name", .arg2_required = 1, .arg3 = "capacity", .options = opts_vol_create_as,
      .summary = "create a volume from a set of arguments" },
    { .name = "vol-clone", .run = cmd_vol_clone, .arg = "vol",
      .arg2 = "newname", .arg2_required = 1, .options = opts_vol_clone,
      .summary = "clone a volume in its pool" },
    { .name = "vol-create-from", .run = cmd_vol_create_from, .arg = "pool",
      .arg2 = "file", .arg2_required = 1, .arg3 = "vol", .options = opts_vol_create_from,
      .summary = "create a volume from an XML file, with another volume's data" },
    { .name = "vol-resize", .run = cmd_vol_resize, .arg = "vol",
      .arg2 = "capacity", .arg2_required = 1, .options = opts_vol_resize,
      .summary = "resize a volume" },
    { .name = "vol-wipe", .run = cmd_vol_wipe, .arg = "vol",
      .options = opts_vol_wipe,
      .summary = "wipe a volume (with zeros)" },
    { .name = "pool-define-as", .run = cmd_pool_define_as, .arg = "name",
      .arg2 = "type", .arg2_required = 1, .options = opts_pool_as,
      .summary = "define a storage pool from a set of arguments" },
    { .name = "pool-create-as", .run = cmd_pool_define_as, .arg = "name",
      .arg2 = "type", .arg2_required = 1, .options = opts_pool_as,
      .summary = "create and start a transient storage pool from a set of arguments" },
    { .name = "find-storage-pool-sources", .run = cmd_find_pool_sources, .arg = "type",
      .arg2 = "srcSpec",
      .summary = "the storage pools of a type the host could have (XML)" },
    { .name = "find-storage-pool-sources-as", .run = cmd_find_pool_sources, .arg = "type",
      .arg2 = "host", .options = opts_find_as,
      .summary = "the storage pools of a type a host could have (XML; --port, --initiator)" },
    { .name = "pool-event", .run = cmd_event,
      .options = opts_pool_event,
      .summary = "print storage pool lifecycle (or --event refresh) events as they come (the first; --loop: all; --timeout seconds)" },
    { .name = NULL },
};
