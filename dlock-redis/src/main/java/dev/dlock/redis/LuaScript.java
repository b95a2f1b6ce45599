package dev.dlock.redis;

import dev.dlock.LockKind;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.async.RedisScriptingAsyncCommands;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * A Lua script shipped as a class-path resource, run with EVALSHA and, when the server does not know it
 * yet (first use, after a restart or {@code SCRIPT FLUSH}), once with EVAL, which also caches it.
 *
 * <p>Concurrency: immutable; calls only send commands.
 *
 * <p>Failure modes: a NOSCRIPT reply costs one extra round trip; every other error is passed on.
 */
final class LuaScript {
    /** The general script, every mode but exclusive; see {@code dlock.lua} for its operations. */
    static final LuaScript DLOCK = load("dlock.lua");

    /** The exclusive lock's fast path; see {@code exclusive.lua} for its operations. */
    static final LuaScript EXCLUSIVE = load("exclusive.lua");

    private final String body;
    private final String sha;

    private LuaScript(String body) {
        this.body = body;
        try {
            this.sha = HexFormat.of()
                    .formatHex(MessageDigest.getInstance("SHA-1").digest(body.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-1 is required by every Java platform", e);
        }
    }

    private static LuaScript load(String resource) {
        try (InputStream in = LuaScript.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException("missing class-path resource dev/dlock/redis/" + resource);
            }
            return new LuaScript(new String(in.readAllBytes(), StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read dev/dlock/redis/" + resource, e);
        }
    }

    String body() {
        return body;
    }

    String sha() {
        return sha;
    }

    /** The script that serves a resource kind: {@link #EXCLUSIVE} for {@code lock}, else {@link #DLOCK}. */
    static LuaScript forKind(LockKind kind) {
        return kind == LockKind.LOCK ? EXCLUSIVE : DLOCK;
    }

    /** Runs the script on {@code commands}; routing in a Cluster follows {@code keys[0]}. */
    <T> CompletableFuture<T> run(
            RedisScriptingAsyncCommands<String, String> commands,
            ScriptOutputType type,
            String[] keys,
            String... args) {
        CompletableFuture<T> first = commands.<T>evalsha(sha, type, keys, args).toCompletableFuture();
        return first.exceptionallyCompose(error -> isNoScript(error)
                ? commands.<T>eval(body, type, keys, args).toCompletableFuture()
                : CompletableFuture.failedFuture(error));
    }

    static boolean isNoScript(Throwable error) {
        Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
        return cause instanceof RedisNoScriptException
                || (cause.getMessage() != null && cause.getMessage().startsWith("NOSCRIPT"));
    }
}
