package dev.dlock.redis;

import io.lettuce.core.RedisURI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Parses the URIs this backend accepts (see {@link RedisBackendProvider} for the syntax) into Lettuce
 * {@link RedisURI}s and this backend's own options.
 *
 * <p>Standalone and Sentinel URIs are handed to Lettuce's parser after this backend's query parameters
 * are taken out; a Cluster URI is split into one seed URI per host. Error messages never repeat the
 * password.
 *
 * <p>Concurrency: stateless.
 *
 * <p>Failure modes: a URI it cannot use throws {@link IllegalArgumentException} naming the problem, before
 * anything connects; Lettuce's own exception is not chained, as its message may quote the password.
 */
final class RedisUris {
    static final Set<String> SCHEMES = Set.of(
            "redis",
            "rediss",
            "redis-sentinel",
            "rediss-sentinel",
            "redis-cluster",
            "rediss-cluster",
            "redlock",
            "redlocks",
            "valkey",
            "valkeys",
            "valkey-sentinel",
            "valkeys-sentinel",
            "valkey-cluster",
            "valkeys-cluster");

    /**
     * Replicas that must acknowledge each grant and renewal on a Sentinel URI without {@code waitReplicas}:
     * one, so that a deposed master cannot keep a holder believing past a failover (docs/safety.md).
     */
    static final int DEFAULT_SENTINEL_REPLICA_ACKS = 1;

    /** Valkey speaks Redis's protocol and runs its scripts: {@code valkey...://} is read as {@code redis...://}. */
    private static final String VALKEY = "valkey";

    private RedisUris() {}

    enum Topology {
        STANDALONE,
        SENTINEL,
        CLUSTER,
        REDLOCK
    }

    /**
     * A parsed URI.
     *
     * @param topology how the servers are arranged
     * @param servers the standalone/Sentinel URI (one element), the Cluster seeds or the Redlock masters
     * @param replicaAcks the {@code waitReplicas} option, 0 when off; 1 for a Sentinel URI without it
     * @param replicaAckTimeout the {@code waitTimeout} option, null when off or for the default (half the
     *     operation timeout, {@link ReplicaAcks#effectiveTimeout}: a Sentinel URI without it)
     * @param allowEviction the {@code allowEviction} option
     * @param minUptime Redlock's {@code minUptime} option, null when off
     * @param masterTimeout Redlock's {@code masterTimeout} option, null for the default
     * @param maxLease the {@code maxLease} option, null for the default
     * @param unsafeGrantAfterRestart the {@code unsafeGrantAfterRestart} option
     */
    record Parsed(
            Topology topology,
            List<RedisURI> servers,
            int replicaAcks,
            Duration replicaAckTimeout,
            boolean allowEviction,
            Duration minUptime,
            Duration masterTimeout,
            Duration maxLease,
            boolean unsafeGrantAfterRestart) {}

    static String scheme(String uri) {
        int end = uri == null ? -1 : uri.indexOf("://");
        return end <= 0 ? null : uri.substring(0, end).toLowerCase(Locale.ROOT);
    }

    static Parsed parse(String uri) {
        String scheme = scheme(uri);
        if (scheme == null || !SCHEMES.contains(scheme)) {
            throw new IllegalArgumentException("not a Redis URI: '" + redact(uri) + "'; expected one of the schemes "
                    + SCHEMES.stream().sorted().toList());
        }
        if (scheme.startsWith(VALKEY)) {
            String redisScheme = "redis" + scheme.substring(VALKEY.length());
            uri = redisScheme + uri.substring(scheme.length());
            scheme = redisScheme;
        }
        String rest = uri.substring(scheme.length() + 3);
        String fragment = "";
        int hash = rest.indexOf('#');
        if (hash >= 0) {
            fragment = rest.substring(hash);
            rest = rest.substring(0, hash);
        }
        String query = "";
        int question = rest.indexOf('?');
        if (question >= 0) {
            query = rest.substring(question + 1);
            rest = rest.substring(0, question);
        }
        Integer replicaAcks = null;
        Duration replicaAckTimeout = null;
        boolean allowEviction = false;
        Duration minUptime = null;
        Duration masterTimeout = null;
        Duration maxLease = null;
        boolean unsafeGrantAfterRestart = false;
        boolean redlock = scheme.startsWith("redlock");
        List<String> passed = new ArrayList<>();
        for (String param : query.split("&")) {
            if (param.isEmpty()) {
                continue;
            }
            int eq = param.indexOf('=');
            String name = eq < 0 ? param : param.substring(0, eq);
            String value = eq < 0 ? "" : param.substring(eq + 1);
            switch (name) {
                case "waitReplicas" -> replicaAcks = replicaCount(uri, value);
                case "waitTimeout" -> replicaAckTimeout = duration(uri, name, value);
                case "allowEviction" -> allowEviction = bool(uri, name, value);
                case "minUptime" -> minUptime = redlockOnly(redlock, uri, name, duration(uri, name, value));
                case "masterTimeout" -> masterTimeout = redlockOnly(redlock, uri, name, duration(uri, name, value));
                case "maxLease" -> maxLease = duration(uri, name, value);
                case "unsafeGrantAfterRestart" -> unsafeGrantAfterRestart = bool(uri, name, value);
                default -> passed.add(param);
            }
        }
        boolean sentinel = scheme.endsWith("-sentinel");
        if (replicaAcks != null && replicaAcks == 0 && replicaAckTimeout != null) {
            throw new IllegalArgumentException("Redis URI '" + redact(uri)
                    + "': waitTimeout has no effect with waitReplicas=0 (replica acknowledgements off)");
        }
        if (sentinel) {
            // Told first across a failover needs acknowledgements: on unless waitReplicas=0 (docs/safety.md).
            replicaAcks = replicaAcks == null ? DEFAULT_SENTINEL_REPLICA_ACKS : replicaAcks;
        } else if ((replicaAcks != null && replicaAcks > 0) != (replicaAckTimeout != null)) {
            throw new IllegalArgumentException(
                    "Redis URI '" + redact(uri) + "': waitReplicas and waitTimeout must be given together");
        }
        int acks = replicaAcks == null ? 0 : replicaAcks;
        String lettuceQuery = passed.isEmpty() ? "" : "?" + String.join("&", passed);
        boolean tls = scheme.startsWith("rediss") || scheme.equals("redlocks");
        if (redlock) {
            if (acks > 0) {
                throw new IllegalArgumentException("Redlock URI '" + redact(uri)
                        + "': waitReplicas does not apply to Redlock, whose masters are independent servers");
            }
            if (!fragment.isEmpty()) {
                throw new IllegalArgumentException("Redlock URI '" + redact(uri) + "' must not have a #fragment");
            }
            List<RedisURI> masters = redlockMasters(uri, rest, tls, lettuceQuery);
            return new Parsed(
                    Topology.REDLOCK,
                    masters,
                    0,
                    null,
                    allowEviction,
                    minUptime,
                    masterTimeout,
                    maxLease,
                    unsafeGrantAfterRestart);
        }
        if (scheme.endsWith("-cluster")) {
            if (acks > 0) {
                throw new IllegalArgumentException("Redis URI '" + redact(uri)
                        + "': waitReplicas is supported for standalone and Sentinel servers, not for Cluster");
            }
            if (!fragment.isEmpty()) {
                throw new IllegalArgumentException("Redis Cluster URI '" + redact(uri) + "' must not have a #fragment");
            }
            return new Parsed(
                    Topology.CLUSTER,
                    clusterSeeds(uri, rest, tls, lettuceQuery),
                    0,
                    null,
                    allowEviction,
                    null,
                    null,
                    maxLease,
                    unsafeGrantAfterRestart);
        }
        if (sentinel && fragment.length() <= 1) {
            throw new IllegalArgumentException("Redis Sentinel URI '" + redact(uri)
                    + "' needs the master name as its fragment, e.g. redis-sentinel://host:26379#mymaster");
        }
        String lettuceUri = scheme + "://" + rest + lettuceQuery + fragment;
        RedisURI parsed;
        try {
            parsed = RedisURI.create(lettuceUri);
        } catch (RuntimeException e) {
            // Lettuce's exception is not chained: its message may quote the URI with the password.
            throw new IllegalArgumentException("invalid Redis URI '" + redact(uri) + "': " + e.getMessage());
        }
        if (!sentinel && (parsed.getHost() == null || parsed.getHost().isEmpty())) {
            throw new IllegalArgumentException("Redis URI '" + redact(uri) + "' has no host");
        }
        return new Parsed(
                sentinel ? Topology.SENTINEL : Topology.STANDALONE,
                List.of(parsed),
                acks,
                replicaAckTimeout,
                allowEviction,
                null,
                null,
                maxLease,
                unsafeGrantAfterRestart);
    }

    /** One URI per master: the shared user info, database and query applied to each host. */
    private static List<RedisURI> redlockMasters(String uri, String rest, boolean tls, String query) {
        int slash = rest.indexOf('/');
        String authority = slash < 0 ? rest : rest.substring(0, slash);
        String path = slash < 0 ? "" : rest.substring(slash);
        int at = authority.lastIndexOf('@');
        String userInfo = at < 0 ? "" : authority.substring(0, at + 1);
        List<RedisURI> masters = new ArrayList<>();
        for (String host : authority.substring(at + 1).split(",", -1)) {
            if (host.isBlank()) {
                throw new IllegalArgumentException("Redlock URI '" + redact(uri) + "' has an empty host");
            }
            try {
                masters.add(RedisURI.create((tls ? "rediss://" : "redis://") + userInfo + host.strip() + path + query));
            } catch (RuntimeException e) {
                throw new IllegalArgumentException(
                        "invalid Redlock URI '" + redact(uri) + "' at host '" + host + "': " + e.getMessage());
            }
        }
        RedlockBackendFactory.checkMasterCount(masters.size());
        return masters;
    }

    private static <T> T redlockOnly(boolean redlock, String uri, String name, T value) {
        if (!redlock) {
            throw new IllegalArgumentException(
                    "Redis URI '" + redact(uri) + "': " + name + " applies only to redlock:// and redlocks:// URIs");
        }
        return value;
    }

    private static boolean bool(String uri, String name, String value) {
        if (value.equalsIgnoreCase("true") || value.isEmpty()) {
            return true;
        }
        if (value.equalsIgnoreCase("false")) {
            return false;
        }
        throw new IllegalArgumentException(
                "Redis URI '" + redact(uri) + "': " + name + " must be true or false, got '" + value + "'");
    }

    private static List<RedisURI> clusterSeeds(String uri, String rest, boolean tls, String query) {
        int slash = rest.indexOf('/');
        String authority = slash < 0 ? rest : rest.substring(0, slash);
        String path = slash < 0 ? "" : rest.substring(slash);
        if (!path.isEmpty() && !path.equals("/") && !path.equals("/0")) {
            throw new IllegalArgumentException("Redis Cluster URI '" + redact(uri)
                    + "' must not select a database (a Cluster only has database 0)");
        }
        int at = authority.lastIndexOf('@');
        String userInfo = at < 0 ? "" : authority.substring(0, at + 1);
        String hosts = authority.substring(at + 1);
        List<RedisURI> seeds = new ArrayList<>();
        for (String host : hosts.split(",")) {
            if (host.isBlank()) {
                throw new IllegalArgumentException("Redis Cluster URI '" + redact(uri) + "' has an empty host");
            }
            try {
                seeds.add(RedisURI.create((tls ? "rediss://" : "redis://") + userInfo + host.strip() + query));
            } catch (RuntimeException e) {
                throw new IllegalArgumentException(
                        "invalid Redis Cluster URI '" + redact(uri) + "' at host '" + host + "': " + e.getMessage());
            }
        }
        return seeds;
    }

    /** {@code waitReplicas}: 0 (off) or a positive count. */
    private static int replicaCount(String uri, String value) {
        try {
            int parsed = Integer.parseInt(value);
            if (parsed >= 0) {
                return parsed;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException("Redis URI '" + redact(uri)
                + "': waitReplicas must be 0 (replica acknowledgements off) or a positive integer, got '" + value
                + "'");
    }

    private static Duration duration(String uri, String name, String value) {
        String lower = value.toLowerCase(Locale.ROOT);
        try {
            Duration parsed;
            if (lower.endsWith("ms")) {
                parsed = Duration.ofMillis(Long.parseLong(lower.substring(0, lower.length() - 2)));
            } else if (lower.endsWith("s")) {
                parsed = Duration.ofSeconds(Long.parseLong(lower.substring(0, lower.length() - 1)));
            } else {
                parsed = Duration.ofMillis(Long.parseLong(lower));
            }
            if (!parsed.isNegative() && !parsed.isZero()) {
                return parsed;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException("Redis URI '" + redact(uri) + "': " + name
                + " must be a positive duration such as 50ms or 1s, got '" + value + "'");
    }

    /** The URI with any password replaced by {@code ***}. */
    static String redact(String uri) {
        if (uri == null) {
            return "null";
        }
        int start = uri.indexOf("://");
        int at = uri.lastIndexOf('@');
        if (start < 0 || at < start) {
            return uri;
        }
        String userInfo = uri.substring(start + 3, at);
        int colon = userInfo.indexOf(':');
        String user = colon < 0 ? "" : userInfo.substring(0, colon);
        return uri.substring(0, start + 3) + (user.isEmpty() ? "" : user + ":") + "***" + uri.substring(at);
    }
}
