package dev.dlock.shedlock;

import dev.dlock.testsupport.RedisProcess;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The kit on a {@code redis-server} process started for this class. */
class RedisShedLockTest extends ShedLockKitTest {
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
    String uri() {
        // A fresh server holds each namespace's first grant back for 30 s by default (it cannot be told
        // from one that lost its state); the kit is not about restarts, so it opts out.
        return redis.uri() + "?unsafeGrantAfterRestart=true";
    }
}
