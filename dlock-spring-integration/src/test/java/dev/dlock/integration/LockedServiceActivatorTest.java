package dev.dlock.integration;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.LockClient;
import dev.dlock.testsupport.RedisProcess;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.integration.config.EnableIntegration;
import org.springframework.integration.dsl.IntegrationFlow;
import org.springframework.integration.handler.advice.LockRequestHandlerAdvice;
import org.springframework.messaging.Message;
import org.springframework.messaging.MessageChannel;
import org.springframework.messaging.support.MessageBuilder;

/**
 * The pattern Spring Integration users lock with: a service activator advised by {@link
 * LockRequestHandlerAdvice}, keyed by a header, in two applications (two contexts, two clients) sharing one
 * resource. The resource's updates are read-modify-write with a pause in between, so any overlap loses an
 * update; it also records the fencing token each update was made under.
 */
class LockedServiceActivatorTest {
    private static final int THREADS_PER_NODE = 3;
    private static final int MESSAGES_PER_THREAD = 20;
    private static final List<String> ACCOUNTS = List.of("acct-1", "acct-2");

    /** The shared resource: balances updated without any synchronization of its own. */
    static final class Ledger {
        final Map<String, Integer> balances = new ConcurrentHashMap<>();
        final Map<String, Long> lastToken = new ConcurrentHashMap<>();
        final List<String> violations = new CopyOnWriteArrayList<>();

        /** The service activator's method. */
        void credit(Message<?> message, DlockLockRegistry registry) throws InterruptedException {
            String account = (String) message.getHeaders().get("account");
            int before = balances.getOrDefault(account, 0);
            Thread.sleep(1);
            balances.put(account, before + 1);
            long token = registry.currentLease(account)
                    .map(dev.dlock.Lease::fencingToken)
                    .orElse(-1L);
            Long previous = lastToken.put(account, token);
            if (token < 0 || (previous != null && previous >= token)) {
                violations.add(account + ": write under token " + token + " after " + previous);
            }
        }
    }

    @Configuration
    @EnableIntegration
    static class Application {
        @Bean
        DlockLockRegistry lockRegistry(LockClient client) {
            return new DlockLockRegistry(client, Duration.ofSeconds(10));
        }

        @Bean
        IntegrationFlow creditFlow(DlockLockRegistry lockRegistry, Ledger ledger) {
            Function<Message<?>, Object> account = m -> m.getHeaders().get("account");
            return IntegrationFlow.from("credits")
                    .handle(
                            m -> {
                                try {
                                    ledger.credit(m, lockRegistry);
                                } catch (InterruptedException e) {
                                    Thread.currentThread().interrupt();
                                }
                            },
                            e -> e.advice(new LockRequestHandlerAdvice(lockRegistry, account)))
                    .get();
        }
    }

    @Test
    void twoApplicationsNeverOverlapOnAnAccountOnTheMemoryStore() throws Exception {
        runOn("mem:si-activator");
    }

    @Test
    void twoApplicationsNeverOverlapOnAnAccountOnRedis() throws Exception {
        try (RedisProcess redis = RedisProcess.start()) {
            runOn(redis.uri() + "?unsafeGrantAfterRestart=true");
        }
    }

    private void runOn(String uri) throws Exception {
        String namespace = "activator-" + UUID.randomUUID().toString().substring(0, 8);
        Ledger ledger = new Ledger();
        List<AnnotationConfigApplicationContext> apps = new ArrayList<>();
        List<LockClient> clients = new ArrayList<>();
        ExecutorService senders = Executors.newFixedThreadPool(2 * THREADS_PER_NODE);
        try {
            for (int i = 0; i < 2; i++) {
                LockClient client = LockClient.builder(uri).namespace(namespace).build();
                clients.add(client);
                AnnotationConfigApplicationContext app = new AnnotationConfigApplicationContext();
                app.registerBean(LockClient.class, () -> client);
                app.registerBean(Ledger.class, () -> ledger);
                app.register(Application.class);
                app.refresh();
                apps.add(app);
            }
            List<Future<?>> sent = new ArrayList<>();
            for (AnnotationConfigApplicationContext app : apps) {
                MessageChannel credits = app.getBean("credits", MessageChannel.class);
                for (int t = 0; t < THREADS_PER_NODE; t++) {
                    sent.add(senders.submit(() -> {
                        for (int m = 0; m < MESSAGES_PER_THREAD; m++) {
                            credits.send(MessageBuilder.withPayload(m)
                                    .setHeader("account", ACCOUNTS.get(m % ACCOUNTS.size()))
                                    .build());
                        }
                    }));
                }
            }
            for (Future<?> f : sent) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            senders.shutdownNow();
            apps.forEach(AnnotationConfigApplicationContext::close);
            clients.forEach(LockClient::close);
        }
        int perAccount = 2 * THREADS_PER_NODE * MESSAGES_PER_THREAD / ACCOUNTS.size();
        assertThat(ledger.balances)
                .containsExactlyInAnyOrderEntriesOf(Map.of("acct-1", perAccount, "acct-2", perAccount));
        assertThat(ledger.violations).isEmpty();
    }
}
