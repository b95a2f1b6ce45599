package dev.dlock.jdbc;

import static dev.dlock.jdbc.Tables.bindKey;

import dev.dlock.LockInfo;
import dev.dlock.LockKind;
import dev.dlock.spi.LockKey;
import dev.dlock.spi.Mode;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The operators' view of the lease tables: {@code describe} one resource, {@code list} the held ones of a
 * namespace. Read-only, portable SQL; only live holds and queue entries (not expired by the database's
 * clock) are reported, with their time left.
 *
 * <p>Design: exclusive holds are read from the locks table (inline holder), every other kind from the
 * entries table in id order (queue order); {@code list} reads both and joins entries to their resource
 * row for the name. Name prefixes are filtered in Java (names are bind parameters, never patterns, so
 * {@code %} and {@code _} in names need no escaping).
 *
 * <p>Concurrency: stateless; no locks taken. Failure modes: {@link SQLException} as the driver reports it.
 */
final class Inspection {
    private static final String DESCRIBE_INLINE = "SELECT owner, token, expires_at - {NOW} FROM {L}"
            + " WHERE ns = ? AND kind = ? AND name_key = ? AND owner IS NOT NULL AND expires_at > {NOW}";
    private static final String DESCRIBE_ROWS = "SELECT owner, mode, held, token, expires_at - {NOW} FROM {E}"
            + " WHERE ns = ? AND kind = ? AND name_key = ? AND expires_at > {NOW} ORDER BY id";
    private static final String LIST_INLINE = "SELECT kind, name, owner, token, expires_at - {NOW} FROM {L}"
            + " WHERE ns = ? AND owner IS NOT NULL AND expires_at > {NOW}";
    private static final String LIST_ROWS = "SELECT l.kind, l.name, e.owner, e.mode, e.held, e.token,"
            + " e.expires_at - {NOW} FROM {E} e JOIN {L} l"
            + " ON l.ns = e.ns AND l.kind = e.kind AND l.name_key = e.name_key"
            + " WHERE e.ns = ? AND e.expires_at > {NOW} ORDER BY e.id";

    private final Tables tables;

    Inspection(Tables tables) {
        this.tables = tables;
    }

    LockInfo describe(Connection c, LockKey key) throws SQLException {
        List<LockInfo.Holder> holders = new ArrayList<>();
        int waiters = 0;
        boolean inline = key.mode() == Mode.EXCLUSIVE;
        try (PreparedStatement ps = c.prepareStatement(tables.sql(inline ? DESCRIBE_INLINE : DESCRIBE_ROWS))) {
            bindKey(ps, 1, key);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    if (inline) {
                        holders.add(holder(rs.getString(1), rs.getLong(2), "exclusive", rs.getLong(3)));
                    } else if (rs.getInt(3) == 1) {
                        holders.add(holder(rs.getString(1), rs.getLong(4), rs.getString(2), rs.getLong(5)));
                    } else {
                        waiters++;
                    }
                }
            }
        }
        return new LockInfo(key.name(), key.kind(), holders, waiters);
    }

    private static LockInfo.Holder holder(String owner, long token, String mode, long remainingMillis) {
        return new LockInfo.Holder(owner, token, mode, Duration.ofMillis(remainingMillis));
    }

    List<LockInfo> list(Connection c, String namespace, String prefix) throws SQLException {
        record Resource(LockKind kind, String name) {}
        Map<Resource, List<LockInfo.Holder>> holders = new LinkedHashMap<>();
        Map<Resource, Integer> waiters = new LinkedHashMap<>();
        try (PreparedStatement ps = c.prepareStatement(tables.sql(LIST_INLINE))) {
            ps.setString(1, namespace);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    if (rs.getString(2).startsWith(prefix)) {
                        holders.computeIfAbsent(
                                        new Resource(LockKind.ofTag(rs.getString(1)), rs.getString(2)),
                                        k -> new ArrayList<>())
                                .add(holder(rs.getString(3), rs.getLong(4), "exclusive", rs.getLong(5)));
                    }
                }
            }
        }
        try (PreparedStatement ps = c.prepareStatement(tables.sql(LIST_ROWS))) {
            ps.setString(1, namespace);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    if (!rs.getString(2).startsWith(prefix)) {
                        continue;
                    }
                    Resource r = new Resource(LockKind.ofTag(rs.getString(1)), rs.getString(2));
                    if (rs.getInt(5) == 1) {
                        holders.computeIfAbsent(r, k -> new ArrayList<>())
                                .add(holder(rs.getString(3), rs.getLong(6), rs.getString(4), rs.getLong(7)));
                    } else {
                        waiters.merge(r, 1, Integer::sum);
                    }
                }
            }
        }
        List<LockInfo> result = new ArrayList<>();
        holders.forEach((r, h) -> result.add(new LockInfo(r.name(), r.kind(), h, waiters.getOrDefault(r, 0))));
        return result;
    }
}
