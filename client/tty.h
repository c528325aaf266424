/* Asking the user at the terminal for a credential: the prompt goes to
 * stderr, the answer comes from stdin, which must be a terminal. */
#ifndef RV_CLIENT_TTY_H
#define RV_CLIENT_TTY_H

#include "common/error.h"

/* The longest answer taken, in bytes. */
#define RVC_TTY_ANSWER_MAX 1024

/* Whether stdin is a terminal. */
int rvc_tty_available(void);

/* Show prompt and read one line: echoed as typed, or with echo 0 not
 * shown at all (for secrets), the terminal's settings put back on every
 * way out.  Returns the line (malloc'd, without its newline) or NULL with
 * err (RV_ERR_AUTH_FAILED): end of input, too long, a read error, or the
 * user pressed the interrupt or quit key at a secret prompt, in which
 * case that signal is raised once the terminal is restored. */
char *rvc_tty_ask(const char *prompt, int echo, rv_err *err);

#endif
