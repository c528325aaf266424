/* rvsh console: the terminal side of a console stream. */
#ifndef RV_RVSH_CONSOLE_H
#define RV_RVSH_CONSOLE_H

#include "remvirt.h"

/* Join stdin and stdout to st (opened with RV_STREAM_NONBLOCK) until ^]
 * is typed (0) or the console ends (0) or fails (-1, the last error says
 * why).  A terminal on stdin is put in raw mode meanwhile. */
int rvsh_console_run(rv_stream *st);

#endif
