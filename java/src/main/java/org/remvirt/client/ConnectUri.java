package org.remvirt.client;

import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import org.remvirt.proto.RvValues;

/** A libvirt connection URI: DRIVER[+TRANSPORT]://[USER@][HOST[:PORT]]/PATH[?PARAMS]. */
final class ConnectUri {
    /** Parameters the client consumes; the rest go to the server in the name. */
    private static final Set<String> CLIENT_PARAMS = Set.of("name", "socket", "mode", "command", "netcat",
            "keyfile", "sshauth", "auth", "authfile", "pkipath", "known_hosts", "known_hosts_verify",
            "no_verify", "no_tty", "no_sanity", "tls_priority", "proxy");

    final String driver;
    final String transport;
    final String user;
    final String host;
    final int port;
    final String path;
    final Map<String, String> params = new LinkedHashMap<>();

    private ConnectUri(URI u) throws LibvirtException {
        String scheme = u.getScheme();
        if (scheme == null)
            throw bad(u.toString(), "no driver name before '://'");
        int plus = scheme.indexOf('+');
        driver = plus < 0 ? scheme : scheme.substring(0, plus);
        host = u.getHost() != null ? u.getHost() : u.getAuthority() == null ? null : null;
        transport = plus >= 0 ? scheme.substring(plus + 1) : host == null || host.isEmpty() ? "unix" : "tls";
        user = u.getUserInfo();
        port = u.getPort();
        path = u.getRawPath() == null ? "" : u.getRawPath();
        String q = u.getRawQuery();
        if (q != null && !q.isEmpty()) {
            for (String kv : q.split("[&;]")) {
                int eq = kv.indexOf('=');
                String k = URLDecoder.decode(eq < 0 ? kv : kv.substring(0, eq), StandardCharsets.UTF_8);
                String v = eq < 0 ? "" : URLDecoder.decode(kv.substring(eq + 1), StandardCharsets.UTF_8);
                params.put(k, v);
            }
        }
    }

    static ConnectUri parse(String text) throws LibvirtException {
        if (text == null)
            throw bad("null", "no URI given");
        try {
            return new ConnectUri(new URI(text));
        } catch (URISyntaxException e) {
            throw bad(text, e.getMessage());
        }
    }

    private static LibvirtException bad(String uri, String why) {
        return new LibvirtException(RvValues.RV_ERROR_INVALID_ARG, RvValues.RV_ERROR_FROM_REMOTE, 2,
                "bad URI '" + uri + "': " + why);
    }

    String param(String name) {
        return params.get(name);
    }

    int port(int dflt) {
        return port > 0 ? port : dflt;
    }

    String socketPath() {
        String s = param("socket");
        return s != null ? s : "/run/libvirt/libvirt-sock";
    }

    String where() {
        return transport.equals("unix") ? socketPath() : host + ":" + port;
    }

    /** What CONNECT_OPEN names: the URI without transport, user and host,
     * and without the parameters the client consumed (name= overrides). */
    String serverName() {
        String given = param("name");
        if (given != null)
            return given;
        StringBuilder b = new StringBuilder(driver).append("://").append(path);
        char sep = '?';
        for (Map.Entry<String, String> e : params.entrySet()) {
            if (CLIENT_PARAMS.contains(e.getKey()))
                continue;
            b.append(sep).append(URLEncoder.encode(e.getKey(), StandardCharsets.UTF_8)).append('=')
                    .append(URLEncoder.encode(e.getValue(), StandardCharsets.UTF_8));
            sep = '&';
        }
        return b.toString();
    }
}
