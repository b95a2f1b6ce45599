package dev.dlock.chaos;

import dev.dlock.testsupport.ChildProcesses;
import dev.dlock.testsupport.FreePorts;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * A PostgreSQL or MariaDB server of the suite's own: a data directory made by {@code initdb} or {@code
 * mariadb-install-db} in a temporary directory, the server run in the foreground on a free port, as user
 * {@code postgres} / {@code mysql} when the suite runs as root. It can be killed (SIGKILL of the whole
 * process tree: crash recovery on the next start), stopped gracefully, paused, and run on a shifted clock.
 *
 * <p>Failure modes: a server that does not accept a JDBC connection within 60 s throws with its log.
 */
final class SqlServer implements AutoCloseable {
    private static final boolean ROOT = "root".equals(System.getProperty("user.name"));

    private final boolean postgres;
    private final String host;
    private final int port;
    private final Path dir;
    private final List<String> command;
    private final FakeClock clock;
    private Process process;

    private SqlServer(boolean postgres, String host, int port, Path dir, List<String> command, FakeClock clock) {
        this.postgres = postgres;
        this.host = host;
        this.port = port;
        this.dir = dir;
        this.command = command;
        this.clock = clock;
    }

    /** Creates and starts a PostgreSQL server; {@code fakeClock} puts it on a {@link FakeClock}. */
    static SqlServer postgres(String host, Path base, boolean fakeClock) {
        int port = FreePorts.next();
        Path dir = ownDir(base.resolve("pg-" + port), "postgres");
        String bin = postgresBin();
        Proc.run(
                120,
                asUser(
                        "postgres",
                        List.of(
                                bin + "/initdb",
                                "-D",
                                dir.resolve("data").toString(),
                                "-A",
                                "trust",
                                "-U",
                                "postgres",
                                "--no-sync",
                                "-E",
                                "UTF8")));
        try {
            Files.writeString(
                    dir.resolve("data/pg_hba.conf"),
                    "host all all 0.0.0.0/0 trust\n",
                    java.nio.file.StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        List<String> run = asUser(
                "postgres",
                List.of(
                        bin + "/postgres",
                        "-D",
                        dir.resolve("data").toString(),
                        "-p",
                        Integer.toString(port),
                        "-c",
                        "listen_addresses=" + host,
                        "-c",
                        "unix_socket_directories=" + dir,
                        "-c",
                        "fsync=off",
                        "-c",
                        "max_connections=200",
                        "-c",
                        "shared_buffers=16MB"));
        SqlServer s = new SqlServer(true, host, port, dir, run, clock(dir, fakeClock));
        s.start();
        return s;
    }

    /** Creates and starts a MariaDB server with grant tables off (any user may connect). */
    static SqlServer mariadb(String host, Path base, boolean fakeClock) {
        int port = FreePorts.next();
        Path dir = ownDir(base.resolve("mariadb-" + port), "mysql");
        List<String> user = ROOT ? List.of("--user=mysql") : List.of();
        List<String> install = new ArrayList<>(List.of(
                "mariadb-install-db",
                "--no-defaults",
                "--datadir=" + dir.resolve("data"),
                "--skip-test-db",
                "--auth-root-authentication-method=normal"));
        install.addAll(user);
        Proc.run(180, install);
        List<String> run = new ArrayList<>(List.of(
                "mariadbd",
                "--no-defaults",
                "--datadir=" + dir.resolve("data"),
                "--port=" + port,
                "--bind-address=" + host,
                "--socket=" + dir.resolve("mysqld.sock"),
                "--pid-file=" + dir.resolve("mysqld.pid"),
                "--log-error=" + dir.resolve("error.log"),
                "--skip-grant-tables",
                "--skip-log-bin",
                "--innodb-buffer-pool-size=32M",
                "--innodb-flush-log-at-trx-commit=2",
                "--max-connections=300"));
        run.addAll(user);
        SqlServer s = new SqlServer(false, host, port, dir, run, clock(dir, fakeClock));
        s.start();
        return s;
    }

    private static FakeClock clock(Path dir, boolean fake) {
        return fake && FakeClock.library() != null ? new FakeClock(dir.resolve("faketime")) : null;
    }

    private static String postgresBin() {
        File[] versions = new File("/usr/lib/postgresql").listFiles();
        if (versions == null || versions.length == 0) {
            throw new IllegalStateException("no PostgreSQL under /usr/lib/postgresql: apt-get install postgresql");
        }
        return Stream.of(versions)
                        .max(Comparator.comparing(
                                f -> Integer.parseInt(f.getName().replaceAll("\\D", "0"))))
                        .orElseThrow()
                + "/bin";
    }

    private static Path ownDir(Path dir, String user) {
        try {
            Files.createDirectories(dir);
            if (ROOT) {
                Proc.run("chmod", "755", dir.getParent().toString());
                Proc.run("chown", "-R", user + ":" + user, dir.toString());
            }
            return dir;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static List<String> asUser(String user, List<String> command) {
        if (!ROOT) {
            return command;
        }
        List<String> full = new ArrayList<>(List.of("setpriv", "--reuid=" + user, "--regid=" + user, "--init-groups"));
        full.addAll(command);
        return full;
    }

    void start() {
        List<String> full = new ArrayList<>(command);
        if (clock != null) {
            // libfaketime goes in after setpriv: loaded into the root-run setpriv it would share a
            // semaphore the server, running as another user, may not open
            int at = full.get(0).equals("setpriv") ? 4 : 0;
            List<String> env = new ArrayList<>(List.of("env"));
            clock.environment().forEach((k, v) -> env.add(k + "=" + v));
            full.addAll(at, env);
        }
        ProcessBuilder pb = new ProcessBuilder(full)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(
                        dir.resolve("server.log").toFile()));
        try {
            process = ChildProcesses.start(pb);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Proc.await(() -> name() + " on port " + port + " did not start: " + log(), 90, () -> {
            if (!process.isAlive()) {
                throw new Proc.Gone(name() + " exited: " + log());
            }
            try (Connection c = connect()) {
                return c.isValid(2);
            } catch (SQLException notYet) {
                return false;
            }
        });
        if (!postgres) {
            try (Connection c = DriverManager.getConnection(
                    "jdbc:mariadb://" + host + ":" + port + "/?user=root&connectTimeout=2000")) {
                c.createStatement().execute("CREATE DATABASE IF NOT EXISTS chaos");
            } catch (SQLException e) {
                throw new IllegalStateException("cannot create database chaos: " + e.getMessage(), e);
            }
        }
    }

    private String name() {
        return postgres ? "postgres" : "mariadbd";
    }

    private String log() {
        return Proc.tail(dir.resolve(postgres ? "server.log" : "error.log"));
    }

    /** The JDBC URL of the database the suite uses in this server. */
    String jdbcUrl() {
        return postgres
                ? "jdbc:postgresql://" + host + ":" + port + "/postgres?user=postgres&connectTimeout=3&socketTimeout=10"
                : "jdbc:mariadb://" + host + ":" + port + "/chaos?user=root&connectTimeout=3000&socketTimeout=10000";
    }

    Connection connect() throws SQLException {
        return DriverManager.getConnection(
                postgres
                        ? "jdbc:postgresql://" + host + ":" + port + "/postgres?user=postgres&connectTimeout=2"
                        : "jdbc:mariadb://" + host + ":" + port + "/?user=root&connectTimeout=2000");
    }

    String address() {
        return host + ":" + port;
    }

    FakeClock clock() {
        return clock;
    }

    /** SIGKILL of the server and every backend process. */
    void kill() {
        ChildProcesses.killTree(process);
        Proc.sleep(200);
    }

    /** A clean shutdown (SIGTERM for MariaDB, SIGINT = fast shutdown for PostgreSQL). */
    void stop() {
        ChildProcesses.signalTree(process.pid(), "CONT");
        Proc.run("kill", postgres ? "-INT" : "-TERM", Long.toString(process.pid()));
        try {
            if (!process.waitFor(30, java.util.concurrent.TimeUnit.SECONDS)) {
                kill();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    void pause() {
        ChildProcesses.signalTree(process.pid(), "STOP");
    }

    void resume() {
        ChildProcesses.signalTree(process.pid(), "CONT");
    }

    @Override
    public void close() {
        kill();
    }
}
