/* Keycode tables for DOMAIN_SEND_KEY (keycodes.h). */
#include <stddef.h>

#include "server/drivers/conf/keycodes.h"

static const char *const set_names[RV_KEYCODE_SETS] = {
    "linux", "xt", "atset1", "atset2", "atset3", "osx", "xt_kbd", "usb", "win32", "qnum",
};

/* By Linux keycode: the xt_kbd code (the scancode of set 1, 0x100 for an
 * 0xe0-prefixed key; 0: none).  Below 84 it is the keycode itself. */
static const unsigned short xt_kbd[128] = {
    [85] = 0x76, [86] = 0x56, [87] = 0x57, [88] = 0x58, [89] = 0x73, [90] = 0x78,
    [91] = 0x77, [92] = 0x79, [93] = 0x70, [94] = 0x7b, [95] = 0x5c, [96] = 0x11c,
    [97] = 0x11d, [98] = 0x135, [99] = 0x54, [100] = 0x138, [101] = 0x5b, [102] = 0x147,
    [103] = 0x148, [104] = 0x149, [105] = 0x14b, [106] = 0x14d, [107] = 0x14f,
    [108] = 0x150, [109] = 0x151, [110] = 0x152, [111] = 0x153, [112] = 0x16f,
    [113] = 0x120, [114] = 0x12e, [115] = 0x130, [116] = 0x15e, [117] = 0x59,
    [118] = 0x14e, [119] = 0x146, [120] = 0x10b, [121] = 0x7e, [123] = 0x10d,
    [124] = 0x7d, [125] = 0x15b, [126] = 0x15c, [127] = 0x15d,
};

/* By Linux keycode: the USB HID usage (0: none). */
static const unsigned char usb[128] = {
    0, 41, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 45, 46, 42, 43,          /* 0-15 */
    20, 26, 8, 21, 23, 28, 24, 12, 18, 19, 47, 48, 40, 224, 4, 22,          /* 16-31 */
    7, 9, 10, 11, 13, 14, 15, 51, 52, 53, 225, 50, 29, 27, 6, 25,           /* 32-47 */
    5, 17, 16, 54, 55, 56, 229, 85, 226, 44, 57, 58, 59, 60, 61, 62,        /* 48-63 */
    63, 64, 65, 66, 67, 83, 71, 95, 96, 97, 86, 92, 93, 94, 87, 89,         /* 64-79 */
    90, 91, 98, 99, 0, 148, 100, 68, 69, 135, 146, 147, 138, 136, 139, 140, /* 80-95 */
    88, 228, 84, 70, 230, 0, 74, 82, 75, 80, 79, 77, 81, 78, 73, 76,        /* 96-111 */
    0, 239, 238, 237, 102, 103, 0, 72, 0, 133, 144, 145, 137, 227, 231, 101,/* 112-127 */
};

/* By Linux keycode: the scancode of set 2 (0xe0 prefix as the high byte;
 * 0: none). */
static const unsigned short atset2[128] = {
    [1] = 0x76, [2] = 0x16, [3] = 0x1e, [4] = 0x26, [5] = 0x25, [6] = 0x2e, [7] = 0x36,
    [8] = 0x3d, [9] = 0x3e, [10] = 0x46, [11] = 0x45, [12] = 0x4e, [13] = 0x55, [14] = 0x66,
    [15] = 0xd, [16] = 0x15, [17] = 0x1d, [18] = 0x24, [19] = 0x2d, [20] = 0x2c, [21] = 0x35,
    [22] = 0x3c, [23] = 0x43, [24] = 0x44, [25] = 0x4d, [26] = 0x54, [27] = 0x5b, [28] = 0x5a,
    [29] = 0x14, [30] = 0x1c, [31] = 0x1b, [32] = 0x23, [33] = 0x2b, [34] = 0x34, [35] = 0x33,
    [36] = 0x3b, [37] = 0x42, [38] = 0x4b, [39] = 0x4c, [40] = 0x52, [41] = 0xe, [42] = 0x12,
    [43] = 0x5d, [44] = 0x1a, [45] = 0x22, [46] = 0x21, [47] = 0x2a, [48] = 0x32, [49] = 0x31,
    [50] = 0x3a, [51] = 0x41, [52] = 0x49, [53] = 0x4a, [54] = 0x59, [55] = 0x7c, [56] = 0x11,
    [57] = 0x29, [58] = 0x58, [59] = 0x5, [60] = 0x6, [61] = 0x4, [62] = 0xc, [63] = 0x3,
    [64] = 0xb, [65] = 0x83, [66] = 0xa, [67] = 0x1, [68] = 0x9, [69] = 0x77, [70] = 0x7e,
    [71] = 0x6c, [72] = 0x75, [73] = 0x7d, [74] = 0x7b, [75] = 0x6b, [76] = 0x73, [77] = 0x74,
    [78] = 0x79, [79] = 0x69, [80] = 0x72, [81] = 0x7a, [82] = 0x70, [83] = 0x71, [85] = 0x5f,
    [86] = 0x61, [87] = 0x78, [88] = 0x7, [89] = 0x51, [90] = 0x63, [91] = 0x62, [92] = 0x64,
    [93] = 0x13, [94] = 0x67, [95] = 0x27, [96] = 0xe05a, [97] = 0xe014, [98] = 0xe04a,
    [99] = 0x7f, [100] = 0xe011, [102] = 0xe06c, [103] = 0xe075, [104] = 0xe07d, [105] = 0xe06b,
    [106] = 0xe074, [107] = 0xe069, [108] = 0xe072, [109] = 0xe07a, [110] = 0xe070,
    [111] = 0xe071, [112] = 0xe06f, [113] = 0xe023, [114] = 0xe021, [115] = 0xe032,
    [116] = 0xe037, [117] = 0xf, [118] = 0xe079, [119] = 0xe077, [121] = 0x6d, [124] = 0x6a,
    [125] = 0xe01f, [126] = 0xe027, [127] = 0xe02f,
};

/* The original XT's codes where they differ from the keycode (below 84
 * they are the same; 0: none above). */
static unsigned int xt_code(unsigned int linux_code)
{
    switch (linux_code) {
    case 87: return 101;
    case 88: return 102;
    case 103: return 109;
    case 105: return 111;
    case 106: return 112;
    case 108: return 110;
    case 110: return 107;
    case 111: return 108;
    default: return linux_code < 84 ? linux_code : 0;
    }
}

static unsigned int kbd_of(unsigned int linux_code)
{
    if (linux_code == 0 || linux_code >= 128)
        return 0;
    return linux_code < 84 ? linux_code : xt_kbd[linux_code];
}

/* code in set as a Linux keycode: 0 when none. */
static unsigned int to_linux(unsigned int set, unsigned int code)
{
    for (unsigned int k = 1; k < 128; k++) {
        unsigned int kbd = kbd_of(k), v;
        switch (set) {
        case RV_KEYCODE_LINUX: v = k; break;
        case RV_KEYCODE_XT: v = xt_code(k); break;
        /* set 1: the prefix as the high byte */
        case RV_KEYCODE_ATSET1: v = kbd & 0x100 ? 0xe000 | (kbd & 0xff) : kbd; break;
        case RV_KEYCODE_XT_KBD: v = kbd; break;
        case RV_KEYCODE_ATSET2: v = atset2[k]; break;
        case RV_KEYCODE_USB: v = usb[k]; break;
        case RV_KEYCODE_QNUM: v = kbd & 0x100 ? 0x80 | (kbd & 0xff) : kbd; break;
        default: return 0;
        }
        if (v && v == code)
            return k;
    }
    return 0;
}

const char *rv_keycode_set_name(unsigned int set)
{
    return set < RV_KEYCODE_SETS ? set_names[set] : NULL;
}

bool rv_keycode_set_known(unsigned int set)
{
    return set == RV_KEYCODE_LINUX || set == RV_KEYCODE_XT || set == RV_KEYCODE_ATSET1 ||
           set == RV_KEYCODE_ATSET2 ||
           set == RV_KEYCODE_XT_KBD || set == RV_KEYCODE_USB || set == RV_KEYCODE_QNUM;
}

int rv_keycode_to_qnum(unsigned int set, unsigned int code, unsigned int *qnum)
{
    unsigned int k = to_linux(set, code), kbd = kbd_of(k);
    if (!kbd)
        return -1;
    *qnum = kbd & 0x100 ? 0x80 | (kbd & 0xff) : kbd;
    return 0;
}

int rv_keycode_check(int from, unsigned int set, const unsigned int *codes, unsigned int n,
                     bool check_keys, rv_err *err)
{
    if (set >= RV_KEYCODE_SETS)
        return rv_err_fail(err, from, RV_ERR_INTERNAL_ERROR,
                           "internal error: invalid codeset %u", set);
    if (n > RV_SEND_KEY_MAX)
        return rv_err_fail(err, from, RV_ERR_INVALID_ARG,
                           "invalid argument: nkeycodes must be <= %d", RV_SEND_KEY_MAX);
    if (n == 0)
        return rv_err_fail(err, from, RV_ERR_INVALID_ARG,
                           "invalid argument: nkeycodes must be >= 1");
    unsigned int q;
    for (unsigned int i = 0; check_keys && rv_keycode_set_known(set) && i < n; i++)
        if (rv_keycode_to_qnum(set, codes[i], &q) < 0)
            return rv_err_fail(err, from, RV_ERR_INTERNAL_ERROR,
                               "internal error: invalid keycode %u of %s codeset", codes[i],
                               set_names[set]);
    return 0;
}
