#include "client/tty.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "common/util.h"

int rvc_tty_available(void)
{
    return isatty(STDIN_FILENO);
}

static void say(const char *text)
{
    fputs(text, stderr);
    fflush(stderr);
}

/* One byte of input: 1, 0 at end of input, -1 on an error (errno). */
static int read_byte(char *c)
{
    for (;;) {
        ssize_t r = read(STDIN_FILENO, c, 1);
        if (r >= 0 || errno != EINTR)
            return (int)r;
    }
}

static int is_key(const struct termios *t, int which, char c)
{
    return t->c_cc[which] != _POSIX_VDISABLE && (cc_t)c == t->c_cc[which];
}

/* Outcomes of reading a line. */
enum { LINE_OK, LINE_EOF, LINE_TOO_LONG, LINE_ERROR, LINE_INTERRUPTED };

/* The terminal edits the line and echoes it; read byte by byte so that
 * nothing past the newline is taken from whoever reads stdin next. */
static int read_echoed(char *buf, size_t *len)
{
    int too_long = 0;
    char c;
    *len = 0;
    for (;;) {
        int r = read_byte(&c);
        if (r < 0)
            return LINE_ERROR;
        if (r == 0)
            return *len || too_long ? LINE_OK : LINE_EOF;
        if (c == '\n')
            return too_long ? LINE_TOO_LONG : LINE_OK;
        if (*len < RVC_TTY_ANSWER_MAX)
            buf[(*len)++] = c;
        else
            too_long = 1;
    }
}

/* Echo off, and signals and line editing too: Ctrl-C must not kill us
 * with echo still off, so the keys are read here and acted on once the
 * settings are back.  *signo gets the signal to raise, if any. */
static int read_secret(const struct termios *saved, char *buf, size_t *len, int *signo)
{
    int too_long = 0;
    char c;
    *len = 0;
    *signo = 0;
    for (;;) {
        int r = read_byte(&c);
        if (r < 0)
            return LINE_ERROR;
        if (r == 0)
            return *len || too_long ? LINE_OK : LINE_EOF;
        if (c == '\n' || c == '\r')
            return too_long ? LINE_TOO_LONG : LINE_OK;
        if (is_key(saved, VINTR, c) || is_key(saved, VQUIT, c)) {
            *signo = is_key(saved, VINTR, c) ? SIGINT : SIGQUIT;
            return LINE_INTERRUPTED;
        }
        if (is_key(saved, VEOF, c)) {
            if (*len == 0 && !too_long)
                return LINE_EOF;
            return too_long ? LINE_TOO_LONG : LINE_OK;
        }
        if (is_key(saved, VERASE, c) || c == 0x7f || c == '\b') {
            /* A whole UTF-8 character: its continuation bytes first. */
            while (*len > 0 && ((unsigned char)buf[*len - 1] & 0xc0) == 0x80)
                (*len)--;
            if (*len > 0)
                (*len)--;
            continue;
        }
        if (is_key(saved, VKILL, c)) {
            *len = 0;
            too_long = 0;
            continue;
        }
        /* Suspending with echo off would leave the shell without echo. */
        if (is_key(saved, VSUSP, c))
            continue;
        if (*len < RVC_TTY_ANSWER_MAX)
            buf[(*len)++] = c;
        else
            too_long = 1;
    }
}

static char *ask_shown(const char *prompt, int echo, rv_err *err)
{
    char buf[RVC_TTY_ANSWER_MAX];
    size_t len = 0;
    int outcome, signo = 0, saved_errno = 0;

    if (echo) {
        say(prompt);
        outcome = read_echoed(buf, &len);
        saved_errno = errno;
    } else {
        struct termios saved, quiet;
        if (tcgetattr(STDIN_FILENO, &saved) < 0) {
            rv_err_set_errno(err, RV_FROM_REMOTE, errno, "cannot read the terminal's settings");
            err->code = RV_ERR_AUTH_FAILED;
            return NULL;
        }
        quiet = saved;
        quiet.c_lflag &= ~(tcflag_t)(ECHO | ECHONL | ICANON | ISIG | IEXTEN);
        quiet.c_cc[VMIN] = 1;
        quiet.c_cc[VTIME] = 0;
        /* Echo goes off before the prompt shows, so that nothing typed
         * after it is echoed; what was typed before it (and shown) is
         * dropped, not taken as the secret. */
        if (tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet) < 0) {
            rv_err_set_errno(err, RV_FROM_REMOTE, errno, "cannot turn the terminal's echo off");
            err->code = RV_ERR_AUTH_FAILED;
            return NULL;
        }
        say(prompt);
        outcome = read_secret(&saved, buf, &len, &signo);
        saved_errno = errno;
        while (tcsetattr(STDIN_FILENO, TCSANOW, &saved) < 0 && errno == EINTR)
            continue;
        /* The Enter that ended the secret was not echoed. */
        say("\n");
    }

    char *answer = NULL;
    switch (outcome) {
    case LINE_OK:
        if (!(answer = strndup(buf, len)))
            rv_err_set(err, RV_FROM_REMOTE, RV_ERR_NO_MEMORY, "out of memory");
        break;
    case LINE_EOF:
        rv_err_set(err, RV_FROM_REMOTE, RV_ERR_AUTH_FAILED,
                   "no answer at the prompt (end of input)");
        break;
    case LINE_TOO_LONG:
        rv_err_set(err, RV_FROM_REMOTE, RV_ERR_AUTH_FAILED,
                   "the answer at the prompt is longer than %d bytes", RVC_TTY_ANSWER_MAX);
        break;
    case LINE_INTERRUPTED:
        rv_err_set(err, RV_FROM_REMOTE, RV_ERR_AUTH_FAILED, "the prompt was interrupted");
        break;
    default:
        rv_err_set_errno(err, RV_FROM_REMOTE, saved_errno, "cannot read the answer at the prompt");
        err->code = RV_ERR_AUTH_FAILED;
        break;
    }
    explicit_bzero(buf, sizeof(buf));
    if (signo)
        raise(signo);
    return answer;
}

char *rvc_tty_ask(const char *prompt, int echo, rv_err *err)
{
    /* The prompt names the host and user of a URI, which may come from
     * anywhere (a script, a link): control characters in it are shown
     * escaped, never obeyed by the terminal. */
    char *shown = rv_escape_text_dup(prompt, strlen(prompt), 0);
    if (!shown) {
        rv_err_set(err, RV_FROM_REMOTE, RV_ERR_NO_MEMORY, "out of memory");
        return NULL;
    }
    char *answer = ask_shown(shown, echo, err);
    free(shown);
    return answer;
}
