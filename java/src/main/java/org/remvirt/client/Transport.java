package org.remvirt.client;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;

/** A byte stream to the server: a socket channel (Unix, TCP), a TLS
 * socket, or a SASL security layer over either.  One thread reads while
 * others write (writes are serialised by the connection). */
abstract class Transport {
    /** Reads at least one byte; -1 at end of stream. */
    abstract int read(byte[] b, int off, int len) throws IOException;

    abstract void write(byte[] b, int off, int len) throws IOException;

    abstract void close();

    /** A Unix or TCP socket channel in blocking mode. */
    static final class Channel extends Transport {
        private final SocketChannel ch;

        private java.nio.channels.Selector writable;   // non-blocking mode: waits for room

        Channel(SocketChannel ch) {
            this.ch = ch;
        }

        SocketChannel channel() {
            return ch;
        }

        @Override
        int read(byte[] b, int off, int len) throws IOException {
            return ch.read(ByteBuffer.wrap(b, off, len));
        }

        @Override
        void write(byte[] b, int off, int len) throws IOException {
            ByteBuffer buf = ByteBuffer.wrap(b, off, len);
            while (buf.hasRemaining()) {
                if (ch.write(buf) == 0 && buf.hasRemaining()) {
                    // Non-blocking and the socket is full: wait for room
                    // (the connection serialises writes).
                    if (writable == null) {
                        writable = java.nio.channels.Selector.open();
                        ch.register(writable, java.nio.channels.SelectionKey.OP_WRITE);
                    }
                    writable.select(1000);
                    writable.selectedKeys().clear();
                }
            }
        }

        @Override
        void close() {
            try {
                if (writable != null)
                    writable.close();
                ch.close();
            } catch (IOException e) {
                // nothing more to do with a socket that will not close
            }
        }
    }

    /** A socket seen through its streams (a TLS socket). */
    static final class Streams extends Transport {
        private final Socket socket;
        private final InputStream in;
        private final OutputStream out;

        Streams(Socket socket) throws IOException {
            this.socket = socket;
            this.in = socket.getInputStream();
            this.out = socket.getOutputStream();
        }

        @Override
        int read(byte[] b, int off, int len) throws IOException {
            return in.read(b, off, len);
        }

        @Override
        void write(byte[] b, int off, int len) throws IOException {
            out.write(b, off, len);
            out.flush();
        }

        @Override
        void close() {
            try {
                socket.close();
            } catch (IOException e) {
                // as above
            }
        }
    }
}
