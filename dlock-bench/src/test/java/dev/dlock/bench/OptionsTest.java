package dev.dlock.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class OptionsTest {
    @Test
    void defaultsRunEverythingAtFullLength() {
        Options o = Main.fromArgs();
        assertThat(o.quick()).isFalse();
        assertThat(o.scenarios()).containsExactly(Scenario.values());
        assertThat(o.warmup()).isEqualTo(Duration.ofSeconds(2));
        assertThat(o.measure()).isEqualTo(Duration.ofSeconds(9));
        assertThat(o.rounds()).isEqualTo(3);
        assertThat(o.heldLeases()).isEqualTo(10_000);
        assertThat(o.held()).isEqualTo(Duration.ofSeconds(60));
        assertThat(o.out()).isEqualTo(Path.of("target", "bench"));
        assertThat(o.endpoints().redis()).hasToString("127.0.0.1:6379");
    }

    @Test
    void quickShortensEveryCellButExplicitValuesWin() {
        Options o = Main.fromArgs("--quick", "--held-seconds", "3");
        assertThat(o.quick()).isTrue();
        assertThat(o.rounds()).isEqualTo(1);
        assertThat(o.measure()).isLessThan(Duration.ofSeconds(1));
        assertThat(o.heldLeases()).isLessThan(1_000);
        assertThat(o.held()).isEqualTo(Duration.ofSeconds(3));
    }

    @Test
    void scenariosAndSystemsAreRepeatableOrCommaSeparated() {
        Options o = Main.fromArgs(
                "--scenario",
                "contended,uncontended",
                "--scenario",
                "held",
                "--system",
                "dlock@redis",
                "--system",
                "curator",
                "--backend",
                "zookeeper",
                "--redis",
                "localhost:7000");
        assertThat(o.scenarios()).containsExactly(Scenario.UNCONTENDED, Scenario.CONTENDED, Scenario.HELD);
        assertThat(o.selects(new CuratorSystem())).isTrue();
        assertThat(o.selects(new RedissonSystem(false))).isFalse();
        assertThat(o.selects(new RawSystem("zookeeper"))).isFalse();
        assertThat(o.endpoints().redis()).isEqualTo(new Endpoints.HostPort("localhost", 7000));
        Options byId = Main.fromArgs("--system", "dlock@redis");
        assertThat(byId.selects(new DlockSystem("redis", (e, t) -> "redis://x")))
                .isTrue();
        assertThat(byId.selects(new DlockSystem("mem", (e, t) -> "mem:"))).isFalse();
    }

    @Test
    void badArgumentsAreNamed() {
        assertThatThrownBy(() -> Main.fromArgs("--scenario", "fast"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("unknown scenario 'fast'");
        assertThatThrownBy(() -> Main.fromArgs("--measure", "0"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("--measure");
        assertThatThrownBy(() -> Main.fromArgs("--rounds", "x"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("--rounds expects a whole number");
        assertThatThrownBy(() -> Main.fromArgs("--held-leases"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("--held-leases needs a value");
        assertThatThrownBy(() -> Main.fromArgs("--redis", "nowhere"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("HOST:PORT");
        assertThatThrownBy(() -> Main.fromArgs("--fast"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("unknown argument '--fast'")
                .hasMessageContaining("usage:");
    }
}
