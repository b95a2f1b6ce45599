package dev.dlock.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine;

/** Argument parsing: {@link Main#fromArgs(String...)} without running anything. */
class MainTest {
    @TempDir
    Path home;

    TestEnvironment env;

    @BeforeEach
    void setUp() {
        env = new TestEnvironment(home);
    }

    private <T> T parse(Class<T> type, String... args) {
        Plan plan = env.parse(args);
        assertThat(plan)
                .as("plan for %s (stderr: %s)", List.of(args), env.err())
                .isInstanceOf(type);
        return type.cast(plan);
    }

    private void assertUsageError(String expectedMessage, String... args) {
        Plan plan = env.parse(args);
        assertThat(plan).isNotInstanceOf(RunCommand.class);
        assertThat(plan.execute()).isEqualTo(ExitCodes.USAGE);
        assertThat(env.err()).contains(expectedMessage).contains("Usage: dlock");
        assertThat(env.out()).isEmpty();
    }

    @Test
    void runWithDefaults() {
        RunCommand run = parse(RunCommand.class, "run", "nightly-report", "--", "make", "report", "--fast");
        assertThat(run.name).isEqualTo("nightly-report");
        assertThat(run.command).containsExactly("make", "report", "--fast");
        assertThat(run.waitTime).isNull();
        assertThat(run.nonblock).isFalse();
        assertThat(run.effectiveWait()).isEqualTo(RunCommand.FOREVER);
        assertThat(run.leaseTime).isEqualTo(Duration.ofSeconds(30));
        assertThat(run.grace).isEqualTo(Duration.ofSeconds(10));
        assertThat(run.backend.backend).isNull();
        assertThat(run.backend.namespace).isEqualTo("dlock");
    }

    @Test
    void runWithEveryOption() {
        RunCommand run = parse(
                RunCommand.class,
                "run",
                "job",
                "--wait",
                "10s",
                "--lease",
                "2m",
                "--grace",
                "500ms",
                "--backend",
                "redis://localhost:6379",
                "--namespace",
                "billing",
                "--",
                "sh",
                "-c",
                "echo hi");
        assertThat(run.waitTime).isEqualTo(Duration.ofSeconds(10));
        assertThat(run.effectiveWait()).isEqualTo(Duration.ofSeconds(10));
        assertThat(run.leaseTime).isEqualTo(Duration.ofMinutes(2));
        assertThat(run.grace).isEqualTo(Duration.ofMillis(500));
        assertThat(run.backend.backend).isEqualTo("redis://localhost:6379");
        assertThat(run.backend.namespace).isEqualTo("billing");
        assertThat(run.command).containsExactly("sh", "-c", "echo hi");
    }

    @Test
    void shortOptionsAndEqualsSyntax() {
        RunCommand run = parse(RunCommand.class, "run", "-w", "1.5s", "--lease=45s", "job", "--", "true");
        assertThat(run.waitTime).isEqualTo(Duration.ofMillis(1500));
        assertThat(run.leaseTime).isEqualTo(Duration.ofSeconds(45));
        RunCommand nonblock = parse(RunCommand.class, "run", "-n", "job", "--", "true");
        assertThat(nonblock.nonblock).isTrue();
        assertThat(nonblock.effectiveWait()).isZero();
    }

    @Test
    void commandAfterDoubleDashKeepsItsOwnOptions() {
        RunCommand run = parse(RunCommand.class, "run", "job", "--", "ls", "--wait", "-n", "--", "x");
        assertThat(run.command).containsExactly("ls", "--wait", "-n", "--", "x");
        assertThat(run.waitTime).isNull();
        assertThat(run.nonblock).isFalse();
    }

    @Test
    void waitAndNonblockExcludeEachOther() {
        assertUsageError("--wait and --nonblock exclude each other", "run", "job", "--wait", "5s", "-n", "--", "true");
    }

    @Test
    void runNeedsNameAndCommand() {
        assertUsageError("Missing required parameters: 'NAME', 'CMD'", "run");
        env = new TestEnvironment(home);
        assertUsageError("Missing required parameter: 'CMD'", "run", "job");
        env = new TestEnvironment(home);
        assertUsageError("NAME must not be empty", "run", "", "--", "true");
    }

    @Test
    void badDurationsAndUnknownOptions() {
        assertUsageError("'10x' is not a duration", "run", "job", "--wait", "10x", "--", "true");
        env = new TestEnvironment(home);
        assertUsageError("'-5s' is not a duration", "run", "job", "--wait", "-5s", "--", "true");
        env = new TestEnvironment(home);
        assertUsageError("--lease must be at least 100ms", "run", "job", "--lease", "5ms", "--", "true");
        env = new TestEnvironment(home);
        assertUsageError("--min-hold must be at most 365 days", "run", "job", "--min-hold", "400d", "--", "true");
        env = new TestEnvironment(home);
        assertUsageError("Unknown option: '--bogus'", "run", "job", "--bogus", "--", "true");
        env = new TestEnvironment(home);
        assertUsageError("Unmatched argument", "frobnicate");
        env = new TestEnvironment(home);
        assertUsageError("Missing command", "server");
        env = new TestEnvironment(home);
        assertUsageError("Missing command");
    }

    @ParameterizedTest
    @CsvSource({
        "500ms, PT0.5S",
        "10s, PT10S",
        "10, PT10S",
        "1.5s, PT1.5S",
        "2m, PT2M",
        "1h, PT1H",
        "1d, PT24H",
        "0, PT0S",
        "PT3S, PT3S",
        "' 250MS ', PT0.25S"
    })
    void durations(String text, String iso) {
        assertThat(Durations.parse(text)).isEqualTo(Duration.parse(iso));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "s", "ten seconds", "-1s", "5 weeks", "1e3s", "PT-3S", "999999999999999h"})
    void badDurations(String text) {
        assertThatThrownBy(() -> Durations.parse(text)).isInstanceOf(CommandLine.TypeConversionException.class);
    }

    @Test
    void formatsDurationsShortly() {
        assertThat(Durations.format(Duration.ofMillis(850))).isEqualTo("850ms");
        assertThat(Durations.format(Duration.ofMillis(3_240))).isEqualTo("3.2s");
        assertThat(Durations.format(Duration.ofSeconds(125))).isEqualTo("2m05s");
        assertThat(Durations.format(Duration.ofMinutes(62))).isEqualTo("1h02m");
    }

    @Test
    void helpAndVersionExitZero() {
        Plan help = env.parse("--help");
        assertThat(help.execute()).isZero();
        assertThat(env.out()).contains("Usage: dlock", "run", "status", "ls", "release", "server", "demo");
        assertThat(env.out()).doesNotContain("server-process").doesNotContain("worker");
        env = new TestEnvironment(home);
        assertThat(env.parse("run", "--help").execute()).isZero();
        assertThat(env.out()).contains("dlock run NAME", "--nonblock", "DLOCK_FENCING_TOKEN");
        env = new TestEnvironment(home);
        assertThat(env.parse("--version").execute()).isZero();
        assertThat(env.out()).startsWith("dlock ");
    }

    @Test
    void statusLsRelease() {
        StatusCommand status = parse(StatusCommand.class, "status", "job", "--backend", "mem:x");
        assertThat(status.name).isEqualTo("job");
        assertThat(status.backend.backend).isEqualTo("mem:x");
        ListCommand all = parse(ListCommand.class, "ls");
        assertThat(all.prefix).isEmpty();
        ListCommand some = parse(ListCommand.class, "ls", "billing:");
        assertThat(some.prefix).isEqualTo("billing:");
        ReleaseCommand release = parse(ReleaseCommand.class, "release", "--force", "job");
        assertThat(release.force).isTrue();
        assertThat(release.yes).isFalse();
        assertThat(parse(ReleaseCommand.class, "release", "--force", "--yes", "job").yes)
                .isTrue();
        env = new TestEnvironment(home);
        assertUsageError("Missing required option: '--force'", "release", "job");
        env = new TestEnvironment(home);
        assertUsageError("Missing required parameter: 'NAME'", "status");
    }

    @Test
    void serverSubcommands() {
        parse(ServerCommand.Start.class, "server", "start");
        parse(ServerCommand.Stop.class, "server", "stop");
        parse(ServerCommand.Status.class, "server", "status");
        assertUsageError("Unmatched argument", "server", "restart");
    }

    @Test
    void demoDefaultsAndOptions() {
        DemoCommand demo = parse(DemoCommand.class, "demo");
        assertThat(demo.stock).isEqualTo(100);
        assertThat(demo.buyers).isEqualTo(2000);
        assertThat(demo.workers).isEqualTo(4);
        assertThat(demo.threads).isEqualTo(8);
        assertThat(demo.think).isEqualTo(Duration.ofMillis(1));
        assertThat(demo.backends).isEmpty();
        assertThat(demo.database).isNull();
        assertThat(demo.strategies).isEqualTo(EnumSet.allOf(FlashSale.Strategy.class));

        DemoCommand custom = parse(
                DemoCommand.class,
                "demo",
                "--stock",
                "20",
                "--buyers",
                "200",
                "--workers",
                "2",
                "--threads",
                "3",
                "--think",
                "0",
                "--strategy",
                "optimistic,pessimistic",
                "--database",
                "jdbc:postgresql://db/shop");
        assertThat(custom.stock).isEqualTo(20);
        assertThat(custom.buyers).isEqualTo(200);
        assertThat(custom.workers).isEqualTo(2);
        assertThat(custom.threads).isEqualTo(3);
        assertThat(custom.think).isZero();
        assertThat(custom.database).isEqualTo("jdbc:postgresql://db/shop");
        assertThat(custom.strategies).containsExactly(FlashSale.Strategy.OPTIMISTIC, FlashSale.Strategy.PESSIMISTIC);
    }

    @Test
    void demoRefusesBadNumbersAndBackends() {
        assertUsageError("--stock must be at least 1", "demo", "--stock", "0");
        env = new TestEnvironment(home);
        assertUsageError("--workers (5) must not exceed --buyers (4)", "demo", "--buyers", "4", "--workers", "5");
        env = new TestEnvironment(home);
        assertUsageError("mem: lives in one process", "demo", "--backend", "mem:");
        env = new TestEnvironment(home);
        assertUsageError("no lock backend in this build accepts it", "demo", "--backend", "nosuch://x");
        env = new TestEnvironment(home);
        assertUsageError("expected one of [NONE, OPTIMISTIC, PESSIMISTIC, DLOCK]", "demo", "--strategy", "magic");
        env = new TestEnvironment(home);
        assertUsageError("an in-memory H2 database lives in one process", "demo", "--database", "jdbc:h2:mem:x");
    }

    @Test
    void backendComesFromOptionThenVariableThenConfigFileThenLocalServer() throws Exception {
        Path config = home.resolve(".config/dlock/config.properties");
        Files.createDirectories(config.getParent());
        Files.writeString(config, "# team store\nbackend = zookeeper://zk1:2181\n");
        env.variables.put("DLOCK_BACKEND", "redis://from-env:6379");

        BackendOption.Choice fromOption = parse(RunCommand.class, "run", "--backend", "mem:opt", "x", "--", "true")
                .backend
                .choice();
        assertThat(fromOption).isEqualTo(new BackendOption.Choice("mem:opt", "--backend"));

        BackendOption.Choice fromEnv =
                parse(RunCommand.class, "run", "x", "--", "true").backend.choice();
        assertThat(fromEnv).isEqualTo(new BackendOption.Choice("redis://from-env:6379", "$DLOCK_BACKEND"));

        env.variables.remove("DLOCK_BACKEND");
        BackendOption.Choice fromFile =
                parse(StatusCommand.class, "status", "x").backend.choice();
        assertThat(fromFile).isEqualTo(new BackendOption.Choice("zookeeper://zk1:2181", config.toString()));

        Files.writeString(config, "namespace=other\n");
        BackendOption.Choice embedded = parse(ListCommand.class, "ls").backend.choice();
        assertThat(embedded.embedded()).isTrue();
        Files.delete(config);
        assertThat(parse(ListCommand.class, "ls").backend.choice().embedded()).isTrue();
    }

    @Test
    void configAndStateDirectoriesAreOverridable() {
        Environment plain = env.build();
        assertThat(plain.configDir()).isEqualTo(home.resolve(".config/dlock"));
        assertThat(plain.stateDir()).isEqualTo(home.resolve(".local/state/dlock"));

        env.variables.put("XDG_CONFIG_HOME", "/xdg/config");
        env.variables.put("XDG_STATE_HOME", "/xdg/state");
        assertThat(env.build().configDir()).isEqualTo(Path.of("/xdg/config/dlock"));
        assertThat(env.build().stateDir()).isEqualTo(Path.of("/xdg/state/dlock"));

        env.properties.setProperty("dlock.config.dir", "/prop/config");
        env.properties.setProperty("dlock.state.dir", "/prop/state");
        assertThat(env.build().configDir()).isEqualTo(Path.of("/prop/config"));
        assertThat(env.build().stateDir()).isEqualTo(Path.of("/prop/state"));

        env.variables.put("DLOCK_CONFIG_DIR", "/env/config");
        env.variables.put("DLOCK_STATE_DIR", "/env/state");
        assertThat(env.build().configDir()).isEqualTo(Path.of("/env/config"));
        assertThat(env.build().stateDir()).isEqualTo(Path.of("/env/state"));
    }

    @Test
    void unreadableConfigFileIsReportedByName() throws Exception {
        Path config = home.resolve(".config/dlock/config.properties");
        Files.createDirectories(config);
        StatusCommand status = parse(StatusCommand.class, "status", "x");
        assertThat(status.backend.choice().embedded()).isTrue(); // a directory is not a config file
        Files.delete(config);
        Files.writeString(config, "backend=\\uZZZZ\n");
        assertThat(status.execute()).isEqualTo(ExitCodes.USAGE);
        assertThat(env.err()).contains("cannot read " + config);
    }

    @Test
    void demoJdbcUris() {
        assertThat(DemoCommand.withCreateTables("jdbc:h2:tcp://h/mem:x;LOCK_TIMEOUT=1"))
                .isEqualTo("jdbc:h2:tcp://h/mem:x;LOCK_TIMEOUT=1;dlock.createTables=true");
        assertThat(DemoCommand.withCreateTables("jdbc:postgresql://h/db?user=u"))
                .isEqualTo("jdbc:postgresql://h/db?user=u&dlock.createTables=true");
        assertThat(DemoCommand.withCreateTables("jdbc:mariadb://h/db"))
                .isEqualTo("jdbc:mariadb://h/db?dlock.createTables=true");
        assertThat(DemoCommand.withCreateTables("jdbc:mariadb://h/db?dlock.createTables=false"))
                .isEqualTo("jdbc:mariadb://h/db?dlock.createTables=false");
        assertThat(DemoCommand.withoutDlockParameters(
                        "jdbc:postgresql://h/db?dlock.tablePrefix=x_&user=u&dlock.createTables=true"))
                .isEqualTo("jdbc:postgresql://h/db?user=u");
        assertThat(DemoCommand.withoutDlockParameters("jdbc:h2:tcp://h/mem:x;dlock.createTables=true;LOCK_TIMEOUT=1"))
                .isEqualTo("jdbc:h2:tcp://h/mem:x;LOCK_TIMEOUT=1");
        assertThat(DemoCommand.withoutDlockParameters("jdbc:mariadb://h/db?dlock.threads=2"))
                .isEqualTo("jdbc:mariadb://h/db");
    }

    @Test
    void labelsBackends() {
        assertThat(DemoCommand.label("zookeeper://127.0.0.1:2181")).isEqualTo("zookeeper");
        assertThat(DemoCommand.label("jdbc:postgresql://127.0.0.1/test")).isEqualTo("jdbc:postgresql");
        assertThat(DemoCommand.label("redis://localhost")).isEqualTo("redis");
        assertThat(Holders.process("1234@host#abcdef")).isEqualTo("1234@host");
        assertThat(Holders.process("plain")).isEqualTo("plain");
    }
}
