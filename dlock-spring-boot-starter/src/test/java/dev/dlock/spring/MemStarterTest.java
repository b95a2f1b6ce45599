package dev.dlock.spring;

import java.util.Map;

/**
 * The starter contract on the in-memory store. "Down" is played by a client whose backend is frozen from
 * the start ({@link dev.dlock.tck.FreezableBackend}), as a process cut off from its store.
 */
class MemStarterTest extends StarterContractTest {
    private final String uri = "mem:starter-" + System.nanoTime();

    @Override
    Map<String, Object> storeProperties() {
        return Map.of("dlock.uri", uri);
    }

    @Override
    String peerUri() {
        return uri;
    }

    @Override
    Map<String, Object> downStoreProperties() {
        return Map.of("dlock.uri", uri, "test.freezable", "true", "test.frozen-at-start", "true");
    }

    @Override
    String downStoreText() {
        return "the lock store at " + uri + " did not answer";
    }
}
