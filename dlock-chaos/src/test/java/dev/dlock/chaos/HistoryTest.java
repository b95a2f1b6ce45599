package dev.dlock.chaos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class HistoryTest {
    @Test
    void aReaderThatFailsOnALineFailsTheRunNamingTheLineAndTheCause() throws Exception {
        try (History history = new History("127.0.0.1")) {
            String[] address = history.address().split(":");
            try (Socket client = new Socket(address[0], Integer.parseInt(address[1]))) {
                OutputStream out = client.getOutputStream();
                out.write("1\tgrant\tx\ts1\t17\t\t100\t200\n".getBytes(StandardCharsets.UTF_8));
                out.write("1\tgrant\tx\ts2\tseventeen\t\t100\t200\n".getBytes(StandardCharsets.UTF_8));
                out.flush();
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (readersHealthy(history) && System.nanoTime() < deadline) {
                    Thread.sleep(20);
                }
            }
            assertThat(history.events()).hasSize(1);
            assertThatThrownBy(history::requireReaders)
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("seventeen")
                    .hasMessageContaining("NumberFormatException");
        }
    }

    @Test
    void aClientThatGoesAwayIsNotAFailure() throws Exception {
        try (History history = new History("127.0.0.1")) {
            String[] address = history.address().split(":");
            try (Socket client = new Socket(address[0], Integer.parseInt(address[1]))) {
                client.getOutputStream().write("2\thello\t\t\t0\t\t1\t2\n".getBytes(StandardCharsets.UTF_8));
                client.getOutputStream().flush();
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (history.events().isEmpty() && System.nanoTime() < deadline) {
                    Thread.sleep(20);
                }
            }
            Thread.sleep(200);
            assertThat(history.events()).hasSize(1);
            history.requireReaders();
        }
    }

    private static boolean readersHealthy(History history) {
        try {
            history.requireReaders();
            return true;
        } catch (IllegalStateException failed) {
            return false;
        }
    }
}
