package org.remvirt.client;

/** How to open a connection: read-only, SASL credentials, keepalive, and
 * how long a caller spins for its reply before it sleeps. */
public final class OpenOptions {
    boolean readOnly;
    String username;
    char[] password;
    int keepaliveInterval = Connection.KEEPALIVE_INTERVAL;
    int keepaliveCount = Connection.KEEPALIVE_COUNT;
    int spinMicros = Integer.getInteger("remvirt.spinMicros", 30);

    public OpenOptions readOnly(boolean ro) {
        this.readOnly = ro;
        return this;
    }

    /** For SASL mechanisms that ask for a name and password (DIGEST-MD5, PLAIN, ...). */
    public OpenOptions credentials(String user, char[] pass) {
        this.username = user;
        this.password = pass == null ? null : pass.clone();
        return this;
    }

    /** Seconds of silence before a PING, and unanswered PINGs before the
     * connection is given up; interval 0 turns keepalive off. */
    public OpenOptions keepalive(int interval, int count) {
        this.keepaliveInterval = interval;
        this.keepaliveCount = count;
        return this;
    }

    /** Microseconds a caller polls for its reply before it parks (default 30,
     * or the system property remvirt.spinMicros); 0 parks at once. */
    public OpenOptions spinMicros(int us) {
        this.spinMicros = us;
        return this;
    }
}
