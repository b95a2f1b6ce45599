package dev.dlock.chaos;

import java.util.ArrayList;
import java.util.List;

/**
 * Where stores and the resource listen, and how a client is cut off from the store.
 *
 * <p>With network namespaces (root and iproute2): the stores listen on {@value #STORE_IP} and the
 * resource and controller on {@value #RESOURCE_IP}, two /32 addresses added to the host's loopback
 * device. Each client runs in its own namespace {@code dlc<N>} with two veth pairs, one routed to the
 * store address and one to the resource address; a partition takes the store pair's link down, so the
 * client keeps its resource and controller connections while every store packet is dropped (no reset:
 * the client sees a silent network, as in a real partition). Only traffic between the host and the
 * namespaces created here is affected.
 *
 * <p>Without namespaces everything uses 127.0.0.1 and the partition fault is reported as unavailable.
 *
 * <p>Failure modes: leftovers of an earlier run that died are removed at setup; {@link #close()} removes
 * the namespaces, links and addresses it made.
 */
final class Net implements AutoCloseable {
    static final String STORE_IP = "10.77.0.1";
    static final String RESOURCE_IP = "10.78.0.1";
    private static final String PREFIX = "dlc";

    private final boolean namespaces;
    private final List<Integer> clients = new ArrayList<>();

    private Net(boolean namespaces) {
        this.namespaces = namespaces;
    }

    /** Sets up the addresses when namespaces are wanted and possible; loopback mode otherwise. */
    static Net open(boolean wantNamespaces) {
        if (!wantNamespaces || !Proc.available("ip", "netns", "list")) {
            return new Net(false);
        }
        cleanLeftovers();
        try {
            for (String ip : List.of(STORE_IP, RESOURCE_IP)) {
                if (!Proc.run("ip", "-4", "addr", "show", "dev", "lo").contains(ip + "/32")) {
                    Proc.run("ip", "addr", "add", ip + "/32", "dev", "lo");
                }
            }
            return new Net(true);
        } catch (RuntimeException e) {
            System.err.println("[chaos] network namespaces unavailable (" + e.getMessage() + "); using loopback");
            return new Net(false);
        }
    }

    private static void cleanLeftovers() {
        for (String line : Proc.run("ip", "netns", "list").split("\n")) {
            String ns = line.split(" ")[0].strip();
            if (ns.matches(PREFIX + "\\d+")) {
                Proc.available("ip", "netns", "del", ns);
            }
        }
        for (String line : Proc.run("ip", "-o", "link", "show").split("\n")) {
            String[] parts = line.split(":\\s+");
            if (parts.length > 1) {
                String dev = parts[1].split("@")[0];
                if (dev.matches(PREFIX + "[sr]\\d+h")) {
                    Proc.available("ip", "link", "del", dev);
                }
            }
        }
    }

    boolean namespaces() {
        return namespaces;
    }

    String storeHost() {
        return namespaces ? STORE_IP : "127.0.0.1";
    }

    String resourceHost() {
        return namespaces ? RESOURCE_IP : "127.0.0.1";
    }

    /** Creates client {@code id}'s namespace (once) and returns the command prefix that runs in it. */
    synchronized List<String> prefix(int id) {
        if (!namespaces) {
            return List.of();
        }
        if (!clients.contains(id)) {
            String ns = PREFIX + id;
            Proc.run("ip", "netns", "add", ns);
            Proc.run("ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up");
            link(ns, 's', 77, id, STORE_IP);
            link(ns, 'r', 78, id, RESOURCE_IP);
            clients.add(id);
        }
        return List.of("ip", "netns", "exec", PREFIX + id);
    }

    private static void link(String ns, char kind, int net, int id, String target) {
        String host = PREFIX + kind + id + "h";
        String inner = PREFIX + kind + id + "n";
        String subnet = "10." + net + "." + (id + 1) + ".";
        Proc.run("ip", "link", "add", host, "type", "veth", "peer", "name", inner);
        Proc.run("ip", "link", "set", inner, "netns", ns);
        Proc.run("ip", "addr", "add", subnet + "1/30", "dev", host);
        Proc.run("ip", "link", "set", host, "up");
        Proc.run("ip", "netns", "exec", ns, "ip", "addr", "add", subnet + "2/30", "dev", inner);
        Proc.run("ip", "netns", "exec", ns, "ip", "link", "set", inner, "up");
        Proc.run("ip", "netns", "exec", ns, "ip", "route", "add", target + "/32", "via", subnet + "1");
    }

    /** Drops every packet between client {@code id} and the stores (link down), or lets them through. */
    void partition(int id, boolean cut) {
        if (!namespaces) {
            throw new IllegalStateException("partitions need network namespaces");
        }
        Proc.run("ip", "link", "set", PREFIX + "s" + id + "h", cut ? "down" : "up");
        if (!cut) {
            // the namespace side lost its route when the carrier went away; put it back
            String subnet = "10.77." + (id + 1) + ".";
            Proc.available(
                    "ip",
                    "netns",
                    "exec",
                    PREFIX + id,
                    "ip",
                    "route",
                    "replace",
                    STORE_IP + "/32",
                    "via",
                    subnet + "1");
        }
    }

    @Override
    public void close() {
        if (!namespaces) {
            return;
        }
        for (int id : clients) {
            Proc.available("ip", "link", "del", PREFIX + "s" + id + "h");
            Proc.available("ip", "link", "del", PREFIX + "r" + id + "h");
            Proc.available("ip", "netns", "del", PREFIX + id);
        }
        clients.clear();
        for (String ip : List.of(STORE_IP, RESOURCE_IP)) {
            Proc.available("ip", "addr", "del", ip + "/32", "dev", "lo");
        }
    }
}
