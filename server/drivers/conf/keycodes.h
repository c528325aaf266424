/* Keycodes for DOMAIN_SEND_KEY: libvirt's codesets (virKeycodeSet) and
 * their translation to QEMU's numbers (qnum: the PC scancode of set 1,
 * 0x80 added for an 0xe0-prefixed key), which QMP's send-key takes.
 * The tables cover the standard PC keyboard (Linux keycodes 0-127), from
 * the keycodemapdb project's data; codesets without one here (atset3,
 * osx, win32) are not translated. */
#ifndef RV_SERVER_DRIVERS_CONF_KEYCODES_H
#define RV_SERVER_DRIVERS_CONF_KEYCODES_H

#include <stdbool.h>

#include "common/error.h"

enum { RV_KEYCODE_LINUX, RV_KEYCODE_XT, RV_KEYCODE_ATSET1, RV_KEYCODE_ATSET2,
       RV_KEYCODE_ATSET3, RV_KEYCODE_OSX, RV_KEYCODE_XT_KBD, RV_KEYCODE_USB,
       RV_KEYCODE_WIN32, RV_KEYCODE_QNUM, RV_KEYCODE_SETS };
#define RV_SEND_KEY_MAX 16

/* The codeset's name as libvirt spells it ("linux", "usb", ...), or NULL. */
const char *rv_keycode_set_name(unsigned int set);
/* Whether the codeset has a table here. */
bool rv_keycode_set_known(unsigned int set);
/* code of set as qnum: 0, or -1 when it has none. */
int rv_keycode_to_qnum(unsigned int set, unsigned int code, unsigned int *qnum);
/* The checks both drivers make of a SEND_KEY call: the codeset, the
 * count and, with check_keys (libvirt's test driver), each key where a
 * table is known ("invalid keycode"; the QEMU driver's refusal is its
 * translation's instead); -1 with libvirt's error in error domain from. */
int rv_keycode_check(int from, unsigned int set, const unsigned int *codes, unsigned int n,
                     bool check_keys, rv_err *err);

#endif
