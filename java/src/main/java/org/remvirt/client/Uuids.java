package org.remvirt.client;

import org.remvirt.proto.RvValues;

/** UUIDs as libvirt prints them: 36 characters, lower-case hex. */
final class Uuids {
    private Uuids() {
    }

    static String format(byte[] u) {
        StringBuilder b = new StringBuilder(36);
        for (int i = 0; i < 16; i++) {
            if (i == 4 || i == 6 || i == 8 || i == 10)
                b.append('-');
            b.append(Character.forDigit((u[i] >> 4) & 0xf, 16)).append(Character.forDigit(u[i] & 0xf, 16));
        }
        return b.toString();
    }

    static byte[] parse(String s) throws LibvirtException {
        String hex = s == null ? "" : s.replace("-", "");
        if (hex.length() != 32)
            throw new LibvirtException(RvValues.RV_ERROR_INVALID_ARG, RvValues.RV_ERROR_FROM_NONE, 2,
                    "invalid UUID '" + s + "'");
        byte[] u = new byte[16];
        for (int i = 0; i < 16; i++) {
            int hi = Character.digit(hex.charAt(2 * i), 16), lo = Character.digit(hex.charAt(2 * i + 1), 16);
            if (hi < 0 || lo < 0)
                throw new LibvirtException(RvValues.RV_ERROR_INVALID_ARG, RvValues.RV_ERROR_FROM_NONE, 2,
                        "invalid UUID '" + s + "'");
            u[i] = (byte) (hi << 4 | lo);
        }
        return u;
    }
}
