package dev.dlock.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/** N independent {@code redis-server} masters on free ports, for Redlock tests. */
final class RedlockServers implements AutoCloseable {
    private final List<RedisServer> masters = new ArrayList<>();

    RedlockServers(int count, String... extraArgs) {
        try {
            for (int i = 0; i < count; i++) {
                masters.add(RedisServer.start(extraArgs));
            }
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    RedisServer get(int i) {
        return masters.get(i);
    }

    List<RedisServer> all() {
        return masters;
    }

    /**
     * {@code redlock://127.0.0.1:p1,127.0.0.1:p2,...} with the hold-back after a lost state switched off
     * (fresh masters; see {@link RedisServer#uri()}), followed by {@code query} (empty, or {@code ?...}).
     */
    String uri(String query) {
        return plainUri("?unsafeGrantAfterRestart=true" + (query.isEmpty() ? "" : "&" + query.substring(1)));
    }

    /** {@code redlock://127.0.0.1:p1,127.0.0.1:p2,...} followed by {@code query} (may be empty), as given. */
    String plainUri(String query) {
        return "redlock://"
                + masters.stream().map(m -> "127.0.0.1:" + m.port()).collect(Collectors.joining(","))
                + query;
    }

    String uri() {
        return uri("");
    }

    @Override
    public void close() {
        for (RedisServer master : masters) {
            master.close();
        }
    }
}
