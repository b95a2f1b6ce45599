package dev.dlock.integration;

import dev.dlock.testsupport.RedisProcess;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The leader initiator on a {@code redis-server} process started for this class. */
class RedisLeaderInitiatorTest extends LeaderInitiatorContract {
    private static RedisProcess redis;

    @BeforeAll
    static void startRedis() throws Exception {
        redis = RedisProcess.start();
    }

    @AfterAll
    static void stopRedis() throws Exception {
        redis.close();
    }

    @Override
    String uri(int port) {
        // A fresh server holds each namespace's first grant back for 30 s by default (it cannot be told
        // from one that lost its state); these cases are not about restarts, so they opt out.
        return "redis://127.0.0.1:" + port + "?unsafeGrantAfterRestart=true";
    }

    @Override
    int storePort() {
        return redis.port();
    }
}
