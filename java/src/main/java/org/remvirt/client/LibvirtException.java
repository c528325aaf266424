package org.remvirt.client;

import org.remvirt.proto.RvError;

/** A failed call: libvirt's error code (RvValues.RV_ERROR_*), error domain
 * (RvValues.RV_ERROR_FROM_*), level and message, as the server sent them or as
 * this library reports a local failure (a lost connection, a refused
 * argument) with libvirt's codes for it. */
public class LibvirtException extends Exception {
    private static final long serialVersionUID = 1L;

    private final int code;
    private final int domain;
    private final int level;

    public LibvirtException(int code, int domain, int level, String message) {
        super(message);
        this.code = code;
        this.domain = domain;
        this.level = level;
    }

    public LibvirtException(int code, int domain, String message, Throwable cause) {
        super(message, cause);
        this.code = code;
        this.domain = domain;
        this.level = 2;
    }

    static LibvirtException fromWire(RvError e) {
        String message = e.message != null ? e.message : "unknown error (code " + e.code + ")";
        return new LibvirtException(e.code, e.domain, e.level, message);
    }

    /** libvirt's virErrorNumber: RvValues.RV_ERROR_NO_DOMAIN, ... */
    public int getCode() {
        return code;
    }

    /** libvirt's virErrorDomain: RvValues.RV_ERROR_FROM_TEST, ... */
    public int getDomain() {
        return domain;
    }

    /** 1 warning, 2 error. */
    public int getLevel() {
        return level;
    }

    @Override
    public String toString() {
        return "LibvirtException(code " + code + ", domain " + domain + "): " + getMessage();
    }
}
