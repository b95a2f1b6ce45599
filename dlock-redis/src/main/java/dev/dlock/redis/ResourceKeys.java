package dev.dlock.redis;

import dev.dlock.LockKind;
import dev.dlock.spi.LockKey;
import io.lettuce.core.cluster.SlotHash;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The Redis keys and the pub/sub channel of one resource (namespace, kind, name).
 *
 * <p>Every key is {@code <namespace>:<kind>:{<digest>}:<part>}, where the digest is the first 160 bits of
 * SHA-256 over namespace, kind and name. So all keys of a resource share one Cluster hash slot (the hash
 * tag is the digest, whatever braces the name contains), every key starts with the namespace (ACL key
 * patterns such as {@code ~dlock:*} work), and no name can reach another namespace or kind. The name
 * itself is stored in the holders hash for listing.
 *
 * <p>Parts: {@code h} holders hash, {@code x} hold expiries, {@code q} queue order, {@code e} queue-entry
 * expiries, {@code t} fencing-token counter, {@code m} waiter marker of an exclusive lock; the channel is
 * {@code <prefix>:w}. For the {@code lock} kind, {@code h} is the hold string of {@code exclusive.lua}
 * and only {@code t} and {@code m} join it. The scripts derive {@code h} (and {@code dlock.lua} {@code
 * x}) from the prefix in their renew operation, so the suffixes must match.
 *
 * <p>Concurrency: immutable.
 *
 * <p>Failure modes: none at run time; two names collide only if their SHA-256 digests agree in the first
 * 160 bits.
 *
 * @param prefix {@code <namespace>:<kind>:{<digest>}}
 */
record ResourceKeys(String prefix) {
    private static final HexFormat HEX = HexFormat.of();
    private static final int DIGEST_BYTES = 20;

    /** Cloned per call: much cheaper than a provider lookup, which showed in profiles of every acquire. */
    private static final MessageDigest SHA_256 = sha256();

    private static MessageDigest sha256() {
        try {
            MessageDigest digest = MessageDigest.getInstance("SHA-256");
            digest.clone(); // fail at class initialization, not on a lock call, if cloning is unsupported
            return digest;
        } catch (NoSuchAlgorithmException | CloneNotSupportedException e) {
            throw new IllegalStateException("a cloneable SHA-256 is required", e);
        }
    }

    static ResourceKeys of(LockKey key) {
        MessageDigest sha;
        try {
            sha = (MessageDigest) SHA_256.clone();
        } catch (CloneNotSupportedException e) {
            throw new IllegalStateException("checked when the class was initialized", e);
        }
        sha.update(key.namespace().getBytes(StandardCharsets.UTF_8));
        sha.update((byte) 0);
        sha.update(key.kind().tag().getBytes(StandardCharsets.UTF_8));
        sha.update((byte) 0);
        sha.update(key.name().getBytes(StandardCharsets.UTF_8));
        byte[] digest = sha.digest();
        return new ResourceKeys(
                key.namespace() + ":" + key.kind().tag() + ":{" + HEX.formatHex(digest, 0, DIGEST_BYTES) + "}");
    }

    /** The namespace's marker of the hold-back after a lost state ({@code epoch.lua}). */
    static String epoch(String namespace) {
        return namespace + ":epoch";
    }

    /**
     * The Cluster marker of the hold-back after a lost state: one per namespace and hash slot, in this
     * resource's slot, so that the grant's script can declare it beside the resource's keys.
     */
    String clusterEpoch() {
        String namespace = prefix.substring(0, prefix.indexOf(':'));
        return epoch(namespace) + ":{" + SlotTags.of(SlotHash.getSlot(prefix)) + "}";
    }

    /** The hold-back marker a grant of this resource checks: the namespace's, or in a Cluster its slot's. */
    String epoch(boolean cluster) {
        return cluster ? clusterEpoch() : epoch(prefix.substring(0, prefix.indexOf(':')));
    }

    /** The SCAN pattern matching the holders hash of every resource of a namespace. */
    static String holdersPattern(String namespace) {
        return namespace + ":*:{*}:h";
    }

    /**
     * The prefix and kind of a holders-hash key found by {@link #holdersPattern}, or null when the key does
     * not have the exact shape of one of ours.
     */
    static ResourceKeys fromHoldersKey(String namespace, String key) {
        String start = namespace + ":";
        if (!key.startsWith(start) || !key.endsWith("}:h")) {
            return null;
        }
        String prefix = key.substring(0, key.length() - 2);
        int brace = prefix.indexOf(":{", start.length());
        if (brace < 0 || prefix.length() - brace - 3 != 2 * DIGEST_BYTES) {
            return null;
        }
        ResourceKeys keys = new ResourceKeys(prefix);
        for (LockKind kind : LockKind.values()) {
            if (kind.tag().equals(keys.kindTag())) {
                return keys;
            }
        }
        return null;
    }

    LockKind kind() {
        return LockKind.ofTag(kindTag());
    }

    private String kindTag() {
        int from = prefix.indexOf(':') + 1;
        return prefix.substring(from, prefix.indexOf(":{", from));
    }

    /**
     * The holders hash of {@code dlock.lua}; for the {@code lock} kind the hold string of {@code
     * exclusive.lua} instead (the same name, so that clients of either script see the other's hold).
     */
    String holders() {
        return prefix + ":h";
    }

    String expiries() {
        return prefix + ":x";
    }

    String queue() {
        return prefix + ":q";
    }

    String waits() {
        return prefix + ":e";
    }

    String tokens() {
        return prefix + ":t";
    }

    /** The exclusive lock's waiter marker: present while some client may wait for a release. */
    String waiting() {
        return prefix + ":m";
    }

    String channel() {
        return prefix + ":w";
    }

    /** KEYS of every single-resource operation except acquire. */
    String[] resource() {
        return new String[] {holders(), expiries(), queue(), waits()};
    }

    /** KEYS of acquire: the resource keys and the token counter. */
    String[] withTokens() {
        return new String[] {holders(), expiries(), queue(), waits(), tokens()};
    }

    /** KEYS of the exclusive lock's acquire ({@code exclusive.lua}): hold, token counter, waiter marker. */
    String[] exclusiveAcquire() {
        return new String[] {holders(), tokens(), waiting()};
    }

    /** KEYS of the exclusive lock's release and force-release: hold and waiter marker. */
    String[] exclusiveRelease() {
        return new String[] {holders(), waiting()};
    }
}
