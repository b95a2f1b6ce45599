package dev.dlock.mem;

import dev.dlock.spi.LockBackendFactory;
import java.lang.reflect.Constructor;

/**
 * A memory store of its own for one test run, outside the JVM-wide registry of {@link MemoryStore#named}.
 * The model-checking tests need it: they run the same scenario thousands of times, each on a store with
 * no state left by the runs before (a hold or a token counter left behind would make runs differ).
 */
public final class FreshMemoryStore {
    private FreshMemoryStore() {}

    /** A backend factory whose clients all share one new, empty store. */
    public static LockBackendFactory factory() {
        MemoryStore store;
        try {
            Constructor<MemoryStore> c = MemoryStore.class.getDeclaredConstructor(String.class);
            c.setAccessible(true);
            store = c.newInstance("model-check");
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot make a memory store", e);
        }
        return context -> new MemoryBackend(store);
    }
}
