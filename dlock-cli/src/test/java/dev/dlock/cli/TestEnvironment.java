package dev.dlock.cli;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;

/** An {@link Environment} for tests: temp home, chosen variables, captured output, given input. */
final class TestEnvironment {
    final Map<String, String> variables = new HashMap<>();
    final Properties properties = new Properties();
    final Path home;
    final ByteArrayOutputStream out = new ByteArrayOutputStream();
    final ByteArrayOutputStream err = new ByteArrayOutputStream();
    String input = "";
    boolean interactive;

    TestEnvironment(Path home) {
        this.home = home;
    }

    Environment build() {
        return new Environment(
                variables,
                properties,
                home,
                new ByteArrayInputStream(input.getBytes(StandardCharsets.UTF_8)),
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8),
                interactive);
    }

    Plan parse(String... args) {
        return Main.fromArgs(build(), args);
    }

    String out() {
        return out.toString(StandardCharsets.UTF_8);
    }

    String err() {
        return err.toString(StandardCharsets.UTF_8);
    }
}
