package dev.dlock.zookeeper;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * A parsed {@code zookeeper://[user:password@]host:port[,host:port...][/chroot][?sessionTimeout=..]} URI.
 *
 * <p>{@code user:password} turns on digest authentication (percent-encode {@code @ : /} in them); the
 * nodes are then created with an ACL that lets only that identity change or delete them and anybody read
 * them. {@code sessionTimeout} is milliseconds, or a number with {@code ms}, {@code s} or {@code m}; it
 * defaults to {@value #DEFAULT_SESSION_TIMEOUT_MS} ms and is capped by the server ({@code
 * maxSessionTimeout}, 20 ticks by default). The chroot becomes the Curator namespace, created on demand.
 *
 * @param connectString {@code host:port,...} for ZooKeeper
 * @param chroot the chroot without its leading slash, or null
 * @param sessionTimeoutMs the session timeout to ask for
 * @param user the digest user, or null
 * @param password the digest password, or null
 */
record ZooKeeperUri(String connectString, String chroot, int sessionTimeoutMs, String user, String password) {
    static final String SCHEME = "zookeeper://";
    static final int DEFAULT_SESSION_TIMEOUT_MS = 15_000;

    static ZooKeeperUri parse(String uri) {
        if (uri == null || !uri.startsWith(SCHEME)) {
            throw new IllegalArgumentException("not a ZooKeeper URI (expected zookeeper://host:port...): " + uri);
        }
        String rest = uri.substring(SCHEME.length());
        String query = null;
        int q = rest.indexOf('?');
        if (q >= 0) {
            query = rest.substring(q + 1);
            rest = rest.substring(0, q);
        }
        String chroot = null;
        int slash = rest.indexOf('/');
        if (slash >= 0) {
            chroot = rest.substring(slash + 1);
            rest = rest.substring(0, slash);
            while (chroot.endsWith("/")) {
                chroot = chroot.substring(0, chroot.length() - 1);
            }
            if (chroot.isEmpty()) {
                chroot = null;
            } else if (chroot.contains("//")
                    || chroot.startsWith("/")
                    || ("/" + chroot + "/").contains("/./")
                    || ("/" + chroot + "/").contains("/../")) {
                throw new IllegalArgumentException("bad chroot '/" + chroot + "' in ZooKeeper URI " + redact(uri));
            }
        }
        String user = null;
        String password = null;
        int at = rest.lastIndexOf('@');
        if (at >= 0) {
            String userInfo = rest.substring(0, at);
            rest = rest.substring(at + 1);
            int colon = userInfo.indexOf(':');
            if (colon <= 0) {
                throw new IllegalArgumentException(
                        "ZooKeeper URI user info must be user:password for digest authentication: " + redact(uri));
            }
            user = decode(userInfo.substring(0, colon));
            password = decode(userInfo.substring(colon + 1));
        }
        if (rest.isEmpty()) {
            throw new IllegalArgumentException("ZooKeeper URI has no host: " + redact(uri));
        }
        for (String hostPort : rest.split(",", -1)) {
            checkHostPort(hostPort, uri);
        }
        int sessionTimeout = DEFAULT_SESSION_TIMEOUT_MS;
        if (query != null && !query.isEmpty()) {
            for (String param : query.split("&")) {
                int eq = param.indexOf('=');
                String key = eq < 0 ? param : param.substring(0, eq);
                String value = eq < 0 ? "" : param.substring(eq + 1);
                if (!key.equals("sessionTimeout")) {
                    throw new IllegalArgumentException("unknown parameter '" + key + "' in ZooKeeper URI " + redact(uri)
                            + " (supported: sessionTimeout)");
                }
                sessionTimeout = millis(value, uri);
            }
        }
        return new ZooKeeperUri(rest, chroot, sessionTimeout, user, password);
    }

    private static void checkHostPort(String hostPort, String uri) {
        int colon = hostPort.lastIndexOf(':');
        String host = colon < 0 ? hostPort : hostPort.substring(0, colon);
        if (host.isEmpty() || colon < 0 || (host.contains(":") && !host.startsWith("["))) {
            throw new IllegalArgumentException(
                    "expected host:port in ZooKeeper URI " + redact(uri) + ", got '" + hostPort + "'");
        }
        int port;
        try {
            port = Integer.parseInt(hostPort.substring(colon + 1));
        } catch (NumberFormatException e) {
            port = -1;
        }
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException(
                    "bad port in '" + hostPort + "' of ZooKeeper URI " + redact(uri) + " (expected 1-65535)");
        }
    }

    private static int millis(String value, String uri) {
        String v = value.trim().toLowerCase(Locale.ROOT);
        long factor = 1;
        if (v.endsWith("ms")) {
            v = v.substring(0, v.length() - 2);
        } else if (v.endsWith("s")) {
            v = v.substring(0, v.length() - 1);
            factor = 1000;
        } else if (v.endsWith("m")) {
            v = v.substring(0, v.length() - 1);
            factor = 60_000;
        }
        long ms;
        try {
            ms = Long.parseLong(v.trim()) * factor;
        } catch (NumberFormatException e) {
            ms = -1;
        }
        if (ms <= 0 || ms > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("bad sessionTimeout '" + value + "' in ZooKeeper URI " + redact(uri)
                    + " (expected milliseconds, or a number with ms, s or m)");
        }
        return (int) ms;
    }

    private static String decode(String s) {
        return URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
    }

    /** The URI without its password, for messages. */
    static String redact(String uri) {
        if (uri == null) {
            return null;
        }
        int start = uri.startsWith(SCHEME) ? SCHEME.length() : 0;
        int end = uri.indexOf('/', start);
        String authority = end < 0 ? uri.substring(start) : uri.substring(start, end);
        int at = authority.lastIndexOf('@');
        int colon = authority.indexOf(':');
        if (at < 0 || colon < 0 || colon > at) {
            return uri;
        }
        return uri.substring(0, start + colon + 1) + "****" + uri.substring(start + at);
    }

    @Override
    public String toString() {
        return "zookeeper://" + (user == null ? "" : user + ":****@") + connectString
                + (chroot == null ? "" : "/" + chroot) + "?sessionTimeout=" + sessionTimeoutMs;
    }
}
