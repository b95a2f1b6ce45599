package dev.dlock.cli;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The command line that starts another JVM running {@link Main} with this JVM's java binary and class path:
 * the shaded jar when run with {@code java -jar}, the test class path in tests. Used for the local server
 * and the demo's worker processes.
 */
final class JavaCommand {
    private JavaCommand() {}

    /** A JVM with the given options (heap size, GC) running {@code Main} with {@code args}. */
    static List<String> forMain(List<String> jvmOptions, String... args) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(jvmOptions);
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(Main.class.getName());
        command.addAll(List.of(args));
        return command;
    }
}
