package org.remvirt.client;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.List;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509TrustManager;

/** TLS with the JDK and libvirt's PKI layout: DIR/cacert.pem (the CA that
 * signed the server), DIR/clientcert.pem and DIR/clientkey.pem (ours).
 * The server's certificate must chain to the CA and name the host (as
 * libvirt checks), unless no_verify=1. */
final class Tls {
    private Tls() {
    }

    static Path defaultPkiDir() {
        if ("root".equals(System.getProperty("user.name")))
            return null;   // root: the system paths, below
        return Path.of(System.getProperty("user.home"), ".pki", "libvirt");
    }

    /** Says which check failed, in libremvirt's words where it has them. */
    private static String handshakeFailure(Exception e, String host) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            String m = String.valueOf(t.getMessage());
            if (t instanceof java.security.cert.CertificateException && m.startsWith("No subject alternative")
                    || m.startsWith("No name matching"))
                return "the server's certificate does not match the host name '" + host + "' (" + m + ")";
            if (t instanceof java.security.cert.CertPathValidatorException
                    || t instanceof java.security.cert.CertPathBuilderException)
                return "the server's certificate is not signed by a CA in cacert.pem, or is not valid now (" + m + ")";
        }
        return "TLS handshake failed: " + e.getMessage();
    }

    static SSLSocket connect(String host, int port, Path pkiDir, boolean noVerify)
            throws IOException, GeneralSecurityException {
        Path ca, cert, key;
        if (pkiDir != null) {
            ca = pkiDir.resolve("cacert.pem");
            cert = pkiDir.resolve("clientcert.pem");
            key = pkiDir.resolve("clientkey.pem");
        } else {
            ca = Path.of("/etc/pki/CA/cacert.pem");
            cert = Path.of("/etc/pki/libvirt/clientcert.pem");
            key = Path.of("/etc/pki/libvirt/private/clientkey.pem");
        }
        KeyStore keys = KeyStore.getInstance("PKCS12");
        keys.load(null, null);
        if (Files.exists(cert)) {
            List<X509Certificate> chain = Pem.certificates(cert);
            keys.setKeyEntry("client", Pem.privateKey(key), new char[0],
                    chain.toArray(new Certificate[0]));
        }
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(keys, new char[0]);

        TrustManager[] trust;
        if (noVerify) {
            trust = new TrustManager[] { new X509TrustManager() {
                @Override
                public void checkClientTrusted(X509Certificate[] c, String a) {
                }

                @Override
                public void checkServerTrusted(X509Certificate[] c, String a) {
                }

                @Override
                public X509Certificate[] getAcceptedIssuers() {
                    return new X509Certificate[0];
                }
            } };
        } else {
            KeyStore cas = KeyStore.getInstance("PKCS12");
            cas.load(null, null);
            int i = 0;
            for (X509Certificate c : Pem.certificates(ca))
                cas.setCertificateEntry("ca" + i++, c);
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(cas);
            trust = tmf.getTrustManagers();
        }
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(kmf.getKeyManagers(), trust, null);
        SSLSocket socket = (SSLSocket) ctx.getSocketFactory().createSocket(host, port);
        socket.setTcpNoDelay(true);
        if (!noVerify) {
            SSLParameters params = socket.getSSLParameters();
            params.setEndpointIdentificationAlgorithm("HTTPS");   // the name must match the host
            socket.setSSLParameters(params);
        }
        try {
            socket.startHandshake();
        } catch (javax.net.ssl.SSLHandshakeException e) {
            socket.close();
            throw new IOException(handshakeFailure(e, host), e);
        }
        // The server checks our certificate, then sends one byte, 1; it
        // closes instead when it refuses us.
        int verdict;
        try {
            verdict = socket.getInputStream().read();
        } catch (IOException e) {
            socket.close();
            throw new IOException("the server refused our certificate (" + e.getMessage() + ")", e);
        }
        if (verdict != 1) {
            socket.close();
            throw new IOException(verdict < 0 ? "the server refused our certificate (it closed the connection)"
                    : "the server sent " + verdict + " instead of its TLS verdict 1");
        }
        return socket;
    }
}
