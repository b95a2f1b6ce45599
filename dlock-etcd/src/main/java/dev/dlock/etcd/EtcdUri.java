package dev.dlock.etcd;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * A parsed {@code etcd://host:port[,host:port...][/prefix][?user=..&password=..]} URI ({@code etcds://}
 * for TLS with the JDK's trust store).
 *
 * <p>The port defaults to 2379. The prefix (path segments, no empty, {@code .} or {@code ..} segment) is
 * put before every key dlock writes, so that several applications can share one etcd. {@code user} and
 * {@code password} (percent-encoded) turn on etcd authentication; both or neither must be given.
 * {@code allowStaleLeaderRevoke=true} accepts a cluster on an etcd that may revoke live leases after a
 * leader stall ({@link StaleLeaderCheck}) instead of refusing it.
 *
 * @param endpoints {@code http(s)://host:port} for jetcd, in the order given
 * @param prefix the key prefix, empty or ending with {@code /}
 * @param user the etcd user, or null
 * @param password the etcd password, or null
 * @param allowStaleLeaderRevoke whether an affected cluster is accepted ({@link StaleLeaderCheck})
 */
record EtcdUri(List<String> endpoints, String prefix, String user, String password, boolean allowStaleLeaderRevoke) {
    static final String SCHEME = "etcd://";
    static final String TLS_SCHEME = "etcds://";
    static final int DEFAULT_PORT = 2379;

    static boolean accepts(String uri) {
        return uri != null && (uri.startsWith(SCHEME) || uri.startsWith(TLS_SCHEME));
    }

    static EtcdUri parse(String uri) {
        if (!accepts(uri)) {
            throw new IllegalArgumentException(
                    "not an etcd URI (expected etcd://host:port... or etcds://host:port...): " + uri);
        }
        boolean tls = uri.startsWith(TLS_SCHEME);
        String rest = uri.substring(tls ? TLS_SCHEME.length() : SCHEME.length());
        String query = null;
        int q = rest.indexOf('?');
        if (q >= 0) {
            query = rest.substring(q + 1);
            rest = rest.substring(0, q);
        }
        String prefix = "";
        int slash = rest.indexOf('/');
        if (slash >= 0) {
            prefix = prefix(rest.substring(slash + 1), uri);
            rest = rest.substring(0, slash);
        }
        if (rest.contains("@")) {
            throw new IllegalArgumentException(
                    "etcd URI takes credentials as ?user=..&password=.., not user@host: " + redact(uri));
        }
        if (rest.isEmpty()) {
            throw new IllegalArgumentException("etcd URI has no host: " + redact(uri));
        }
        List<String> endpoints = new ArrayList<>();
        for (String hostPort : rest.split(",", -1)) {
            endpoints.add((tls ? "https://" : "http://") + hostPort(hostPort, uri));
        }
        String user = null;
        String password = null;
        boolean allowStaleLeaderRevoke = false;
        if (query != null && !query.isEmpty()) {
            for (String param : query.split("&", -1)) {
                int eq = param.indexOf('=');
                String key = eq < 0 ? param : param.substring(0, eq);
                String value = eq < 0 ? null : decode(param.substring(eq + 1), uri);
                switch (key) {
                    case "user" -> user = nonEmpty(key, value, uri);
                    case "password" -> password = nonEmpty(key, value, uri);
                    case "allowStaleLeaderRevoke" -> allowStaleLeaderRevoke = bool(key, value, uri);
                    default ->
                        throw new IllegalArgumentException("unknown parameter '" + key + "' in etcd URI " + redact(uri)
                                + " (known: user, password, allowStaleLeaderRevoke)");
                }
            }
        }
        if ((user == null) != (password == null)) {
            throw new IllegalArgumentException("etcd URI needs both user and password, or neither: " + redact(uri));
        }
        return new EtcdUri(List.copyOf(endpoints), prefix, user, password, allowStaleLeaderRevoke);
    }

    private static String prefix(String path, String uri) {
        while (path.endsWith("/")) {
            path = path.substring(0, path.length() - 1);
        }
        if (path.isEmpty()) {
            return "";
        }
        for (String segment : path.split("/", -1)) {
            if (segment.isEmpty() || segment.equals(".") || segment.equals("..")) {
                throw new IllegalArgumentException("bad key prefix '/" + path + "' in etcd URI " + redact(uri)
                        + " (empty, '.' and '..' segments are not allowed)");
            }
        }
        return path + "/";
    }

    private static String hostPort(String hostPort, String uri) {
        if (hostPort.isEmpty()) {
            throw new IllegalArgumentException("empty host in etcd URI " + redact(uri));
        }
        String host = hostPort;
        String port = null;
        if (hostPort.startsWith("[")) { // IPv6 literal
            int close = hostPort.indexOf(']');
            if (close < 0) {
                throw new IllegalArgumentException(
                        "unclosed '[' in host '" + hostPort + "' of etcd URI " + redact(uri));
            }
            host = hostPort.substring(0, close + 1);
            String after = hostPort.substring(close + 1);
            if (!after.isEmpty()) {
                if (!after.startsWith(":")) {
                    throw new IllegalArgumentException("bad host '" + hostPort + "' in etcd URI " + redact(uri));
                }
                port = after.substring(1);
            }
        } else {
            int colon = hostPort.indexOf(':');
            if (colon >= 0) {
                host = hostPort.substring(0, colon);
                port = hostPort.substring(colon + 1);
            }
        }
        if (host.isEmpty()) {
            throw new IllegalArgumentException("empty host in '" + hostPort + "' of etcd URI " + redact(uri));
        }
        int number = DEFAULT_PORT;
        if (port != null) {
            try {
                number = Integer.parseInt(port);
            } catch (NumberFormatException e) {
                number = -1;
            }
            if (number < 1 || number > 65535) {
                throw new IllegalArgumentException(
                        "bad port '" + port + "' in '" + hostPort + "' of etcd URI " + redact(uri) + " (1-65535)");
            }
        }
        return host + ":" + number;
    }

    private static boolean bool(String key, String value, String uri) {
        if ("true".equals(value) || "false".equals(value)) {
            return Boolean.parseBoolean(value);
        }
        throw new IllegalArgumentException(
                key + " must be true or false, not '" + value + "', in etcd URI " + redact(uri));
    }

    private static String nonEmpty(String key, String value, String uri) {
        if (value == null || value.isEmpty()) {
            throw new IllegalArgumentException("empty " + key + " in etcd URI " + redact(uri));
        }
        return value;
    }

    private static String decode(String value, String uri) {
        try {
            return URLDecoder.decode(value, StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("bad percent-encoding in etcd URI " + redact(uri), e);
        }
    }

    /** The URI with the password replaced, for messages. */
    static String redact(String uri) {
        return uri == null ? null : uri.replaceAll("(?i)(password=)[^&]*", "$1***");
    }

    @Override
    public String toString() {
        return "EtcdUri[" + endpoints + ", prefix '" + prefix + "'" + (user == null ? "" : ", user " + user) + "]";
    }
}
