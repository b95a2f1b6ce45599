package dev.dlock.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dlock.LockClient;
import java.util.List;
import org.junit.jupiter.api.Test;

class EtcdUriTest {
    @Test
    void parsesHostsPrefixAndCredentials() {
        EtcdUri uri = EtcdUri.parse("etcd://a:1,b,[::1]:3/app/locks/?user=u%40x&password=p%26w");
        assertThat(uri.endpoints()).containsExactly("http://a:1", "http://b:2379", "http://[::1]:3");
        assertThat(uri.prefix()).isEqualTo("app/locks/");
        assertThat(uri.user()).isEqualTo("u@x");
        assertThat(uri.password()).isEqualTo("p&w");
        assertThat(uri.toString()).doesNotContain("p&w");
    }

    @Test
    void tlsSchemeUsesHttpsAndNoPrefixMeansNone() {
        EtcdUri uri = EtcdUri.parse("etcds://etcd.example:2379");
        assertThat(uri.endpoints()).isEqualTo(List.of("https://etcd.example:2379"));
        assertThat(uri.prefix()).isEmpty();
        assertThat(uri.user()).isNull();
        assertThat(uri.allowStaleLeaderRevoke()).as("refused unless asked for").isFalse();
        assertThat(EtcdUri.parse("etcd://a?allowStaleLeaderRevoke=true").allowStaleLeaderRevoke())
                .isTrue();
    }

    @Test
    void badUrisNameTheProblem() {
        assertBad("etcd://", "no host");
        assertBad("etcd://a,,b", "empty host");
        assertBad("etcd://a:0", "bad port '0'");
        assertBad("etcd://a:x", "bad port 'x'");
        assertBad("etcd://a:70000", "bad port '70000'");
        assertBad("etcd://:2379", "empty host");
        assertBad("etcd://[::1", "unclosed '['");
        assertBad("etcd://a//b", "bad key prefix");
        assertBad("etcd://a/x/../y", "bad key prefix");
        assertBad("etcd://a?user=u", "both user and password");
        assertBad("etcd://a?password=secret", "both user and password");
        assertBad("etcd://a?user=&password=p", "empty user");
        assertBad("etcd://a?allowStaleLeaderRevoke=yes", "allowStaleLeaderRevoke must be true or false, not 'yes'");
        assertBad("etcd://a?timeout=3", "unknown parameter 'timeout'");
        assertBad("etcd://u:p@a", "not user@host");
        assertBad("http://a:2379", "not an etcd URI");
    }

    @Test
    void passwordsNeverAppearInMessages() {
        assertThatThrownBy(() -> EtcdUri.parse("etcd://a:x?user=u&password=s3cret"))
                .hasMessageNotContaining("s3cret")
                .hasMessageContaining("password=***");
    }

    @Test
    void theProviderIsFoundByScheme() {
        assertThatThrownBy(() -> LockClient.connect("etcd://a:bad"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("bad port 'bad'");
        assertThatThrownBy(() -> LockClient.connect("etcds://"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("no host");
    }

    private static void assertBad(String uri, String message) {
        assertThatThrownBy(() -> EtcdUri.parse(uri))
                .as(uri)
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(message);
    }
}
