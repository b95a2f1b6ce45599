package dev.dlock.chaos;

import java.util.ArrayList;
import java.util.List;

/**
 * Where stores and the resource listen, and how a client is cut off from the store.
 *
 * <p>With network namespaces (root and iproute2): the stores listen on the run's store address and the
 * resource and controller on its resource address, two /32 addresses added to the host's loopback
 * device. Each client runs in its own namespace with two veth pairs, one routed to the store address and
 * one to the resource address; every name and address is the run's own ({@link NetNames}: a slot per
 * run, taken from the process id on), so runs side by side do not meet. A partition takes the store
 * pair's link down, so the
 * client keeps its resource and controller connections while every store packet is dropped (no reset:
 * the client sees a silent network, as in a real partition). Only traffic between the host and the
 * namespaces created here is affected.
 *
 * <p>Without namespaces everything uses 127.0.0.1 and the partition fault is reported as unavailable.
 *
 * <p>Failure modes: leftovers of an earlier run that died in the same slot are removed at setup; {@link
 * #close()} removes the namespaces, links and addresses it made, and nothing of another run.
 */
final class Net implements AutoCloseable {
    private final NetNames names;
    private final boolean namespaces;
    private final List<Integer> clients = new ArrayList<>();

    private Net(NetNames names, boolean namespaces) {
        this.names = names;
        this.namespaces = namespaces;
    }

    /** Sets up the addresses when namespaces are wanted and possible; loopback mode otherwise. */
    static Net open(boolean wantNamespaces) {
        NetNames names = NetNames.forProcess(ProcessHandle.current().pid());
        if (!wantNamespaces || !Proc.available("ip", "netns", "list")) {
            return new Net(names, false);
        }
        try {
            names = freeSlot(names);
            cleanLeftovers(names);
            for (String ip : List.of(names.storeIp(), names.resourceIp())) {
                Proc.run("ip", "addr", "add", ip + "/32", "dev", "lo");
            }
            System.err.println("[chaos] network slot " + names.slot() + ": store " + names.storeIp() + ", resource "
                    + names.resourceIp());
            return new Net(names, true);
        } catch (RuntimeException e) {
            System.err.println("[chaos] network namespaces unavailable (" + e.getMessage() + "); using loopback");
            return new Net(names, false);
        }
    }

    /** The first slot from {@code first} on whose store address no other run holds. */
    private static NetNames freeSlot(NetNames first) {
        String addresses = Proc.run("ip", "-4", "addr", "show", "dev", "lo");
        NetNames names = first;
        for (int tried = 0; tried < NetNames.SLOTS; tried++) {
            if (!addresses.contains(names.storeIp() + "/32")) {
                return names;
            }
            names = names.next();
        }
        throw new IllegalStateException("all " + NetNames.SLOTS + " network slots are taken");
    }

    /** Namespaces and links a run that died in this slot left behind; another run's are not touched. */
    private static void cleanLeftovers(NetNames names) {
        for (String line : Proc.run("ip", "netns", "list").split("\n")) {
            String ns = line.split(" ")[0].strip();
            if (names.owns(ns)) {
                Proc.available("ip", "netns", "del", ns);
            }
        }
        for (String line : Proc.run("ip", "-o", "link", "show").split("\n")) {
            String[] parts = line.split(":\\s+");
            if (parts.length > 1) {
                String dev = parts[1].split("@")[0];
                if (names.owns(dev)) {
                    Proc.available("ip", "link", "del", dev);
                }
            }
        }
    }

    boolean namespaces() {
        return namespaces;
    }

    String storeHost() {
        return namespaces ? names.storeIp() : "127.0.0.1";
    }

    String resourceHost() {
        return namespaces ? names.resourceIp() : "127.0.0.1";
    }

    /** Creates client {@code id}'s namespace (once) and returns the command prefix that runs in it. */
    synchronized List<String> prefix(int id) {
        if (!namespaces) {
            return List.of();
        }
        if (!clients.contains(id)) {
            String ns = names.namespace(id);
            Proc.run("ip", "netns", "add", ns);
            Proc.run("ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up");
            link(ns, 's', id, names.storeIp());
            link(ns, 'r', id, names.resourceIp());
            clients.add(id);
        }
        return List.of("ip", "netns", "exec", names.namespace(id));
    }

    private void link(String ns, char kind, int id, String target) {
        String host = names.hostLink(kind, id);
        String inner = names.innerLink(kind, id);
        String subnet = names.subnet(kind, id);
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
        Proc.run("ip", "link", "set", names.hostLink('s', id), cut ? "down" : "up");
        if (!cut) {
            // the namespace side lost its route when the carrier went away; put it back
            Proc.available(
                    "ip",
                    "netns",
                    "exec",
                    names.namespace(id),
                    "ip",
                    "route",
                    "replace",
                    names.storeIp() + "/32",
                    "via",
                    names.subnet('s', id) + "1");
        }
    }

    @Override
    public void close() {
        if (!namespaces) {
            return;
        }
        for (int id : clients) {
            Proc.available("ip", "link", "del", names.hostLink('s', id));
            Proc.available("ip", "link", "del", names.hostLink('r', id));
            Proc.available("ip", "netns", "del", names.namespace(id));
        }
        clients.clear();
        for (String ip : List.of(names.storeIp(), names.resourceIp())) {
            Proc.available("ip", "addr", "del", ip + "/32", "dev", "lo");
        }
    }
}
