/* The fd stream endpoint on a sparse file (rv_stream_fd_set_sparse): a
 * download finds the file's holes (SEEK_DATA/SEEK_HOLE) and its reads
 * stop where data ends; a length limit cuts the last hole; an upload's
 * hole moves on and ends the file there, and one past the volume's size
 * or the limit is refused without touching the file.  Skips on a file
 * system without holes. */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ev.h>

#include "server/drivers/stream_fd.h"
#include "tests/unit/check.h"

#define KIB 1024LL
#define MIB (1024 * KIB)

static char block[MIB];

/* A 2 MiB file: data in [64 KiB, 128 KiB) and [1 MiB, 1 MiB + 4 KiB). */
static int sparse_file(char *path)
{
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    memset(block, 'x', sizeof(block));
    CHECK(pwrite(fd, block, 64 * KIB, 64 * KIB) == 64 * KIB);
    CHECK(pwrite(fd, block, 4 * KIB, MIB) == 4 * KIB);
    CHECK(ftruncate(fd, 2 * MIB) == 0);
    CHECK(fsync(fd) == 0);
    struct stat st;
    CHECK(fstat(fd, &st) == 0);
    if (st.st_blocks * 512 > 512 * KIB || lseek(fd, 0, SEEK_DATA) != 64 * KIB) {
        unlink(path);
        printf("SKIP: the file system under %s does not keep holes\n", path);
        exit(CHECK_SKIP);
    }
    CHECK(lseek(fd, 0, SEEK_SET) == 0);
    return fd;
}

static rv_stream_io *endpoint(struct ev_loop *loop, int fd, int readable)
{
    rv_err err = { 0 };
    rv_stream_io *io = rv_stream_fd_new(loop, fd, readable, !readable, &err);
    CHECK(io != NULL);
    CHECK(!io->sparse);
    rv_stream_fd_set_sparse(io, 2 * MIB);
    CHECK(io->sparse);
    return io;
}

int main(void)
{
    struct ev_loop *loop = ev_default_loop(0);
    rv_err err = { 0 };
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char path[4096];
    snprintf(path, sizeof(path), "%s/test-stream-fd-sparse.XXXXXX", tmp);
    int fd = sparse_file(path);

    /* Download: hole, data, hole, data, hole to the end, the end. */
    rv_stream_io *io = endpoint(loop, dup(fd), 1);
    CHECK_INT_EQ(io->ops->skip_hole(io, &err), 64 * KIB);
    CHECK_INT_EQ(io->ops->skip_hole(io, &err), 0);       /* data here */
    CHECK_INT_EQ(io->ops->read(io, block, sizeof(block), &err), 64 * KIB);
    CHECK_INT_EQ(io->ops->skip_hole(io, &err), MIB - 128 * KIB);
    CHECK_INT_EQ(io->ops->skip_hole(io, &err), 0);
    CHECK_INT_EQ(io->ops->read(io, block, 1000, &err), 1000);   /* a short buffer */
    CHECK_INT_EQ(io->ops->skip_hole(io, &err), 0);
    CHECK_INT_EQ(io->ops->read(io, block, sizeof(block), &err), 4 * KIB - 1000);
    CHECK_INT_EQ(io->ops->skip_hole(io, &err), MIB - 4 * KIB);
    CHECK_INT_EQ(io->ops->skip_hole(io, &err), 0);
    CHECK_INT_EQ(io->ops->read(io, block, sizeof(block), &err), 0);
    CHECK(!rv_err_is_set(&err));
    io->ops->free(io);

    /* From 96 KiB, 512 KiB long: data to 128 KiB, then a hole cut at the end. */
    int dfd = dup(fd);
    CHECK(lseek(dfd, 96 * KIB, SEEK_SET) == 96 * KIB);
    io = endpoint(loop, dfd, 1);
    rv_stream_fd_set_length(io, 512 * KIB);
    CHECK_INT_EQ(io->ops->skip_hole(io, &err), 0);
    CHECK_INT_EQ(io->ops->read(io, block, sizeof(block), &err), 32 * KIB);
    CHECK_INT_EQ(io->ops->skip_hole(io, &err), 480 * KIB);
    CHECK_INT_EQ(io->ops->skip_hole(io, &err), 0);
    CHECK_INT_EQ(io->ops->read(io, block, sizeof(block), &err), 0);
    io->ops->free(io);

    /* Upload: a hole moves on and ends the file there (as libvirtd's). */
    CHECK(lseek(fd, 0, SEEK_SET) == 0);     /* dup()s share the position */
    CHECK(pwrite(fd, "12345678", 8, 0) == 8);
    io = endpoint(loop, dup(fd), 0);
    CHECK_INT_EQ(io->ops->write(io, "abc", 3, &err), 3);
    CHECK_INT_EQ(io->ops->hole(io, 5, &err), 0);
    struct stat st;
    CHECK(fstat(fd, &st) == 0);
    CHECK_INT_EQ(st.st_size, 8);
    CHECK_INT_EQ(io->ops->write(io, "z", 1, &err), 1);
    CHECK(pread(fd, block, 16, 0) == 9);
    CHECK(memcmp(block, "abc45678z", 9) == 0);  /* the hole kept what was there */
    /* Past the volume's size (2 MiB), however large: refused, file untouched. */
    static const long long too_long[] = { 2 * MIB, 1LL << 40, INT64_MAX };
    for (size_t i = 0; i < sizeof(too_long) / sizeof(too_long[0]); i++) {
        CHECK_INT_EQ(io->ops->hole(io, too_long[i], &err), -1);
        CHECK_STR_HAS(err.message, "goes past the end of the volume");
        rv_err_clear(&err);
    }
    CHECK_INT_EQ(io->ops->hole(io, 2 * MIB - 9, &err), 0);  /* up to the end exactly */
    CHECK(fstat(fd, &st) == 0);
    CHECK_INT_EQ(st.st_size, 2 * MIB);
    io->ops->free(io);

    /* Past a length limit: no space, as a write past it. */
    CHECK(lseek(fd, 0, SEEK_SET) == 0);
    io = endpoint(loop, dup(fd), 0);
    rv_stream_fd_set_length(io, 100);
    CHECK_INT_EQ(io->ops->hole(io, 60, &err), 0);
    CHECK_INT_EQ(io->ops->hole(io, 41, &err), -1);
    CHECK_STR_HAS(err.message, "No space left on device");
    rv_err_clear(&err);
    io->ops->free(io);

    close(fd);
    unlink(path);
    ev_loop_destroy(loop);
    printf("sparse fd endpoint tests passed\n");
    return 0;
}
