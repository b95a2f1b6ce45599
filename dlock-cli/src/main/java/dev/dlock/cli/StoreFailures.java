package dev.dlock.cli;

import dev.dlock.LockBackendException;
import java.sql.SQLException;
import java.util.HashSet;
import java.util.Set;

/**
 * Tells a store that refused the credentials apart from one that could not be reached, for the message of a
 * failed command. A backend wraps the store client's exception in {@link LockBackendException}, and the
 * client's own wrapper ("Unable to connect") hides the reason; the reason is further down the causes.
 *
 * <p>Recognised: Redis's error replies {@code WRONGPASS} and {@code NOAUTH}, and SQL state class {@code 28}
 * (invalid authorization) of any JDBC driver. Their messages name the user at most, never the password.
 */
final class StoreFailures {
    private StoreFailures() {}

    /**
     * The store's own words when it refused the credentials.
     *
     * @param failure what the backend threw
     * @return the refusal as the store put it, or null when the failure is something else
     */
    static String credentialsRefused(LockBackendException failure) {
        Set<Throwable> seen = new HashSet<>();
        for (Throwable cause = failure; cause != null && seen.add(cause); cause = cause.getCause()) {
            String message = cause.getMessage();
            if (message != null && (message.startsWith("WRONGPASS") || message.startsWith("NOAUTH"))) {
                return message;
            }
            if (cause instanceof SQLException sql
                    && sql.getSQLState() != null
                    && sql.getSQLState().startsWith("28")) {
                return message;
            }
        }
        return null;
    }
}
