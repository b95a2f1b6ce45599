package dev.dlock.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The wire framers count requests whatever the TCP segmentation. */
class FramersTest {
    /** Feeds the bytes one at a time and all at once; both must count the same. */
    private static int count(Framers.Framer bytewise, Framers.Framer whole, byte[] stream) {
        int oneByOne = 0;
        for (int i = 0; i < stream.length; i++) {
            oneByOne += bytewise.feed(stream, i, 1);
        }
        int atOnce = whole.feed(stream, 0, stream.length);
        assertThat(oneByOne).isEqualTo(atOnce);
        return atOnce;
    }

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.ISO_8859_1);
    }

    @Test
    void respCountsCommandArraysAndInlineCommands() {
        String evalsha =
                "*4\r\n$7\r\nEVALSHA\r\n$3\r\nabc\r\n$1\r\n1\r\n$5\r\nk\r\n*2\r\n"; // a key containing CRLF-like text
        String pipeline = "*1\r\n$4\r\nPING\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$-1\r\nPING\r\n";
        byte[] stream = ascii(evalsha + pipeline);
        assertThat(count(new Framers.Resp(), new Framers.Resp(), stream)).isEqualTo(4);
    }

    @Test
    void postgresCountsQueriesAndExecutesAfterTheStartup() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(ByteBuffer.allocate(8).putInt(8).putInt(80877103).array()); // SSLRequest
        byte[] params = ascii("user\0postgres\0\0");
        out.writeBytes(
                ByteBuffer.allocate(8).putInt(8 + params.length).putInt(196608).array());
        out.writeBytes(params);
        out.writeBytes(message('P', ascii("\0SELECT 1\0\0\0"))); // Parse: not counted
        out.writeBytes(message('E', ascii("\0\0\0\0\0"))); // Execute: counted
        out.writeBytes(message('S', new byte[0])); // Sync: not counted
        out.writeBytes(message('Q', ascii("SELECT 'E'\0"))); // simple query: counted
        byte[] stream = out.toByteArray();
        assertThat(count(new Framers.Postgres(), new Framers.Postgres(), stream))
                .isEqualTo(2);
    }

    private static byte[] message(char type, byte[] body) {
        return ByteBuffer.allocate(5 + body.length)
                .put((byte) type)
                .putInt(4 + body.length)
                .put(body)
                .array();
    }

    @Test
    void mySqlCountsPacketsThatStartACommand() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(packet(1, ascii("handshake response"))); // sequence 1: not a command
        out.writeBytes(packet(0, ascii("\3SELECT 1"))); // COM_QUERY
        out.writeBytes(packet(0, new byte[] {0x17, 1, 0, 0, 0})); // COM_STMT_EXECUTE
        byte[] stream = out.toByteArray();
        assertThat(count(new Framers.MySql(), new Framers.MySql(), stream)).isEqualTo(2);
    }

    private static byte[] packet(int sequence, byte[] payload) {
        return ByteBuffer.allocate(4 + payload.length)
                .put((byte) payload.length)
                .put((byte) 0)
                .put((byte) 0)
                .put((byte) sequence)
                .put(payload)
                .array();
    }

    @Test
    void zooKeeperCountsFramesAfterTheConnectRequest() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (int i = 0; i < 4; i++) { // connect request, then three requests (a ping among them)
            byte[] body = new byte[10 + i];
            out.writeBytes(ByteBuffer.allocate(4).putInt(body.length).array());
            out.writeBytes(body);
        }
        byte[] stream = out.toByteArray();
        assertThat(count(new Framers.ZooKeeperFrames(), new Framers.ZooKeeperFrames(), stream))
                .isEqualTo(3);
    }
}
