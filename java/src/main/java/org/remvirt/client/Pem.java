package org.remvirt.client;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** libvirt's PKI files (cacert.pem, clientcert.pem, clientkey.pem) read with
 * the JDK alone: certificates through CertificateFactory, keys as PKCS#8
 * ("PRIVATE KEY") or PKCS#1 RSA ("RSA PRIVATE KEY", what certtool writes),
 * which is given the PKCS#8 wrapping the JDK's KeyFactory reads. */
final class Pem {
    private static final Pattern BLOCK =
            Pattern.compile("-----BEGIN ([A-Z0-9 ]+)-----([^-]*)-----END \\1-----");
    /** AlgorithmIdentifier rsaEncryption (1.2.840.113549.1.1.1) with NULL parameters. */
    private static final byte[] RSA_ALGORITHM = {
        0x30, 0x0d, 0x06, 0x09, 0x2a, (byte) 0x86, 0x48, (byte) 0x86, (byte) 0xf7, 0x0d, 0x01, 0x01,
        0x01, 0x05, 0x00 };

    private Pem() {
    }

    private static List<byte[]> blocks(Path file, String... types) throws IOException {
        String text = Files.readString(file, StandardCharsets.US_ASCII);
        List<byte[]> out = new ArrayList<>();
        Matcher m = BLOCK.matcher(text);
        while (m.find()) {
            for (String t : types) {
                if (t.equals(m.group(1)))
                    out.add(Base64.getMimeDecoder().decode(m.group(2)));
            }
        }
        return out;
    }

    static List<X509Certificate> certificates(Path file) throws IOException, GeneralSecurityException {
        CertificateFactory cf = CertificateFactory.getInstance("X.509");
        List<X509Certificate> out = new ArrayList<>();
        for (byte[] der : blocks(file, "CERTIFICATE"))
            out.add((X509Certificate) cf.generateCertificate(new ByteArrayInputStream(der)));
        if (out.isEmpty())
            throw new GeneralSecurityException(file + ": no certificate in it");
        return out;
    }

    static PrivateKey privateKey(Path file) throws IOException, GeneralSecurityException {
        List<byte[]> pkcs8 = blocks(file, "PRIVATE KEY");
        if (!pkcs8.isEmpty())
            return keyOf(pkcs8.get(0));
        List<byte[]> rsa = blocks(file, "RSA PRIVATE KEY");
        if (!rsa.isEmpty())
            return KeyFactory.getInstance("RSA").generatePrivate(new PKCS8EncodedKeySpec(wrapRsa(rsa.get(0))));
        throw new GeneralSecurityException(file + ": no unencrypted private key (PRIVATE KEY or "
                + "RSA PRIVATE KEY) in it");
    }

    private static PrivateKey keyOf(byte[] der) throws GeneralSecurityException {
        GeneralSecurityException last = null;
        for (String alg : new String[] { "RSA", "EC", "Ed25519", "DSA" }) {
            try {
                return KeyFactory.getInstance(alg).generatePrivate(new PKCS8EncodedKeySpec(der));
            } catch (GeneralSecurityException e) {
                last = e;
            }
        }
        throw last;
    }

    /** PrivateKeyInfo ::= SEQUENCE { INTEGER 0, AlgorithmIdentifier, OCTET STRING pkcs1 } */
    private static byte[] wrapRsa(byte[] pkcs1) {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        body.write(0x02);
        body.write(0x01);
        body.write(0x00);
        body.writeBytes(RSA_ALGORITHM);
        body.write(0x04);
        body.writeBytes(derLength(pkcs1.length));
        body.writeBytes(pkcs1);
        ByteArrayOutputStream seq = new ByteArrayOutputStream();
        seq.write(0x30);
        seq.writeBytes(derLength(body.size()));
        seq.writeBytes(body.toByteArray());
        return seq.toByteArray();
    }

    private static byte[] derLength(int n) {
        if (n < 0x80)
            return new byte[] { (byte) n };
        if (n < 0x100)
            return new byte[] { (byte) 0x81, (byte) n };
        if (n < 0x10000)
            return new byte[] { (byte) 0x82, (byte) (n >> 8), (byte) n };
        return new byte[] { (byte) 0x83, (byte) (n >> 16), (byte) (n >> 8), (byte) n };
    }
}
