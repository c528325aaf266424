/* Opening what someone else can name or reach (see safe_open.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/safe_open.h"

const char *rv_file_kind(mode_t mode)
{
    switch (mode & S_IFMT) {
    case S_IFIFO: return "FIFO";
    case S_IFSOCK: return "socket";
    case S_IFCHR: return "character device";
    case S_IFBLK: return "block device";
    case S_IFDIR: return "directory";
    case S_IFLNK: return "symbolic link";
    default: return "regular file";
    }
}

int rv_open_file_at(int dirfd, const char *path, int flags, mode_t mode, bool block_ok,
                    const char **kind)
{
    if (kind)
        *kind = NULL;
    int fd = openat(dirfd, path, flags | O_NONBLOCK | O_CLOEXEC, mode);
    struct stat sb;
    if (fd < 0) {
        /* A socket cannot be opened at all (ENXIO): say what it is. */
        int e = errno;
        int at = flags & O_NOFOLLOW ? AT_SYMLINK_NOFOLLOW : 0;
        if (e == ENXIO && kind && fstatat(dirfd, path, &sb, at) == 0 && !S_ISREG(sb.st_mode)) {
            *kind = rv_file_kind(sb.st_mode);
            e = EINVAL;
        }
        errno = e;
        return -1;
    }
    if (fstat(fd, &sb) < 0)
        goto fail;
    if (!S_ISREG(sb.st_mode) && !(block_ok && S_ISBLK(sb.st_mode))) {
        if (kind)
            *kind = rv_file_kind(sb.st_mode);
        errno = EINVAL;
        goto fail;
    }
    if (!(flags & O_NONBLOCK) && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0)
        goto fail;
    return fd;
fail:;
    int e = errno;
    close(fd);
    errno = e;
    return -1;
}

/* Nobody but root and us can add, remove or rename names in the
 * directory fd: a link in it stays what it is while we read it. */
static bool dir_is_ours(int fd)
{
    struct stat sb;
    return fstat(fd, &sb) == 0 && (sb.st_uid == 0 || sb.st_uid == geteuid()) &&
           (!(sb.st_mode & (S_IWGRP | S_IWOTH)) || (sb.st_mode & S_ISVTX));
}

static int walk_fail(rv_err *err, int domain, int code, const char *path, const char *at,
                     const char *why)
{
    if (at && strcmp(at, path) != 0)
        rv_err_set(err, domain, code, "%s: %s: %s", path, at, why);
    else
        rv_err_set(err, domain, code, "%s: %s", path, why);
    return -1;
}

int rv_open_dir_safely(const char *path, int domain, rv_err *err)
{
    /* rest: what is still to walk, rebuilt when a link is followed;
     * done: the components walked so far, for messages. */
    size_t cap = strlen(path) + PATH_MAX + 2;
    char *rest = malloc(cap), *done = malloc(cap), *target = malloc(PATH_MAX + 1);
    int fd = -1, links = 0, rc = -1;
    if (!rest || !done || !target) {
        rv_err_set(err, domain, RV_ERR_NO_MEMORY, "out of memory");
        goto out;
    }
    snprintf(rest, cap, "%s", path);
    snprintf(done, cap, "%s", path[0] == '/' ? "/" : "");
    fd = open(path[0] == '/' ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        walk_fail(err, domain, RV_ERR_SYSTEM_ERROR, path, path[0] == '/' ? "/" : ".",
                  strerror(errno));
        goto out;
    }
    char *p = rest;
    for (;;) {
        while (*p == '/')
            p++;
        if (!*p)
            break;
        char *end = strchrnul(p, '/'), saved = *end;
        *end = '\0';
        if (strcmp(p, ".") == 0) {
            *end = saved;
            p = end;
            continue;
        }
        size_t dlen = strlen(done);
        snprintf(done + dlen, cap - dlen, "%s%s", dlen && done[dlen - 1] != '/' ? "/" : "", p);
        struct stat sb;
        if (fstatat(fd, p, &sb, AT_SYMLINK_NOFOLLOW) < 0) {
            walk_fail(err, domain, RV_ERR_SYSTEM_ERROR, path, done, strerror(errno));
            goto out;
        }
        if (S_ISLNK(sb.st_mode)) {
            if ((sb.st_uid != 0 && sb.st_uid != geteuid()) || !dir_is_ours(fd)) {
                walk_fail(err, domain, RV_ERR_OPERATION_INVALID, path, done,
                          "a symbolic link that another user can change");
                goto out;
            }
            ssize_t n = readlinkat(fd, p, target, PATH_MAX);
            if (n < 0 || ++links > 40) {
                walk_fail(err, domain, RV_ERR_SYSTEM_ERROR, path, done,
                          strerror(n < 0 ? errno : ELOOP));
                goto out;
            }
            target[n] = '\0';
            /* The link's target, then what was left after it. */
            char *tail = saved ? end + 1 : end;
            size_t tlen = strlen(tail);
            if ((size_t)n + 1 + tlen + 1 > cap) {
                walk_fail(err, domain, RV_ERR_SYSTEM_ERROR, path, done,
                          strerror(ENAMETOOLONG));
                goto out;
            }
            memmove(rest + n + 1, tail, tlen + 1);
            memcpy(rest, target, (size_t)n);
            rest[n] = '/';
            p = rest;
            /* Report the rest under the link's own name. */
            if (target[0] == '/') {
                int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (root < 0) {
                    walk_fail(err, domain, RV_ERR_SYSTEM_ERROR, path, "/", strerror(errno));
                    goto out;
                }
                close(fd);
                fd = root;
            }
            char *cut = target[0] == '/' ? done : strrchr(done, '/');
            if (cut)
                cut[cut == done && done[0] == '/' ? 1 : 0] = '\0';
            else
                done[0] = '\0';
            continue;
        }
        if (!S_ISDIR(sb.st_mode)) {
            walk_fail(err, domain, RV_ERR_SYSTEM_ERROR, path, done, strerror(ENOTDIR));
            goto out;
        }
        /* O_NOFOLLOW: what was a directory a moment ago and is a link
         * now is not entered. */
        int next = openat(fd, p, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (next < 0 || fstat(next, &sb) < 0 || !S_ISDIR(sb.st_mode)) {
            walk_fail(err, domain, RV_ERR_SYSTEM_ERROR, path, done,
                      next < 0 ? strerror(errno) : "it changed while it was opened");
            if (next >= 0)
                close(next);
            goto out;
        }
        close(fd);
        fd = next;
        *end = saved;
        p = end;
    }
    rc = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (rc < 0)
        walk_fail(err, domain, RV_ERR_SYSTEM_ERROR, path, NULL, strerror(errno));
out:
    if (fd >= 0)
        close(fd);
    free(rest);
    free(done);
    free(target);
    return rc;
}

int rv_open_parent_safely(const char *path, char **name, int domain, rv_err *err)
{
    /* The last component; its directory is everything before it. */
    size_t len = strlen(path);
    while (len > 1 && path[len - 1] == '/')
        len--;
    const char *slash = memrchr(path, '/', len);
    const char *base = slash ? slash + 1 : path;
    size_t blen = len - (size_t)(base - path);
    char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
    *name = strndup(base, blen);
    int dfd = -1;
    if (!dir || !*name)
        rv_err_set(err, domain, RV_ERR_NO_MEMORY, "out of memory");
    else if (!blen || strcmp(*name, ".") == 0 || strcmp(*name, "..") == 0)
        rv_err_set(err, domain, RV_ERR_INVALID_ARG, "%s: it names no file", path);
    else if ((dfd = rv_open_dir_safely(dir, domain, err)) < 0 && err->message) {
        /* "PATH: DIR: why", the file first. */
        char *why = err->message;
        err->message = NULL;
        rv_err_set(err, domain, err->code, "%s: %s", path, why);
        free(why);
    }
    free(dir);
    if (dfd < 0) {
        free(*name);
        *name = NULL;
    }
    return dfd;
}

int rv_open_file_safely(const char *path, int flags, mode_t mode, int *parent, char **name,
                        int domain, rv_err *err)
{
    char *base;
    int dfd = rv_open_parent_safely(path, &base, domain, err), fd = -1;
    if (dfd < 0)
        return -1;
    const char *kind;
    fd = rv_open_file_at(dfd, base, flags | O_NOFOLLOW, mode, false, &kind);
    if (fd < 0) {
        if (errno == ELOOP)
            rv_err_set(err, domain, RV_ERR_OPERATION_INVALID, "%s: it is a symbolic link", path);
        else if (kind)
            rv_err_set(err, domain, RV_ERR_OPERATION_INVALID, "%s: it is a %s, not a regular file",
                       path, kind);
        else
            rv_err_set(err, domain, RV_ERR_SYSTEM_ERROR, "%s: %s", path, strerror(errno));
        goto out;
    }
    struct stat sb;
    const char *why = NULL;
    char owner[64];
    if (fstat(fd, &sb) < 0) {
        why = strerror(errno);
    } else if (sb.st_uid != geteuid()) {
        snprintf(owner, sizeof(owner), "it belongs to uid %u", (unsigned)sb.st_uid);
        why = owner;
    } else if (sb.st_nlink != 1) {
        why = "it has other hard links";
    }
    if (why) {
        rv_err_set(err, domain, RV_ERR_OPERATION_INVALID, "%s: %s", path, why);
        close(fd);
        fd = -1;
    }
out:
    if (fd >= 0 && parent) {
        *parent = dfd;
        dfd = -1;
    }
    if (fd >= 0 && name) {
        *name = base;
        base = NULL;
    }
    if (dfd >= 0)
        close(dfd);
    free(base);
    return fd;
}
