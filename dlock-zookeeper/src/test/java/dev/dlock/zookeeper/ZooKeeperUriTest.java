package dev.dlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dlock.LockBackendException;
import dev.dlock.LockClient;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class ZooKeeperUriTest {
    @Test
    void parsesHostsChrootTimeoutAndCredentials() {
        ZooKeeperUri u = ZooKeeperUri.parse(
                "zookeeper://bob:p%40ss%3Aword@zk1:2181,zk2:2182,[::1]:2183/apps/locks/?sessionTimeout=20s");
        assertThat(u.connectString()).isEqualTo("zk1:2181,zk2:2182,[::1]:2183");
        assertThat(u.chroot()).isEqualTo("apps/locks");
        assertThat(u.sessionTimeoutMs()).isEqualTo(20_000);
        assertThat(u.user()).isEqualTo("bob");
        assertThat(u.password()).isEqualTo("p@ss:word");
        assertThat(u.toString()).doesNotContain("p@ss").contains("bob:****@");
    }

    @Test
    void defaultsWithoutOptions() {
        ZooKeeperUri u = ZooKeeperUri.parse("zookeeper://localhost:2181");
        assertThat(u.chroot()).isNull();
        assertThat(u.user()).isNull();
        assertThat(u.sessionTimeoutMs()).isEqualTo(ZooKeeperUri.DEFAULT_SESSION_TIMEOUT_MS);
        assertThat(ZooKeeperUri.parse("zookeeper://h:1?sessionTimeout=1500").sessionTimeoutMs())
                .isEqualTo(1500);
        assertThat(ZooKeeperUri.parse("zookeeper://h:1?sessionTimeout=1m").sessionTimeoutMs())
                .isEqualTo(60_000);
    }

    @Test
    void badUrisAreRejectedWithTheReason() {
        assertThatThrownBy(() -> ZooKeeperUri.parse("zookeeper://"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("no host");
        assertThatThrownBy(() -> ZooKeeperUri.parse("zookeeper://host"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("host:port");
        assertThatThrownBy(() -> ZooKeeperUri.parse("zookeeper://host:99999"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("port");
        assertThatThrownBy(() -> ZooKeeperUri.parse("zookeeper://h:1?sessionTimeout=soon"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("sessionTimeout");
        assertThatThrownBy(() -> ZooKeeperUri.parse("zookeeper://h:1?timeout=5"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("unknown parameter 'timeout'");
        assertThatThrownBy(() -> ZooKeeperUri.parse("zookeeper://h:1/a/../b"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("chroot");
        assertThatThrownBy(() -> ZooKeeperUri.parse("zookeeper://justuser@h:1"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("user:password");
        assertThatThrownBy(() -> ZooKeeperUri.parse("zookeeper://u:secret@h:x"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageNotContaining("secret");
    }

    @Test
    void theProviderIsFoundByScheme() {
        assertThatThrownBy(() -> LockClient.connect("zookeeper://bad"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("host:port");
    }

    @Test
    void anUnreachableEnsembleFailsWithinTheOperationTimeout() {
        long start = System.nanoTime();
        assertThatThrownBy(() -> LockClient.builder("zookeeper://127.0.0.1:1")
                        .operationTimeout(Duration.ofMillis(800))
                        .build())
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("127.0.0.1:1");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
    }
}
