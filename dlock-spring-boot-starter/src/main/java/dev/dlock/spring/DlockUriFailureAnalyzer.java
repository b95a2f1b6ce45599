package dev.dlock.spring;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Turns a {@code dlock.uri} that no backend accepts (unknown scheme, malformed URI) into Spring Boot's
 * "APPLICATION FAILED TO START" report naming the property, its value with passwords masked, and the
 * URIs that would work. Spring Boot's own analyzer for invalid property values is not used, as it quotes the
 * value from the environment as it is, password included.
 */
final class DlockUriFailureAnalyzer extends AbstractFailureAnalyzer<DlockUriFailureAnalyzer.InvalidUriException> {
    DlockUriFailureAnalyzer() {}

    /** A {@code dlock.uri} the backends refused; its message holds no secret. */
    static final class InvalidUriException extends IllegalArgumentException {
        private static final long serialVersionUID = 1L;
        private final String maskedUri;
        private final String reason;

        InvalidUriException(String maskedUri, String reason) {
            super("dlock.uri '" + maskedUri + "' is invalid: " + reason);
            this.maskedUri = maskedUri;
            this.reason = reason;
        }
    }

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, InvalidUriException cause) {
        return new FailureAnalysis(
                "Invalid value '" + cause.maskedUri + "' for configuration property 'dlock.uri': " + cause.reason,
                "Set dlock.uri to the URI of a lock store whose dlock module is on the class path, for example"
                        + " redis://localhost:6379 (dlock-redis), zookeeper://localhost:2181 (dlock-zookeeper),"
                        + " jdbc:postgresql://localhost:5432/app (dlock-jdbc), or mem: for one JVM; or remove"
                        + " dlock.uri to use the application's own Redis, DataSource or Curator client.",
                cause);
    }
}
