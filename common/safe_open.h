/* Opening what someone else can name or reach, from a process that
 * serves every client on one thread and may run as root:
 *  - a path a client names (a save image, a disk) is opened so that a
 *    FIFO or a device can neither hold the open nor be read as a file;
 *  - a path that runs through directories other users can write (a
 *    storage pool, the pid file, a log file) is walked one component at
 *    a time, so that a symbolic link they plant or swap in cannot
 *    redirect it. */
#ifndef RV_COMMON_SAFE_OPEN_H
#define RV_COMMON_SAFE_OPEN_H

#include <stdbool.h>
#include <sys/stat.h>

#include "common/error.h"

/* "FIFO", "socket", "character device", "block device", "directory",
 * "symbolic link" or "regular file": for messages. */
const char *rv_file_kind(mode_t mode);

/* openat(2) (mode for O_CREAT) with O_NONBLOCK | O_CLOEXEC added, so that a FIFO or a
 * device cannot block the open; then anything but a regular file (or a
 * block device, with block_ok) is closed and refused.  O_NONBLOCK is
 * cleared on the fd returned.  -1 with errno set when open failed, or
 * with errno EINVAL and *kind (when not NULL) the kind of file refused;
 * *kind is NULL on any other failure. */
int rv_open_file_at(int dirfd, const char *path, int flags, mode_t mode, bool block_ok,
                    const char **kind);

/* The directory path names, opened O_RDONLY | O_DIRECTORY, reached one
 * component at a time (from '/' or the working directory).  A symbolic
 * link on the way is followed only when root or this process's user
 * owns it and the directory holding it is one nobody else can change
 * (owned by them, writable by nobody else, or sticky); any other is
 * refused with err set (domain, RV_ERR_OPERATION_INVALID) naming it.
 * Returns the fd or -1 with err set; messages read "PATH: why", for the
 * caller to put in context. */
int rv_open_dir_safely(const char *path, int domain, rv_err *err);

/* The directory that holds the last component of path, reached as
 * rv_open_dir_safely does, and that component's name in *name (malloc'd):
 * to create or remove it there.  -1 with err set (*name NULL). */
int rv_open_parent_safely(const char *path, char **name, int domain, rv_err *err);

/* The file path names: its directory reached as rv_open_dir_safely
 * does, the file itself opened with flags | O_NOFOLLOW | O_NONBLOCK |
 * O_CLOEXEC (O_NONBLOCK cleared after), and refused unless it is a
 * regular file that this process's user owns with one link: what
 * someone else planted there is not written to.  *parent and *name
 * (when not NULL) get the directory's fd and the file's name in it, to
 * remove it later without walking again.  Returns the fd or -1 with err
 * set (domain). */
int rv_open_file_safely(const char *path, int flags, mode_t mode, int *parent, char **name,
                        int domain, rv_err *err);

#endif
