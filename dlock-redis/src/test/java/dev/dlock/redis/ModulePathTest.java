package dev.dlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dlock.LockClient;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * dlock on the module path: the application in src/test/modulepath (a module requiring only
 * {@code dev.dlock.core}) is compiled and run as a module against this module's classes and its run-time
 * dependencies (target/module-path.txt, written by maven-dependency-plugin). It finds the memory and the
 * Redis backends through their {@code provides} clauses, takes and releases a lock on each (Redis: a
 * server this test starts), and is refused when it reaches into the engine. A source that names the engine
 * does not compile. The other tests run on the class path.
 */
class ModulePathTest {
    private static final Path APP = Path.of("src/test/modulepath");

    @Test
    void anApplicationModuleLocksThroughTheProvidedBackendsAndCannotReachTheEngine(@TempDir Path dir) throws Exception {
        Path classes = dir.resolve("classes");
        assertThat(javac(classes, sources(APP))).isEmpty();
        try (RedisServer redis = RedisServer.start()) {
            Process app = new ProcessBuilder(
                            Path.of(System.getProperty("java.home"), "bin", "java")
                                    .toString(),
                            "--module-path",
                            classes + java.io.File.pathSeparator + modulePath(),
                            "--module",
                            "dev.dlock.modulepath/dev.dlock.modulepath.ModulePathApp",
                            // a fresh server held nothing: no first-grant hold-back
                            "redis://127.0.0.1:" + redis.port() + "?unsafeGrantAfterRestart=true")
                    .redirectErrorStream(true)
                    .start();
            assertThat(app.waitFor(60, TimeUnit.SECONDS))
                    .as("the application ends")
                    .isTrue();
            String output = new String(app.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(output)
                    .as("exit %d", app.exitValue())
                    .contains("ok: backend for mem: comes from dev.dlock.core")
                    .contains("ok: backend for redis: comes from dev.dlock.redis")
                    .contains("ok: redis: released: the other client takes it")
                    .contains("ok: setAccessible refused")
                    .containsPattern("ok: public \\w+\\.\\w+ refused")
                    .contains("all checks passed")
                    .doesNotContain("FAILED");
            assertThat(app.exitValue()).isZero();
        }
    }

    @Test
    void aModuleThatNamesTheEngineDoesNotCompile(@TempDir Path dir) throws Exception {
        String engine = Arrays.stream(LockClient.class.getDeclaredFields())
                .map(field -> field.getType().getName())
                .filter(type -> type.startsWith("dev.dlock.internal"))
                .findFirst()
                .orElseThrow();
        Path reach =
                Files.createDirectories(dir.resolve("src/dev/dlock/modulepath")).resolve("Reach.java");
        Files.writeString(
                reach,
                "package dev.dlock.modulepath;\n\nclass Reach {\n    Class<?> engine = " + engine + ".class;\n}\n");
        List<Path> sources = new ArrayList<>(sources(APP));
        sources.add(reach);

        String errors = javac(dir.resolve("classes"), sources);

        assertThat(errors)
                .contains("Reach.java")
                .contains("is not visible")
                .containsPattern("package dev\\.dlock\\.internal[\\w.]* is declared in module dev\\.dlock\\.core, which"
                        + " does not export it");
    }

    /** Compiles the sources as one module against the module path; returns the compiler's errors. */
    private static String javac(Path out, List<Path> sources) throws IOException {
        List<String> args = new ArrayList<>(List.of("-d", out.toString(), "--module-path", modulePath()));
        sources.forEach(source -> args.add(source.toString()));
        ByteArrayOutputStream errors = new ByteArrayOutputStream();
        try (PrintStream stream = new PrintStream(errors, true, StandardCharsets.UTF_8)) {
            ToolProvider.getSystemJavaCompiler().run(null, stream, stream, args.toArray(String[]::new));
        }
        return errors.toString(StandardCharsets.UTF_8);
    }

    /** This module's classes, then its run-time dependencies (dlock-core, Lettuce, Netty, Reactor). */
    private static String modulePath() throws IOException {
        String dependencies =
                Files.readString(Path.of("target/module-path.txt")).strip();
        return Path.of("target/classes") + java.io.File.pathSeparator + dependencies;
    }

    private static List<Path> sources(Path root) throws IOException {
        try (Stream<Path> files = Files.walk(root)) {
            return files.filter(file -> file.toString().endsWith(".java")).collect(Collectors.toList());
        }
    }
}
