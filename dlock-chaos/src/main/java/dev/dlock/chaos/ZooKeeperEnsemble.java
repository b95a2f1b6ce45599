package dev.dlock.chaos;

import dev.dlock.testsupport.ChildProcesses;
import dev.dlock.testsupport.FreePorts;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Random;
import java.util.Set;

/**
 * A three-server ZooKeeper ensemble, each server its own JVM ({@code QuorumPeerMain} from the class path
 * the suite runs on), ticking every 500 ms so sessions of a few seconds are allowed.
 *
 * <p>Failure modes injected: the leader killed (a new one is elected in a few ticks), two servers killed
 * (no quorum: every session is suspended until they are back), one server paused or killed.
 */
final class ZooKeeperEnsemble implements Store {
    private final String host;
    private final String classpath;
    private final List<Server> servers = new ArrayList<>();

    private ZooKeeperEnsemble(String host, String classpath) {
        this.host = host;
        this.classpath = classpath;
    }

    /**
     * Starts an ensemble and waits for its leader. Tries twice, on fresh ports: a port found free can be
     * taken before its server binds it (an outgoing connection's ephemeral port), and an ensemble one of
     * whose election ports is taken never elects a leader (seen once in a CI dry run).
     */
    static ZooKeeperEnsemble start(String host, Path dir, String classpath) {
        try {
            return startOnce(host, dir, classpath);
        } catch (NoLeader first) {
            try {
                return startOnce(host, dir, classpath);
            } catch (NoLeader second) {
                second.addSuppressed(first);
                throw second;
            }
        }
    }

    /** An ensemble that elected no leader in time; the message carries the servers' last log lines. */
    static final class NoLeader extends IllegalStateException {
        private static final long serialVersionUID = 1L;

        NoLeader(String message) {
            super(message);
        }
    }

    private static ZooKeeperEnsemble startOnce(String host, Path dir, String classpath) {
        ZooKeeperEnsemble zk = new ZooKeeperEnsemble(host, classpath);
        try {
            int[][] ports = new int[3][3];
            for (int[] p : ports) {
                for (int j = 0; j < 3; j++) {
                    p[j] = FreePorts.next();
                }
            }
            for (int i = 0; i < 3; i++) {
                Path data = Files.createDirectories(dir.resolve("zk-" + ports[i][0]));
                Files.writeString(data.resolve("myid"), Integer.toString(i + 1));
                StringBuilder cfg = new StringBuilder()
                        .append("tickTime=500\ninitLimit=20\nsyncLimit=4\n")
                        .append("dataDir=")
                        .append(data)
                        .append("\nclientPort=")
                        .append(ports[i][0])
                        .append("\nclientPortAddress=")
                        .append(host)
                        .append("\nminSessionTimeout=1000\nmaxSessionTimeout=30000\n")
                        .append("4lw.commands.whitelist=srvr,mntr\nadmin.enableServer=false\n")
                        .append("forceSync=no\n");
                for (int j = 0; j < 3; j++) {
                    cfg.append("server.")
                            .append(j + 1)
                            .append('=')
                            .append(host)
                            .append(':')
                            .append(ports[j][1])
                            .append(':')
                            .append(ports[j][2])
                            .append('\n');
                }
                Path config = data.resolve("zoo.cfg");
                Files.writeString(config, cfg.toString());
                zk.servers.add(new Server(i + 1, ports[i][0], data, config));
            }
            zk.servers.forEach(zk::launch);
            try {
                Proc.await("no leader", 60, () -> zk.leader() != null);
            } catch (IllegalStateException e) {
                throw new NoLeader("the ZooKeeper ensemble elected no leader; last log lines: " + zk.logTails());
            }
            return zk;
        } catch (IOException e) {
            zk.close();
            throw new UncheckedIOException(e);
        } catch (RuntimeException e) {
            zk.close();
            throw e;
        }
    }

    private void launch(Server s) {
        try {
            s.process = ChildProcesses.start(new ProcessBuilder(
                            "java",
                            "-Xmx128m",
                            "-XX:+UseSerialGC",
                            "-XX:TieredStopAtLevel=1",
                            "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                            "-Dznode.container.checkIntervalMs=200",
                            "-Dzookeeper.jmx.log4j.disable=true",
                            "-cp",
                            classpath,
                            "org.apache.zookeeper.server.quorum.QuorumPeerMain",
                            s.config.toString())
                    .redirectErrorStream(true)
                    .redirectOutput(s.dir.resolve("server.log").toFile()));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Asks a server a four-letter word; null when it does not answer. */
    private String ask(Server s, String word) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(host, s.port), 500);
            socket.setSoTimeout(1000);
            socket.getOutputStream().write(word.getBytes(StandardCharsets.US_ASCII));
            return new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return null;
        }
    }

    private String logTails() {
        StringBuilder b = new StringBuilder();
        for (Server s : servers) {
            b.append("\n  server ").append(s.id).append(": ");
            try {
                List<String> lines = Files.readAllLines(s.dir.resolve("server.log"), StandardCharsets.UTF_8);
                b.append(String.join("\n    ", lines.subList(Math.max(0, lines.size() - 5), lines.size())));
            } catch (IOException | RuntimeException e) {
                b.append("(no log: ").append(e).append(')');
            }
        }
        return b.toString();
    }

    private Server leader() {
        for (Server s : servers) {
            String reply = ask(s, "srvr");
            if (reply != null && reply.contains("Mode: leader")) {
                return s;
            }
        }
        return null;
    }

    @Override
    public String clientUri() {
        StringBuilder b = new StringBuilder("zookeeper://");
        for (int i = 0; i < servers.size(); i++) {
            b.append(i == 0 ? "" : ",").append(host).append(':').append(servers.get(i).port);
        }
        return b.append("/chaos?sessionTimeout=3s").toString();
    }

    @Override
    public long marginMillis() {
        return 15_000;
    }

    @Override
    public Set<Fault> faults() {
        return EnumSet.of(Fault.LEADER_KILL, Fault.QUORUM_LOSS, Fault.KILL_STORE, Fault.PAUSE_STORE);
    }

    @Override
    public Injection inject(Fault fault, Random random, long durationMillis) {
        Server any = servers.get(random.nextInt(servers.size()));
        return switch (fault) {
            case LEADER_KILL -> {
                Server leader = leader();
                yield kill(List.of(leader != null ? leader : any));
            }
            case QUORUM_LOSS -> {
                List<Server> two = new ArrayList<>(servers);
                two.remove(any);
                yield kill(two);
            }
            case KILL_STORE -> kill(List.of(any));
            case PAUSE_STORE -> {
                ChildProcesses.signalTree(any.process.pid(), "STOP");
                yield new Injection("zk" + any.id, () -> ChildProcesses.signalTree(any.process.pid(), "CONT"));
            }
            default -> throw new IllegalArgumentException(fault.id());
        };
    }

    private Injection kill(List<Server> victims) {
        StringBuilder target = new StringBuilder();
        for (Server s : victims) {
            ChildProcesses.killTree(s.process);
            target.append(target.length() == 0 ? "zk" : ",zk").append(s.id);
        }
        return new Injection(target.toString(), () -> victims.forEach(this::launch));
    }

    @Override
    public long leftovers() {
        Server leader = leader();
        String mntr = leader == null ? null : ask(leader, "mntr");
        if (mntr == null) {
            return -1;
        }
        return mntr.lines()
                .filter(l -> l.startsWith("zk_ephemerals_count"))
                .mapToLong(l -> Long.parseLong(l.split("\\s+")[1]))
                .sum();
    }

    @Override
    public void close() {
        for (Server s : servers) {
            ChildProcesses.killTree(s.process);
        }
    }

    private static final class Server {
        final int id;
        final int port;
        final Path dir;
        final Path config;
        Process process;

        Server(int id, int port, Path dir, Path config) {
            this.id = id;
            this.port = port;
            this.dir = dir;
            this.config = config;
        }
    }
}
