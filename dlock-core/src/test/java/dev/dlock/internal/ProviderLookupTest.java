package dev.dlock.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dlock.LockClient;
import org.junit.jupiter.api.Test;

/** The message for a URI no backend accepts: each backend once, and nothing of the URI past its scheme. */
class ProviderLookupTest {
    @Test
    void unknownSchemeNamesSchemeAndEachBackendOnceWithoutThePassword() {
        assertThatThrownBy(() -> LockClient.connect("foo://admin:s3cr3t-sentinel@x:1/db?password=s3cr3t-sentinel"))
                .isInstanceOf(IllegalArgumentException.class)
                .satisfies(e -> {
                    String message = e.getMessage();
                    assertThat(message).contains("scheme 'foo:'").doesNotContain("s3cr3t-sentinel");
                    int first = message.indexOf("MemoryBackendProvider");
                    assertThat(first).as(message).isPositive();
                    assertThat(message.indexOf("MemoryBackendProvider", first + 1))
                            .as("listed once: %s", message)
                            .isNegative();
                });
    }
}
