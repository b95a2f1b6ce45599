package dev.dlock.redis;

import dev.dlock.LockKind;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
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
 * A Lua script shipped as a class-path resource, run as a function of dlock's library ({@code FCALL})
 * where the server keeps it ({@link FunctionLibrary}), else with EVALSHA and, when the server does not
 * know it yet (first use, after a restart or {@code SCRIPT FLUSH}), once with EVAL, which also caches it.
 *
 * <p>Design: each script is {@code epoch.lua} and {@code tokens.lua} (shared rules) followed by its own
 * file; the library ({@link #LIBRARY_TEXT}) is the shared rules once, then each script's own file as the
 * body of a function taking {@code KEYS} and {@code ARGV}, so both forms run the same text. The library's
 * name and its functions' names carry a hash of the text, so clients of different versions never run
 * each other's code. The choice between the forms and the EVALSHA, NOSCRIPT, EVAL fallback are written
 * once ({@link #call}); a plain call ({@link #run}) and a call with a command pipelined right behind it
 * on the same connection ({@link #runFollowedBy}, the replica-acknowledgement path's {@code WAIT}) both go
 * through it.
 *
 * <p>Concurrency: immutable; calls only send commands.
 *
 * <p>Failure modes: a NOSCRIPT reply, or a function call refused (library missing on that node, functions
 * refused, out of memory: nothing ran), costs one extra round trip (both commands again, for a followed
 * call); every other error is passed on.
 */
final class LuaScript {
    /** The hold-back after a lost state, put in front of both scripts; see {@code epoch.lua}. */
    private static final String EPOCH = read("epoch.lua");

    /** The fencing-token rules, put in front of both scripts; see {@code tokens.lua}. */
    private static final String TOKENS = read("tokens.lua");

    private static final String DLOCK_OWN = read("dlock.lua");
    private static final String EXCLUSIVE_OWN = read("exclusive.lua");

    /** A hash of everything the library holds, part of its name and of its functions' names. */
    private static final String VERSION =
            sha1(EPOCH + TOKENS + DLOCK_OWN + EXCLUSIVE_OWN).substring(0, 12);

    /** The general script, every mode but exclusive; see {@code dlock.lua} for its operations. */
    static final LuaScript DLOCK = new LuaScript(EPOCH + TOKENS + DLOCK_OWN, "dlock_" + VERSION + "_general");

    /** The exclusive lock's fast path; see {@code exclusive.lua} for its operations. */
    static final LuaScript EXCLUSIVE = new LuaScript(EPOCH + TOKENS + EXCLUSIVE_OWN, "dlock_" + VERSION + "_exclusive");

    /** Both scripts as one function library ({@code FUNCTION LOAD}). */
    static final String LIBRARY_TEXT = "#!lua name=dlock_" + VERSION + "\n" + EPOCH + TOKENS
            + function(EXCLUSIVE.function, EXCLUSIVE_OWN) + function(DLOCK.function, DLOCK_OWN);

    private final String body;
    private final String sha;
    private final String function;

    private LuaScript(String body, String function) {
        this.body = body;
        this.sha = sha1(body);
        this.function = function;
    }

    /**
     * A script's own file as a function of the library. Flag {@code allow-cross-slot-keys}: a renewal batch
     * (and a multi-lock's group) reaches the keys of every slot its node serves, as {@code EVAL} scripts
     * may; without it a Cluster refuses the batch and it is sent again per slot.
     */
    private static String function(String name, String own) {
        return "\nredis.register_function{function_name='" + name + "', flags={'allow-cross-slot-keys'},"
                + " callback=function(KEYS, ARGV)\n" + own + "\nend}\n";
    }

    private static String sha1(String text) {
        try {
            return HexFormat.of()
                    .formatHex(MessageDigest.getInstance("SHA-1").digest(text.getBytes(StandardCharsets.UTF_8)));
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

    /**
     * Runs the script on {@code commands}, as a function of the library when {@code library} says the
     * server keeps it; routing in a Cluster follows {@code keys[0]}.
     */
    <T> CompletableFuture<T> run(
            RedisClusterAsyncCommands<String, String> commands,
            FunctionLibrary library,
            ScriptOutputType type,
            String[] keys,
            String... args) {
        return call(library, form -> send(commands, form, type, keys, args));
    }

    /**
     * Runs the script on {@code commands} with the command {@code next} sends pipelined right behind it on
     * the same connection (so it runs after the script's writes); after a refused first form both are
     * sent again, the script in the next form.
     */
    <T, N> CompletableFuture<Followed<T, N>> runFollowedBy(
            RedisClusterAsyncCommands<String, String> commands,
            FunctionLibrary library,
            ScriptOutputType type,
            String[] keys,
            String[] args,
            Supplier<? extends CompletionStage<N>> next) {
        return call(library, form -> {
            CompletableFuture<T> script = send(commands, form, type, keys, args);
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

    /** How a call is sent. */
    private enum Form {
        FCALL,
        EVALSHA,
        EVAL
    }

    private <T> CompletableFuture<T> send(
            RedisClusterAsyncCommands<String, String> commands,
            Form form,
            ScriptOutputType type,
            String[] keys,
            String[] args) {
        return (switch (form) {
                    case FCALL -> commands.<T>fcall(function, type, keys, args);
                    case EVALSHA -> commands.<T>evalsha(sha, type, keys, args);
                    case EVAL -> commands.<T>eval(body, type, keys, args);
                })
                .toCompletableFuture();
    }

    /**
     * The one choice of form: {@code FCALL} when the library is usable, and after a refusal (nothing ran)
     * EVALSHA; EVALSHA, and after NOSCRIPT, EVAL.
     */
    private static <R> CompletableFuture<R> call(
            FunctionLibrary library, Function<Form, CompletableFuture<R>> attempt) {
        if (!library.usable()) {
            return scripted(attempt);
        }
        return attempt.apply(Form.FCALL).exceptionallyCompose(error -> {
            if (FunctionLibrary.isMissing(error)) {
                library.missing();
            } else if (FunctionLibrary.isRefusal(error)) {
                library.refused();
            } else if (!FunctionLibrary.isOutOfMemory(error)) {
                return CompletableFuture.failedFuture(error);
            }
            return scripted(attempt);
        });
    }

    private static <R> CompletableFuture<R> scripted(Function<Form, CompletableFuture<R>> attempt) {
        return attempt.apply(Form.EVALSHA)
                .exceptionallyCompose(
                        error -> isNoScript(error) ? attempt.apply(Form.EVAL) : CompletableFuture.failedFuture(error));
    }

    private static boolean isNoScript(Throwable error) {
        Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
        return cause instanceof RedisNoScriptException
                || (cause.getMessage() != null && cause.getMessage().startsWith("NOSCRIPT"));
    }
}
