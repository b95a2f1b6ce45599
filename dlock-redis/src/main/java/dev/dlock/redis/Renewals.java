package dev.dlock.redis;

import dev.dlock.spi.BackendContext;
import dev.dlock.spi.Mode;
import dev.dlock.spi.RenewRequest;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * Renews a batch of leases in as few script calls as possible.
 *
 * <p>Design: the leases are split by script (exclusive locks run {@code exclusive.lua}, the rest {@code
 * dlock.lua}), then grouped by the node that serves them (one group on standalone and Sentinel), and each
 * group of up to {@value #CHUNK} leases is renewed by one call. In a Cluster the call is routed by the
 * group's first key and touches the other keys of its node without declaring them (allowed for scripts
 * without flags); if the slot map changed under it, the group is retried slot by slot with a fresh
 * routing. How one call is sent (plain, or followed by {@code WAIT}) is the {@link Call} given.
 *
 * <p>Store clock: each call's answer starts with the server's clock ({@code TIME} in the script, in
 * microseconds), reported to the engine ({@link BackendContext.BackendEvents#storeClock}) with the node
 * as the source: the backend's server (standalone, Sentinel, a Redlock master) or, in a Cluster, the
 * {@code host:port} of the master the client's slot map routes the call to. A call redirected to another
 * node reports that node's clock under the first one's name, which at worst counts a jump that was not
 * (a lease cut early: the holder's safe side).
 *
 * <p>Concurrency: immutable; calls only send commands.
 *
 * <p>Failure modes: a failed call fails the batch (the engine retries it until the leases' deadlines);
 * outside a Cluster there is no retry here.
 */
final class Renewals {
    /** The most leases one script call renews. */
    static final int CHUNK = 1_000;

    /** Sends one renewal call: {@code args} is {@code renew} followed by (prefix, owner, lease) triples. */
    @FunctionalInterface
    interface Call {
        CompletableFuture<List<Object>> run(LuaScript script, String[] routing, String[] args);
    }

    private final Connections connections;
    private final Call call;
    /** The source name of the server's clock outside a Cluster. */
    private final String server;

    private final BackendContext.BackendEvents events;

    Renewals(Connections connections, Call call, String server, BackendContext.BackendEvents events) {
        this.connections = connections;
        this.call = call;
        this.server = server;
        this.events = events;
    }

    /** Renews {@code batch}; completes with the owners whose leases are no longer held. */
    CompletableFuture<Set<String>> renew(List<RenewRequest> batch) {
        List<RenewRequest> exclusive = new ArrayList<>();
        List<RenewRequest> general = new ArrayList<>();
        for (RenewRequest request : batch) {
            (request.key().mode() == Mode.EXCLUSIVE ? exclusive : general).add(request);
        }
        List<CompletableFuture<Set<String>>> calls = new ArrayList<>();
        renew(LuaScript.EXCLUSIVE, exclusive, calls);
        renew(LuaScript.DLOCK, general, calls);
        return union(calls);
    }

    /** Adds the calls renewing {@code batch} with {@code script} to {@code calls}. */
    private void renew(LuaScript script, List<RenewRequest> batch, List<CompletableFuture<Set<String>>> calls) {
        if (batch.isEmpty()) {
            return;
        }
        List<String> prefixes = new ArrayList<>(batch.size());
        for (RenewRequest request : batch) {
            prefixes.add(ResourceKeys.of(request.key()).prefix());
        }
        for (List<Integer> group : connections.groupByNode(prefixes)) {
            for (int from = 0; from < group.size(); from += CHUNK) {
                List<Integer> chunk = group.subList(from, Math.min(group.size(), from + CHUNK));
                calls.add(renewGroup(script, batch, prefixes, chunk)
                        .exceptionallyCompose(error -> connections.isCluster()
                                ? renewBySlot(script, batch, prefixes, chunk)
                                : CompletableFuture.failedFuture(error)));
            }
        }
    }

    private CompletableFuture<Set<String>> renewBySlot(
            LuaScript script, List<RenewRequest> batch, List<String> prefixes, List<Integer> positions) {
        List<String> subset = new ArrayList<>(positions.size());
        for (int position : positions) {
            subset.add(prefixes.get(position));
        }
        List<CompletableFuture<Set<String>>> calls = new ArrayList<>();
        for (List<Integer> slotGroup : connections.groupBySlot(subset)) {
            List<Integer> original = new ArrayList<>(slotGroup.size());
            for (int i : slotGroup) {
                original.add(positions.get(i));
            }
            calls.add(renewGroup(script, batch, prefixes, original));
        }
        return union(calls);
    }

    private static CompletableFuture<Set<String>> union(List<CompletableFuture<Set<String>>> calls) {
        return CompletableFuture.allOf(calls.toArray(CompletableFuture[]::new)).thenApply(done -> {
            Set<String> lost = new HashSet<>();
            for (CompletableFuture<Set<String>> call : calls) {
                lost.addAll(call.join());
            }
            return lost;
        });
    }

    /** One script call renewing the leases at {@code positions}, all served by one node. */
    private CompletableFuture<Set<String>> renewGroup(
            LuaScript script, List<RenewRequest> batch, List<String> prefixes, List<Integer> positions) {
        String[] args = new String[1 + 3 * positions.size()];
        args[0] = "renew";
        int i = 1;
        for (int position : positions) {
            RenewRequest request = batch.get(position);
            args[i++] = prefixes.get(position);
            args[i++] = request.owner();
            args[i++] = Long.toString(request.leaseMillis());
        }
        String[] routing = {prefixes.get(positions.get(0)) + ":x"};
        String node = connections.nodeOf(routing[0]);
        long sent = System.nanoTime();
        return call.run(script, routing, args).thenApply(reply -> {
            events.storeClock(node != null ? node : server, (Long) reply.get(0), sent, System.nanoTime());
            Set<String> lost = new HashSet<>();
            for (Object position : reply.subList(1, reply.size())) {
                lost.add(batch.get(positions.get(((Long) position).intValue() - 1))
                        .owner());
            }
            return lost;
        });
    }
}
