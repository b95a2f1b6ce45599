package dev.dlock.spi;

import dev.dlock.LockKind;
import java.util.Objects;

/**
 * Identifies the resource an operation acts on and the mode of the caller.
 *
 * <p>The engine has validated both strings before a backend sees them: the namespace is 1 to 64
 * characters of {@code [A-Za-z0-9_.-]}, the name any non-empty string of at most 1,024 UTF-8 bytes. A
 * backend must map the name without letting it reach another namespace or kind (bind parameters, Lua
 * {@code ARGV}/{@code KEYS}, escaped path segments).
 *
 * @param namespace separates applications that share one store
 * @param name the user's lock name, verbatim
 * @param mode how the caller holds or waits for the resource
 */
public record LockKey(String namespace, String name, Mode mode) {
    /**
     * Checks that no component is null.
     *
     * @param namespace as described on the record
     * @param name as described on the record
     * @param mode as described on the record
     */
    public LockKey {
        Objects.requireNonNull(namespace, "namespace");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(mode, "mode");
    }

    /**
     * The kind of the resource, shorthand for {@code mode().kind()}.
     *
     * @return the kind
     */
    public LockKind kind() {
        return mode.kind();
    }

    /**
     * The same resource seen in another mode (for example the write side of a read-write lock).
     *
     * @param other the mode wanted
     * @return a key with the same namespace and name
     */
    public LockKey withMode(Mode other) {
        return new LockKey(namespace, name, other);
    }
}
