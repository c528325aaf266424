/* The fd stream endpoint (server/drivers/stream_fd.c) on a pipe: data both
 * ways, "nothing now" with its watcher armed (an empty pipe to read, a
 * full one to write), the end of the data, a length limit (reads end,
 * writes past it fail), a hang-up, and freeing closes the fd. */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <ev.h>

#include "server/drivers/stream_fd.h"
#include "tests/unit/check.h"

static rv_stream_io *endpoint(struct ev_loop *loop, int fd, int readable, int writable)
{
    rv_err err = { 0 };
    rv_stream_io *io = rv_stream_fd_new(loop, fd, readable, writable, &err);
    CHECK(io != NULL);
    CHECK((io->ops->read != NULL) == readable);
    CHECK((io->ops->write != NULL) == writable);
    return io;
}

int main(void)
{
    struct ev_loop *loop = ev_default_loop(0);
    rv_err err = { 0 };
    char buf[256];
    int p[2];

    CHECK(pipe(p) == 0);
    rv_stream_io *in = endpoint(loop, p[0], 1, 0), *out = endpoint(loop, p[1], 0, 1);
    CHECK_INT_EQ(out->ops->write(out, "hello", 5, &err), 5);
    CHECK_INT_EQ(in->ops->read(in, buf, sizeof(buf), &err), 5);
    CHECK(memcmp(buf, "hello", 5) == 0);
    /* Empty: nothing now, and its watcher waits for more. */
    CHECK_INT_EQ(in->ops->read(in, buf, sizeof(buf), &err), RV_STREAM_AGAIN);
    /* Full: a write takes nothing, and waits for room. */
    static char block[65536];
    ssize_t n;
    size_t total = 0;
    while ((n = out->ops->write(out, block, sizeof(block), &err)) > 0)
        total += (size_t)n;
    CHECK_INT_EQ(n, 0);
    CHECK(total >= 4096);
    /* The writer goes: once drained, the reader sees the end. */
    out->ops->free(out);
    size_t drained = 0;
    while ((n = in->ops->read(in, block, sizeof(block), &err)) > 0)
        drained += (size_t)n;
    CHECK_INT_EQ(n, 0);
    CHECK_INT_EQ(drained, total);
    in->ops->free(in);
    CHECK(fcntl(p[0], F_GETFD) < 0 && errno == EBADF);
    CHECK(fcntl(p[1], F_GETFD) < 0 && errno == EBADF);

    /* A length limit: 3 bytes may be written, 2 read. */
    CHECK(pipe(p) == 0);
    in = endpoint(loop, p[0], 1, 0);
    out = endpoint(loop, p[1], 0, 1);
    rv_stream_fd_set_length(out, 3);
    rv_stream_fd_set_length(in, 2);
    CHECK_INT_EQ(out->ops->write(out, "abcde", 5, &err), -1);
    CHECK(strstr(err.message, "No space left on device") != NULL);
    rv_err_clear(&err);
    CHECK_INT_EQ(out->ops->write(out, "abc", 3, &err), 3);
    CHECK_INT_EQ(out->ops->write(out, "d", 1, &err), -1);
    rv_err_clear(&err);
    CHECK_INT_EQ(in->ops->read(in, buf, sizeof(buf), &err), 2);
    CHECK(memcmp(buf, "ab", 2) == 0);
    CHECK_INT_EQ(in->ops->read(in, buf, sizeof(buf), &err), 0);

    /* A hang-up: the data ends, writes fail. */
    rv_stream_fd_set_length(in, 0);
    rv_stream_fd_set_length(out, 0);
    rv_stream_fd_hangup(in);
    rv_stream_fd_hangup(out);
    CHECK_INT_EQ(in->ops->read(in, buf, sizeof(buf), &err), 0);
    CHECK_INT_EQ(out->ops->write(out, "x", 1, &err), -1);
    CHECK(strstr(err.message, "another session") != NULL);
    rv_err_clear(&err);
    /* Its wake comes from the loop (no stream is bound: nothing to do). */
    ev_run(loop, EVRUN_NOWAIT);
    in->ops->free(in);
    out->ops->free(out);
    ev_loop_destroy(loop);
    return 0;
}
