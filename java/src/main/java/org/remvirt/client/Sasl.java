package org.remvirt.client;

import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import javax.security.auth.callback.Callback;
import javax.security.auth.callback.NameCallback;
import javax.security.auth.callback.PasswordCallback;
import javax.security.auth.callback.UnsupportedCallbackException;
import javax.security.sasl.RealmCallback;
import javax.security.sasl.RealmChoiceCallback;
import javax.security.sasl.SaslClient;
import javax.security.sasl.SaslException;
import org.remvirt.proto.RemoteProtocol;
import org.remvirt.proto.RvAuthSaslStartArgs;
import org.remvirt.proto.RvAuthSaslStepArgs;
import org.remvirt.proto.RvValues;

/** Authentication as libvirt's client does it: none when the server offers
 * it (unless auth=sasl asks otherwise), else SASL with the JDK's mechanisms
 * (javax.security.sasl: DIGEST-MD5, PLAIN, ...).  On plain TCP a security
 * layer (QOP auth-conf or auth-int) is required, as libvirt requires an SSF
 * of at least 56 there; over Unix sockets and TLS none is asked for. */
final class Sasl {
    private static final int MAX_STEPS = 32;
    private static final byte[] NONE = new byte[0];

    private Sasl() {
    }

    private static LibvirtException authFailed(String why) {
        return new LibvirtException(RvValues.RV_ERROR_AUTH_FAILED, RvValues.RV_ERROR_FROM_REMOTE, 2, why);
    }

    static void authenticateIfNeeded(Connection c, ConnectUri u, List<Integer> types, OpenOptions o)
            throws LibvirtException {
        if (types.isEmpty())
            return;
        String auth = u.param("auth");
        String mech = null;
        if (auth != null && !auth.isEmpty()) {
            if (auth.equalsIgnoreCase("sasl")) {
                // any mechanism
            } else if (auth.regionMatches(true, 0, "sasl.", 0, 5) && auth.length() > 5) {
                mech = auth.substring(5);
            } else {
                throw authFailed("unknown authentication type auth=" + auth + " (sasl and sasl.MECHANISM are known)");
            }
            if (!types.contains(RemoteProtocol.RV_AUTH_SASL))
                throw authFailed("the server does not offer SASL authentication, which auth=" + auth + " asks for");
        } else if (types.contains(RemoteProtocol.RV_AUTH_NONE)) {
            return;
        } else if (!types.contains(RemoteProtocol.RV_AUTH_SASL)) {
            throw authFailed("the server requires authentication this client does not support (" + types + ")");
        }
        sasl(c, u, mech, o);
    }

    private static void sasl(Connection c, ConnectUri u, String wanted, OpenOptions o) throws LibvirtException {
        String offered = c.authSaslInit().mechlist;
        String[] mechs = wanted != null ? new String[] { wanted } : offered.trim().split("[ ,]+");
        if (wanted != null && !Arrays.asList(offered.trim().split("[ ,]+")).stream()
                .anyMatch(m -> m.equalsIgnoreCase(wanted)))
            throw authFailed("the server does not offer SASL mechanism " + wanted + " (it offers: " + offered + ")");
        boolean exposed = u.transport.equals("tcp");
        Map<String, Object> props = new HashMap<>();
        props.put(javax.security.sasl.Sasl.QOP, exposed ? "auth-conf,auth-int" : "auth");
        // DIGEST-MD5's layer: RC4 (128 bits), what libvirt's client picks too;
        // the JDK would pick 3DES, which Cyrus SASL on OpenSSL 3 cannot start.
        props.put("com.sun.security.sasl.digest.cipher", "rc4");
        String host = u.host != null && !u.host.isEmpty() ? u.host : "localhost";
        SaslClient sc;
        try {
            sc = javax.security.sasl.Sasl.createSaslClient(mechs, null, "libvirt", host, props,
                    callbacks -> answer(callbacks, o));
        } catch (SaslException e) {
            throw authFailed("SASL: " + e.getMessage());
        }
        if (sc == null)
            throw authFailed("none of the server's SASL mechanisms (" + offered + ") is available in this JDK");
        try {
            byte[] first = sc.hasInitialResponse() ? sc.evaluateChallenge(NONE) : null;
            var reply = c.authSaslStart(new RvAuthSaslStartArgs(sc.getMechanismName(), first == null ? 1 : 0,
                    first == null ? NONE : first));
            int complete = reply.complete;
            byte[] data = reply.nil != 0 ? null : reply.data;
            for (int step = 0; ; step++) {
                if (complete != 0) {
                    // The server's last words (DIGEST-MD5's rspauth) must check out too.
                    if (!sc.isComplete() && data != null && data.length > 0)
                        sc.evaluateChallenge(data);
                    if (!sc.isComplete())
                        throw authFailed("the server ended the SASL exchange before " + sc.getMechanismName()
                                + " was done on our side");
                    break;
                }
                if (step == MAX_STEPS)
                    throw authFailed("the SASL exchange did not end after " + MAX_STEPS + " steps");
                byte[] out = sc.evaluateChallenge(data == null ? NONE : data);
                var r = c.authSaslStep(new RvAuthSaslStepArgs(out == null ? 1 : 0, out == null ? NONE : out));
                complete = r.complete;
                data = r.nil != 0 ? null : r.data;
            }
            String qop = (String) sc.getNegotiatedProperty(javax.security.sasl.Sasl.QOP);
            boolean layer = "auth-int".equals(qop) || "auth-conf".equals(qop);
            if (exposed && !layer)
                throw authFailed("the SASL session has no security layer, which a tcp connection needs");
            if (layer)
                c.wrapTransport(sc);
        } catch (SaslException e) {
            throw authFailed("SASL " + sc.getMechanismName() + ": " + e.getMessage());
        }
    }

    private static void answer(Callback[] callbacks, OpenOptions o) throws UnsupportedCallbackException {
        for (Callback cb : callbacks) {
            if (cb instanceof NameCallback) {
                NameCallback n = (NameCallback) cb;
                n.setName(o.username != null ? o.username : n.getDefaultName());
            } else if (cb instanceof PasswordCallback) {
                if (o.password == null)
                    throw new UnsupportedCallbackException(cb, "no password given (OpenOptions.credentials)");
                ((PasswordCallback) cb).setPassword(o.password);
            } else if (cb instanceof RealmChoiceCallback) {
                ((RealmChoiceCallback) cb).setSelectedIndex(0);
            } else if (cb instanceof RealmCallback) {
                RealmCallback r = (RealmCallback) cb;
                r.setText(r.getDefaultText());
            } else {
                throw new UnsupportedCallbackException(cb);
            }
        }
    }
}
