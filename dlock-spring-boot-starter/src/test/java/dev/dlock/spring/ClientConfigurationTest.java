package dev.dlock.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.dlock.Lease;
import dev.dlock.LockBackendException;
import dev.dlock.LockClient;
import dev.dlock.LockListener;
import dev.dlock.mem.MemoryBackendProvider;
import dev.dlock.micrometer.MicrometerLockListener;
import dev.dlock.spi.LockBackendFactory;
import dev.dlock.tck.FreezableBackend;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.core.io.support.SpringFactoriesLoader;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * How the {@link LockClient} bean is made: which store is chosen, what the messages say when none or
 * several qualify, listeners and customizers, the startup check, the switches, the failure analysis and
 * the generated configuration metadata. Runs on the in-memory store; the per-store suites cover the rest.
 */
class ClientConfigurationTest {
    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(
                    DlockAutoConfiguration.class,
                    DlockMetricsAutoConfiguration.class,
                    DlockActuatorAutoConfiguration.class));

    private static String failureMessages(AssertableApplicationContext context) {
        StringBuilder all = new StringBuilder();
        for (Throwable t = context.getStartupFailure(); t != null; t = t.getCause()) {
            all.append(t.getMessage()).append('\n');
        }
        return all.toString();
    }

    private static LockBackendFactory memory(String name) {
        return new MemoryBackendProvider().factory("mem:" + name);
    }

    @Test
    void withoutAnyStoreTheStartFailsSayingWhatToSet() {
        runner.run(context -> {
            assertThat(context).hasFailed();
            assertThat(failureMessages(context))
                    .contains("no lock store is configured")
                    .contains("dlock.uri");
        });
    }

    @Test
    void aLockBackendFactoryBeanIsUsedWhenNoUriIsSet() {
        runner.withBean("locksStore", LockBackendFactory.class, () -> memory("factory-bean"))
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    LockClient client = context.getBean(LockClient.class);
                    try (LockClient other =
                            LockClient.builder(memory("factory-bean")).build()) {
                        try (Lease lease = client.lock("from-factory").acquire(Duration.ofSeconds(1))) {
                            assertThat(other.describe("from-factory")).hasSize(1);
                        }
                    }
                    assertThat(context.getBean(DlockStore.class).description())
                            .isEqualTo("LockBackendFactory bean 'locksStore'");
                });
    }

    @Test
    void twoFactoryBeansAreAnError() {
        runner.withBean("a", LockBackendFactory.class, () -> memory("a"))
                .withBean("b", LockBackendFactory.class, () -> memory("b"))
                .run(context ->
                        assertThat(failureMessages(context)).contains("several LockBackendFactory beans exist [a, b]"));
    }

    @Test
    void anUnknownBackendNameIsAnError() {
        runner.withPropertyValues("dlock.backend=redis").run(context -> assertThat(failureMessages(context))
                .contains("dlock.backend=redis but no such store client qualifies"));
    }

    @Test
    void whenSeveralApplicationStoresQualifyDlockBackendChooses() throws Exception {
        String prefix = "choice_" + Long.toHexString(System.nanoTime()) + "_";
        ApplicationContextRunner both = runner.withBean(
                        LettuceConnectionFactory.class,
                        () -> new LettuceConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", 1)))
                .withBean(DataSource.class, () -> {
                    PGSimpleDataSource postgres = new PGSimpleDataSource();
                    postgres.setUrl("jdbc:postgresql://127.0.0.1:5432/test");
                    postgres.setUser("postgres");
                    return postgres;
                })
                .withPropertyValues(
                        "dlock.operation-timeout=1s",
                        "dlock.jdbc.table-prefix=" + prefix,
                        "dlock.jdbc.create-tables=true");
        both.run(context -> assertThat(failureMessages(context))
                .contains("several lock stores qualify (jdbc: jdbc:postgresql://127.0.0.1:5432/test (the application's"
                        + " DataSource, tables " + prefix + "*), redis: redis://127.0.0.1:1/0 (the application's"
                        + " LettuceConnectionFactory))")
                .contains("dlock.backend=jdbc|redis"));
        both.withPropertyValues("dlock.backend=redis").run(context -> assertThat(failureMessages(context))
                .contains("dlock could not open the lock store at redis://127.0.0.1:1/0"));
        try {
            both.withPropertyValues("dlock.backend=jdbc").run(context -> {
                assertThat(context).hasNotFailed();
                assertThat(context.getBean(DlockStore.class).description())
                        .startsWith("jdbc:postgresql://127.0.0.1:5432/test");
                try (Lease lease =
                        context.getBean(LockClient.class).lock("chosen").acquire(Duration.ofSeconds(5))) {
                    assertThat(lease.fencingToken()).isPositive();
                }
            });
        } finally {
            try (Connection c = DriverManager.getConnection("jdbc:postgresql://127.0.0.1:5432/test", "postgres", "");
                    Statement st = c.createStatement()) {
                st.execute("DROP TABLE IF EXISTS " + prefix + "locks");
                st.execute("DROP TABLE IF EXISTS " + prefix + "entries");
            }
        }
    }

    @Test
    void theApplicationsOwnClientIsKept() {
        LockClient own = LockClient.builder("mem:own-client").namespace("own").build();
        runner.withBean(LockClient.class, () -> own).run(context -> {
            assertThat(context.getBean(LockClient.class)).isSameAs(own);
            assertThat(context).doesNotHaveBean(DlockStore.class);
        });
        own.close();
    }

    @Test
    void anUnknownSchemeFailsWithAMessageThatMasksPasswords() {
        runner.withPropertyValues("dlock.uri=nosuch://app:s3cret@host:1/?password=hunter2")
                .run(context -> {
                    String messages = failureMessages(context);
                    assertThat(messages)
                            .contains("no dlock backend on the class path accepts URIs of scheme 'nosuch:'")
                            .contains("nosuch://app:****@host:1/?password=****")
                            .contains("dlock.uri")
                            .doesNotContain("s3cret")
                            .doesNotContain("hunter2");
                });
    }

    @Test
    void passwordsAreMaskedInStoreDescriptions() {
        assertThat(DlockStore.mask("redis://:pw@cache:6379/0")).isEqualTo("redis://:****@cache:6379/0");
        assertThat(DlockStore.mask("redis://user:pw@cache")).isEqualTo("redis://user:****@cache");
        assertThat(DlockStore.mask("jdbc:postgresql://db:5432/app?user=u&password=pw&ssl=true"))
                .isEqualTo("jdbc:postgresql://db:5432/app?user=u&password=****&ssl=true");
        assertThat(DlockStore.mask("redis://cache:6379")).isEqualTo("redis://cache:6379");
        assertThat(DlockStore.mask("mem:")).isEqualTo("mem:");
    }

    @Test
    void invalidOptionsFailTheStartNamingTheOption() {
        runner.withPropertyValues("dlock.uri=mem:", "dlock.namespace=has space")
                .run(context -> assertThat(failureMessages(context)).contains("namespace"));
        runner.withPropertyValues("dlock.uri=mem:", "dlock.local-queue-limit=0")
                .run(context -> assertThat(failureMessages(context)).contains("localQueueLimit"));
    }

    @Test
    void listenerBeansAndMetricsBothHearEveryEventAndCustomizersRun() {
        List<String> heard = new CopyOnWriteArrayList<>();
        AtomicInteger customized = new AtomicInteger();
        runner.withPropertyValues("dlock.uri=mem:listeners")
                .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
                .withBean(LockListener.class, () -> new LockListener() {
                    @Override
                    public void acquired(String name, Duration waited) {
                        heard.add("acquired " + name);
                    }

                    @Override
                    public void released(String name, Duration held) {
                        heard.add("released " + name);
                    }
                })
                .withBean(LockClientBuilderCustomizer.class, () -> builder -> customized.incrementAndGet())
                .run(context -> {
                    LockClient client = context.getBean(LockClient.class);
                    client.lock("heard").acquire(Duration.ofSeconds(1)).close();
                    // events reach listeners on the client's listener thread
                    MeterRegistry registry = context.getBean(MeterRegistry.class);
                    await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
                        assertThat(heard).containsExactly("acquired heard", "released heard");
                        assertThat(registry.get("dlock.held")
                                        .tag("name", "other")
                                        .timer()
                                        .count())
                                .isEqualTo(1);
                    });
                    assertThat(customized).hasValue(1);
                });
    }

    @Test
    void withoutTheStartupCheckTheApplicationStartsAndReportsTheStoreDown() {
        runner.withPropertyValues(
                        "dlock.uri=mem:unchecked", "dlock.startup-check=false", "dlock.operation-timeout=200ms")
                .withBean(
                        LockClientBuilderCustomizer.class,
                        () -> builder -> builder.backend(builder.backend().andThen(backend -> {
                            FreezableBackend frozen = new FreezableBackend(backend);
                            frozen.freeze();
                            return frozen;
                        })))
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    HealthIndicator health = context.getBean("dlockHealthIndicator", HealthIndicator.class);
                    assertThat(health.health().getStatus()).isEqualTo(Status.DOWN);
                    assertThat(health.health().getDetails()).containsEntry("store", "mem:unchecked");
                });
    }

    @Test
    void partsCanBeSwitchedOff() {
        runner.withPropertyValues(
                        "dlock.uri=mem:switches",
                        "dlock.metrics.enabled=false",
                        "management.health.dlock.enabled=false")
                .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
                .run(context -> {
                    assertThat(context).hasSingleBean(LockClient.class);
                    assertThat(context).doesNotHaveBean(MicrometerLockListener.class);
                    assertThat(context).doesNotHaveBean(DlockHealthIndicator.class);
                });
    }

    @Test
    void theFailureAnalyzerIsRegisteredAndSaysWhatToDo() {
        // Others need constructor arguments this test does not give; only ours matters here.
        List<FailureAnalyzer> analyzers = SpringFactoriesLoader.forDefaultResourceLocation()
                .load(
                        FailureAnalyzer.class,
                        null,
                        SpringFactoriesLoader.FailureHandler.handleMessage((message, failure) -> {}));
        FailureAnalyzer ours = analyzers.stream()
                .filter(DlockFailureAnalyzer.class::isInstance)
                .findFirst()
                .orElseThrow();
        FailureAnalysis analysis = ours.analyze(new IllegalStateException(
                "wrapped", new LockBackendException("the lock store at redis://cache:6379 did not answer")));
        assertThat(analysis.getDescription()).contains("redis://cache:6379");
        assertThat(analysis.getAction()).contains("dlock.startup-check=false");
    }

    @Test
    void configurationMetadataIsGenerated() throws Exception {
        try (InputStream in = getClass().getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
            assertThat(in).as("metadata on the class path").isNotNull();
            String json = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            for (String property : List.of(
                    "dlock.uri",
                    "dlock.backend",
                    "dlock.namespace",
                    "dlock.lease-time",
                    "dlock.wait-time",
                    "dlock.operation-timeout",
                    "dlock.renewal",
                    "dlock.local-queue-limit",
                    "dlock.startup-check",
                    "dlock.metrics.name-patterns",
                    "dlock.aop.order")) {
                assertThat(json).contains("\"name\": \"" + property + "\"");
            }
            assertThat(json).contains("How many callers of this instance may wait for one lock name at once");
            assertThat(json).contains("\"value\": \"redis\"");
        }
    }
}
