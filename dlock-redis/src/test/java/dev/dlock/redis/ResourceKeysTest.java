package dev.dlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.LockKind;
import dev.dlock.spi.LockKey;
import dev.dlock.spi.Mode;
import io.lettuce.core.cluster.SlotHash;
import java.util.List;
import org.junit.jupiter.api.Test;

class ResourceKeysTest {
    @Test
    void allKeysOfAResourceShareOneSlotWhateverBracesTheNameHas() {
        for (String name : List.of("plain", "{tag}", "}{", "{}", "a{b}c", "{", "}", "ünïcødé {x}")) {
            ResourceKeys keys = ResourceKeys.of(new LockKey("ns", name, Mode.FAIR));
            int slot = SlotHash.getSlot(keys.holders());
            for (String key : List.of(
                    keys.expiries(), keys.queue(), keys.waits(), keys.tokens(), keys.waiting(), keys.channel())) {
                assertThat(SlotHash.getSlot(key)).as(key).isEqualTo(slot);
            }
            // The hash tag is the digest alone, whatever braces the name has: the name never reaches it.
            assertThat(keys.prefix()).matches("ns:fair:\\{[0-9a-f]{40}}");
        }
    }

    @Test
    void theClusterMarkerOfAResourceIsInItsSlotAndSharedBySlot() {
        for (int slot = 0; slot < SlotHash.SLOT_COUNT; slot++) {
            assertThat(SlotHash.getSlot(SlotTags.of(slot))).isEqualTo(slot);
        }
        for (String name : List.of("a", "b", "{c}", "ünï")) {
            ResourceKeys keys = ResourceKeys.of(new LockKey("ns", name, Mode.EXCLUSIVE));
            int slot = SlotHash.getSlot(keys.holders());
            assertThat(SlotHash.getSlot(keys.clusterEpoch())).as(name).isEqualTo(slot);
            assertThat(keys.clusterEpoch()).isEqualTo("ns:epoch:{" + SlotTags.of(slot) + "}");
        }
    }

    @Test
    void namespaceKindAndNameAllSeparateResources() {
        String a = ResourceKeys.of(new LockKey("ns", "a", Mode.EXCLUSIVE)).prefix();
        assertThat(ResourceKeys.of(new LockKey("ns", "b", Mode.EXCLUSIVE)).prefix())
                .isNotEqualTo(a);
        assertThat(ResourceKeys.of(new LockKey("ns", "a", Mode.FAIR)).prefix()).isNotEqualTo(a);
        assertThat(ResourceKeys.of(new LockKey("other", "a", Mode.EXCLUSIVE)).prefix())
                .isNotEqualTo(a);
        // read and write share the record of their read-write lock
        assertThat(ResourceKeys.of(new LockKey("ns", "a", Mode.READ)))
                .isEqualTo(ResourceKeys.of(new LockKey("ns", "a", Mode.WRITE)));
        // a name cannot forge another namespace's prefix: the namespace is outside the digest's reach
        assertThat(ResourceKeys.of(new LockKey("ns", "x}:other:lock:{", Mode.EXCLUSIVE))
                        .prefix())
                .startsWith("ns:lock:{")
                .hasSize("ns:lock:{".length() + 40 + 1);
    }

    @Test
    void holdersKeysFoundByScanAreParsedStrictly() {
        ResourceKeys keys = ResourceKeys.of(new LockKey("ns", "a", Mode.PERMIT));
        assertThat(ResourceKeys.fromHoldersKey("ns", keys.holders())).isEqualTo(keys);
        assertThat(ResourceKeys.fromHoldersKey("ns", keys.holders()).kind()).isEqualTo(LockKind.SEMAPHORE);
        assertThat(ResourceKeys.fromHoldersKey("ns", "ns:sem:{short}:h")).isNull();
        assertThat(ResourceKeys.fromHoldersKey("other", keys.holders())).isNull();
    }
}
