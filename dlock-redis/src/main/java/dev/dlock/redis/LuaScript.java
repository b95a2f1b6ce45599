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
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * A Lua script shipped as a class-path resource, run with EVALSHA and, when the server does not know it
 * yet (first use, after a restart or {@code SCRIPT FLUSH}), once with EVAL, which also caches it.
 *
 * <p>Design: the EVALSHA, NOSCRIPT, EVAL fallback is written once ({@link #fallingBack}); a plain call
 * ({@link #run}) and a call with a command pipelined right behind it on the same connection ({@link
 * #runFollowedBy}, the replica-acknowledgement path's {@code WAIT}) both go through it. Each script is
 * {@code epoch.lua} and {@code tokens.lua} (shared rules) followed by its own file.
 *
 * <p>Concurrency: immutable; calls only send commands.
 *
 * <p>Failure modes: a NOSCRIPT reply costs one extra round trip (both commands again, for a followed
 * call); every other error is passed on.
 */
final class LuaScript {
    /** The hold-back after a lost state, put in front of both scripts; see {@code epoch.lua}. */
    private static final String EPOCH = read("epoch.lua");

    /** The fencing-token rules, put in front of both scripts; see {@code tokens.lua}. */
    private static final String TOKENS = read("tokens.lua");

    /** The general script, every mode but exclusive; see {@code dlock.lua} for its operations. */
    static final LuaScript DLOCK = new LuaScript(EPOCH + TOKENS + read("dlock.lua"));

    /** The exclusive lock's fast path; see {@code exclusive.lua} for its operations. */
    static final LuaScript EXCLUSIVE = new LuaScript(EPOCH + TOKENS + read("exclusive.lua"));

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

    private static String read(String resource) {
        try (InputStream in = LuaScript.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException("missing class-path resource dev/dlock/redis/" + resource);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read dev/dlock/redis/" + resource, e);
        }
    }

    String body() {
        return body;
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
        return fallingBack(cached -> send(commands, cached, type, keys, args));
    }

    /**
     * Runs the script on {@code commands} with the command {@code next} sends pipelined right behind it on
     * the same connection (so it runs after the script's writes); after a NOSCRIPT reply both are sent
     * again, the script with EVAL.
     */
    <T, N> CompletableFuture<Followed<T, N>> runFollowedBy(
            RedisScriptingAsyncCommands<String, String> commands,
            ScriptOutputType type,
            String[] keys,
            String[] args,
            Supplier<? extends CompletionStage<N>> next) {
        return fallingBack(cached -> {
            CompletableFuture<T> script = send(commands, cached, type, keys, args);
            CompletableFuture<N> after = next.get().toCompletableFuture();
            return script.thenCombine(after, Followed::new);
        });
    }

    /**
     * A script's reply and the reply of the command pipelined behind it.
     *
     * @param value the script's reply
     * @param next the following command's reply
     */
    record Followed<T, N>(T value, N next) {}

    private <T> CompletableFuture<T> send(
            RedisScriptingAsyncCommands<String, String> commands,
            boolean cached,
            ScriptOutputType type,
            String[] keys,
            String[] args) {
        return (cached ? commands.<T>evalsha(sha, type, keys, args) : commands.<T>eval(body, type, keys, args))
                .toCompletableFuture();
    }

    /** The one fallback: {@code attempt(true)} (EVALSHA), and after NOSCRIPT {@code attempt(false)} (EVAL). */
    private static <R> CompletableFuture<R> fallingBack(Function<Boolean, CompletableFuture<R>> attempt) {
        return attempt.apply(true)
                .exceptionallyCompose(
                        error -> isNoScript(error) ? attempt.apply(false) : CompletableFuture.failedFuture(error));
    }

    private static boolean isNoScript(Throwable error) {
        Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
        return cause instanceof RedisNoScriptException
                || (cause.getMessage() != null && cause.getMessage().startsWith("NOSCRIPT"));
    }
}
