package dev.dlock.jdbc;

import dev.dlock.spi.LockKey;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.Collections;
import java.util.HexFormat;

/**
 * The two lease tables of one prefix as SQL text sees them: their names, the database's clock, how a
 * resource's key is bound, and the derived identifiers (name key, notification channel).
 *
 * <p>Design: SQL is written once as a template with {@code {L}} (the locks table), {@code {E}} (the
 * entries table), {@code {NOW}} (the dialect's clock expression in milliseconds, {@link
 * Dialect#nowMillis}, for leases), {@code {NOW_MICROS}} (the same clock in microseconds, {@link
 * Dialect#nowMicros}), {@code {FLOOR}} (the least token a grant may have now: {@code {NOW_MICROS}}) and
 * {@code {BLOCK}} ({@link #TOKEN_BLOCK}); {@link #sql} fills them in.
 *
 * <p>Tokens: a grant's token is {@link #nextToken}: the last token of the resource plus {@link
 * #TOKEN_BLOCK}, and at least the database's time in microseconds. The block leaves room for the holders
 * the engine passes a hold to within one client (cohort hand-off, {@code LockBackend.tokenBlock()}); the
 * time floor keeps tokens increasing where the row that keeps the last token is lost (deleted by hand, a
 * table truncated or restored): a grant after the loss reads the clock later than the lost row's last
 * grant did, at least a commit and a deletion later, so in a later microsecond. That holds as long as the
 * database's clock does not step back, grants of one resource stay below one per 16 microseconds on
 * average (each token then is its grant's time), and the deletion does not race a grant of the same
 * resource: the one-statement grants compute a new row's values, {@code {FLOOR}} included, before they
 * look for the row, so a grant already under way when the row is deleted can take a floor from before the
 * lost row's last grant. Where each dialect reads its clock, and why, is in {@link Dialect}.
 *
 * <p>Only these constants and validated names ever reach the SQL text; names, owners and times are bind
 * parameters. A resource is always bound as three parameters in the same order
 * (namespace, kind, name key: the primary key with which both tables start), by {@link #bindKey}.
 *
 * <p>Concurrency: immutable.
 */
final class Tables {
    /** Tokens each grant reserves: the engine may pass a hold up to this many times minus one. */
    static final long TOKEN_BLOCK = 16;

    private final Dialect dialect;
    private final String prefix;
    private final String locks;
    private final String entries;

    Tables(Dialect dialect, String prefix) {
        this.dialect = dialect;
        this.prefix = prefix;
        this.locks = prefix + "locks";
        this.entries = prefix + "entries";
    }

    Dialect dialect() {
        return dialect;
    }

    String prefix() {
        return prefix;
    }

    /** Fills in table names and the clock expression. Only constants reach the SQL text. */
    String sql(String template) {
        return template.replace("{L}", locks)
                .replace("{E}", entries)
                .replace("{FLOOR}", "(" + dialect.nowMicros() + ")")
                .replace("{NOW_MICROS}", dialect.nowMicros())
                .replace("{BLOCK}", Long.toString(TOKEN_BLOCK))
                .replace("{NOW}", dialect.nowMillis());
    }

    /**
     * The token of a grant, given the resource's last token and the database's now in microseconds
     * ({@code {NOW_MICROS}}); the same rule as {@code GREATEST(token + {BLOCK}, {FLOOR})} in the
     * one-statement grants.
     */
    static long nextToken(long lastToken, long nowMicros) {
        return Math.max(lastToken + TOKEN_BLOCK, nowMicros);
    }

    /** Binds namespace, kind and name key of a resource from parameter {@code from} on. */
    static void bindKey(PreparedStatement ps, int from, LockKey key) throws SQLException {
        ps.setString(from, key.namespace());
        ps.setString(from + 1, key.kind().tag());
        ps.setString(from + 2, nameKey(key.name()));
    }

    /** {@code n} bind markers separated by commas, for an IN list. */
    static String placeholders(int n) {
        return String.join(", ", Collections.nCopies(n, "?"));
    }

    /** The stored key of a name: hex SHA-256 of its UTF-8 bytes, 64 characters. */
    static String nameKey(String name) {
        return HexFormat.of().formatHex(sha256(name));
    }

    static byte[] sha256(String text) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JVM has no SHA-256", e);
        }
    }

    /** The LISTEN/NOTIFY channel of a resource (all modes of its kind), a safe identifier. */
    String channel(LockKey key) {
        String id = prefix + '\n' + key.namespace() + '\n' + key.kind().tag() + '\n' + key.name();
        return "dlock_" + HexFormat.of().formatHex(sha256(id)).substring(0, 40);
    }
}
