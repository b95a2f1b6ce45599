package dev.dlock.chaos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class NetNamesTest {
    @Test
    void everyNameFitsLinuxInterfaceNamesAndNoTwoRunsShareOne() {
        Set<String> seen = new HashSet<>();
        for (int slot = 0; slot < NetNames.SLOTS; slot++) {
            NetNames names = new NetNames(slot);
            assertThat(seen.add(names.storeIp())).isTrue();
            assertThat(seen.add(names.resourceIp())).isTrue();
            for (int id = 0; id <= NetNames.MAX_CLIENTS; id++) {
                for (String name : List.of(
                        names.namespace(id),
                        names.hostLink('s', id),
                        names.innerLink('s', id),
                        names.hostLink('r', id),
                        names.innerLink('r', id))) {
                    assertThat(name).hasSizeLessThanOrEqualTo(15);
                    assertThat(seen.add(name)).as(name).isTrue();
                    assertThat(names.owns(name)).as(name).isTrue();
                }
                assertThat(seen.add(names.subnet('s', id))).isTrue();
                assertThat(seen.add(names.subnet('r', id))).isTrue();
            }
        }
    }

    @Test
    void aRunOwnsOnlyItsOwnSlotsNames() {
        NetNames one = new NetNames(1);
        NetNames eleven = new NetNames(11);
        assertThat(one.owns(eleven.hostLink('s', 2))).isFalse();
        assertThat(eleven.owns(one.hostLink('s', 12))).isFalse();
        assertThat(one.owns(eleven.namespace(3))).isFalse();
        assertThat(one.owns("dlc1")).isFalse();
        assertThat(one.owns("eth0")).isFalse();
    }

    @Test
    void theSlotComesFromTheProcessIdAndWrapsAround() {
        assertThat(NetNames.forProcess(4242).slot()).isEqualTo(42);
        assertThat(new NetNames(NetNames.SLOTS - 1).next().slot()).isZero();
        assertThat(new NetNames(7).storeIp()).isEqualTo("10.107.0.1");
        assertThat(new NetNames(7).resourceIp()).isEqualTo("10.107.128.1");
        assertThat(new NetNames(7).subnet('s', 0)).isEqualTo("10.107.1.");
        assertThat(new NetNames(7).subnet('r', 98)).isEqualTo("10.107.227.");
        assertThatThrownBy(() -> new NetNames(NetNames.SLOTS)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new NetNames(0).namespace(NetNames.MAX_CLIENTS + 1))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
