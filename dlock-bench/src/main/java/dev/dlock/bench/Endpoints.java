package dev.dlock.bench;

import java.util.List;

/**
 * Where the stores listen. The held scenario swaps in the addresses of counting proxies.
 *
 * @param redis Redis, e.g. 127.0.0.1:6379
 * @param zookeeper the in-process ZooKeeper server
 * @param postgres PostgreSQL (database {@code test}, user {@code postgres}, no password)
 * @param mariadb MariaDB (database {@code test}, user {@code root}, empty password)
 * @param redlock the independent Redis masters of the Redlock systems, started by the run; null when none
 * @param etcd the etcd process the bench starts (one member, data on {@code /dev/shm}), or null
 */
record Endpoints(
        HostPort redis,
        HostPort zookeeper,
        HostPort postgres,
        HostPort mariadb,
        List<HostPort> redlock,
        HostPort etcd) {
    /** A TCP address. */
    record HostPort(String host, int port) {
        static HostPort parse(String text) {
            int colon = text.lastIndexOf(':');
            if (colon <= 0 || colon == text.length() - 1) {
                throw new IllegalArgumentException("expected HOST:PORT, got '" + text + "'");
            }
            try {
                return new HostPort(text.substring(0, colon), Integer.parseInt(text.substring(colon + 1)));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("expected HOST:PORT with a numeric port, got '" + text + "'");
            }
        }

        @Override
        public String toString() {
            return host + ":" + port;
        }
    }

    HostPort of(String backend) {
        return switch (backend) {
            case "redis" -> redis;
            case "zookeeper" -> zookeeper;
            case "postgresql" -> postgres;
            case "mariadb" -> mariadb;
            case "etcd" -> etcd;
            default -> null;
        };
    }

    Endpoints with(String backend, HostPort address) {
        return switch (backend) {
            case "redis" -> new Endpoints(address, zookeeper, postgres, mariadb, redlock, etcd);
            case "zookeeper" -> new Endpoints(redis, address, postgres, mariadb, redlock, etcd);
            case "postgresql" -> new Endpoints(redis, zookeeper, address, mariadb, redlock, etcd);
            case "mariadb" -> new Endpoints(redis, zookeeper, postgres, address, redlock, etcd);
            case "etcd" -> new Endpoints(redis, zookeeper, postgres, mariadb, redlock, address);
            default -> this;
        };
    }

    String postgresJdbcUrl() {
        return "jdbc:postgresql://" + postgres + "/test?user=postgres&sslmode=disable";
    }

    String mariadbJdbcUrl() {
        return "jdbc:mariadb://" + mariadb + "/test?user=root";
    }
}
