package dev.dlock.spring;

import dev.dlock.LockBackendException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Turns a start that failed because the lock store did not answer into Spring Boot's "APPLICATION FAILED
 * TO START" report, with the message naming the store and what to do about it.
 */
final class DlockFailureAnalyzer extends AbstractFailureAnalyzer<LockBackendException> {
    DlockFailureAnalyzer() {}

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, LockBackendException cause) {
        String message = String.valueOf(cause.getMessage());
        // Only the JDBC backend's own report of a missing table (made when create-tables is off): a store's
        // description also says "tables", and a store that is down needs no advice about them.
        String tables = message.contains("is missing or unreadable")
                ? " If dlock's tables are missing, create them with the DDL shipped in dlock-jdbc, or let dlock"
                        + " create them: dlock.jdbc.create-tables=true (or dlock.createTables=true in a jdbc: URI)."
                : "";
        return new FailureAnalysis(
                message,
                "Make sure the lock store is running and reachable from this host, and that dlock.uri (or the"
                        + " store client bean dlock uses) points to it." + tables
                        + " To start without checking the store, set dlock.startup-check=false.",
                cause);
    }
}
