package dev.dlock.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Method;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The suite's copy of the etcd version rule ({@link EtcdCluster#revokesAfterStall}) answers as the backend's
 * own ({@code StaleLeaderCheck.revokesAfterStall} of dlock-etcd, package-private there and so reached by
 * reflection), so that the clients get the opt-out exactly when the backend would refuse the cluster.
 */
class EtcdVersionRuleTest {
    @Test
    void theCopyAnswersAsTheBackendOnEveryLine() throws Exception {
        Class<?> check = Class.forName("dev.dlock.etcd.StaleLeaderCheck");
        Method rule = check.getDeclaredMethod("revokesAfterStall", String.class);
        rule.setAccessible(true);
        for (String version : List.of(
                "2.3.8",
                "3.3.27",
                "3.4.0",
                "3.4.23",
                "3.4.30",
                "3.4.31",
                "3.4.35",
                "3.5.0",
                "3.5.12",
                "3.5.13",
                "3.5.16",
                "3.5.16-4",
                "3.6.0",
                "4.0.0")) {
            assertThat(EtcdCluster.revokesAfterStall(version)).as(version).isEqualTo(rule.invoke(null, version));
        }
        assertThat(EtcdCluster.revokesAfterStall("3.4.23")).isTrue();
        assertThat(EtcdCluster.revokesAfterStall("3.5.16")).isFalse();
    }

    @Test
    void anUnreadableVersionGetsTheOptOut() {
        assertThat(EtcdCluster.revokesAfterStall("unknown")).isTrue();
    }
}
