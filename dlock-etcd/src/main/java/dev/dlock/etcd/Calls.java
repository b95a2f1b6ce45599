package dev.dlock.etcd;

import dev.dlock.LockBackendException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Bounds every jetcd call by the operation timeout (a jetcd future may never complete while the cluster
 * has no leader or the connection hangs) and turns failures into {@link LockBackendException}s.
 */
final class Calls {
    private final long timeoutMillis;

    Calls(Duration operationTimeout) {
        this.timeoutMillis = Math.max(1, operationTimeout.toMillis());
    }

    /** The call's answer, or a {@link LockBackendException} once the operation timeout passes. */
    <T> CompletableFuture<T> bounded(CompletableFuture<T> call) {
        return call.orTimeout(timeoutMillis, TimeUnit.MILLISECONDS).exceptionally(error -> {
            throw asCompletion(error);
        });
    }

    long timeoutMillis() {
        return timeoutMillis;
    }

    /** An error as a completion exception around a {@link LockBackendException}. */
    static CompletionException asCompletion(Throwable error) {
        Throwable cause = unwrap(error);
        if (cause instanceof LockBackendException e) {
            return new CompletionException(e);
        }
        String what = cause instanceof TimeoutException
                ? "etcd did not answer within the operation timeout"
                : "etcd request failed: " + cause;
        return new CompletionException(new LockBackendException(what, cause));
    }

    static Throwable unwrap(Throwable error) {
        Throwable cause = error;
        while ((cause instanceof CompletionException || cause instanceof java.util.concurrent.ExecutionException)
                && cause.getCause() != null) {
            cause = cause.getCause();
        }
        return cause;
    }

    /** Whether the server said that the lease does not exist (any more). */
    static boolean leaseNotFound(Throwable error) {
        for (Throwable t = error; t != null; t = t.getCause()) {
            String message = t.getMessage();
            if (message != null && message.contains("requested lease not found")) {
                return true;
            }
            if (t.getCause() == t) {
                break;
            }
        }
        return false;
    }
}
