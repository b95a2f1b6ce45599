package dev.dlock.chaos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class OptionsTest {
    @Test
    void quickDefaultsCoverEveryStoreAndFault() throws Exception {
        Options o = Main.fromArgs("--quick");
        assertThat(o.quick()).isTrue();
        assertThat(o.stores()).containsExactlyElementsOf(Stores.ALL.keySet());
        assertThat(o.faults()).containsExactlyInAnyOrder(Fault.values());
        assertThat(o.events()).isEqualTo(4);
        assertThat(o.clients()).isEqualTo(3);
    }

    @Test
    void longRunDefaultsToAThousandEventsAndFiveClients() throws Exception {
        Options o = Main.fromArgs();
        assertThat(o.events()).isEqualTo(1000);
        assertThat(o.clients()).isEqualTo(5);
    }

    @Test
    void repeatedStoresAndFaultsAreKept() throws Exception {
        Options o = Main.fromArgs(
                "--store",
                "zookeeper",
                "--store",
                "redis",
                "--fault",
                "partition",
                "--fault",
                "kill-store",
                "--events",
                "7",
                "--seed",
                "42",
                "--clients",
                "4");
        assertThat(o.stores()).isEqualTo(List.of("zookeeper", "redis"));
        assertThat(o.faults()).isEqualTo(Set.of(Fault.PARTITION, Fault.KILL_STORE));
        assertThat(o.events()).isEqualTo(7);
        assertThat(o.seed()).isEqualTo(42);
        assertThat(o.clients()).isEqualTo(4);
    }

    @Test
    void badInputIsRefusedWithTheReason() {
        assertThatThrownBy(() -> Main.fromArgs("--store", "etcd-nope"))
                .isInstanceOf(Options.UsageException.class)
                .hasMessageContaining("unknown store 'etcd-nope'");
        assertThatThrownBy(() -> Main.fromArgs("--fault", "meteor"))
                .isInstanceOf(Options.UsageException.class)
                .hasMessageContaining("unknown fault 'meteor'");
        assertThatThrownBy(() -> Main.fromArgs("--events", "0"))
                .isInstanceOf(Options.UsageException.class)
                .hasMessageContaining("greater than 0");
        assertThatThrownBy(() -> Main.fromArgs("--events", "-3"))
                .isInstanceOf(Options.UsageException.class)
                .hasMessageContaining("greater than 0");
        assertThatThrownBy(() -> Main.fromArgs("--events", "many"))
                .isInstanceOf(Options.UsageException.class)
                .hasMessageContaining("whole number");
        assertThatThrownBy(() -> Main.fromArgs("--events"))
                .isInstanceOf(Options.UsageException.class)
                .hasMessageContaining("needs a value");
        assertThatThrownBy(() -> Main.fromArgs("--clients", "9"))
                .isInstanceOf(Options.UsageException.class)
                .hasMessageContaining("3 to 5");
        assertThatThrownBy(() -> Main.fromArgs("--frobnicate"))
                .isInstanceOf(Options.UsageException.class)
                .hasMessageContaining("unknown argument '--frobnicate'");
    }

    @Test
    void usageNamesEveryStoreAndFault() {
        for (String store : Stores.ALL.keySet()) {
            assertThat(Options.USAGE).contains(store);
        }
        for (Fault f : Fault.values()) {
            assertThat(Options.USAGE).contains(f.id());
        }
    }
}
