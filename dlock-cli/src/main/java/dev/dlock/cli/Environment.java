package dev.dlock.cli;

import java.io.InputStream;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;

/**
 * What a command may read from the world outside its arguments: environment variables, system properties,
 * the home directory, the standard streams and whether a person is at a terminal. Tests pass their own, so
 * that nothing touches the real user's configuration or state.
 *
 * <p>Directories: the config directory is {@code $DLOCK_CONFIG_DIR}, else the system property {@code
 * dlock.config.dir}, else {@code $XDG_CONFIG_HOME/dlock}, else {@code ~/.config/dlock}. The state directory
 * (the local server's data, port and log) is {@code $DLOCK_STATE_DIR}, else {@code dlock.state.dir}, else
 * {@code $XDG_STATE_HOME/dlock}, else {@code ~/.local/state/dlock}.
 */
record Environment(
        Map<String, String> variables,
        Properties properties,
        Path home,
        InputStream in,
        PrintStream out,
        PrintStream err,
        boolean interactive) {

    /**
     * Checks the components.
     *
     * @param variables environment variables
     * @param properties system properties
     * @param home the user's home directory
     * @param in standard input
     * @param out standard output
     * @param err standard error
     * @param interactive whether a person is at a terminal (live status lines, prompts)
     */
    Environment {
        variables = Map.copyOf(variables);
        Objects.requireNonNull(properties, "properties");
        Objects.requireNonNull(home, "home");
        Objects.requireNonNull(in, "in");
        Objects.requireNonNull(out, "out");
        Objects.requireNonNull(err, "err");
    }

    /** The real process environment. */
    static Environment system() {
        return new Environment(
                System.getenv(),
                System.getProperties(),
                Path.of(System.getProperty("user.home")),
                System.in,
                System.out,
                System.err,
                System.console() != null);
    }

    /** An environment variable, or null when unset or empty. */
    String variable(String name) {
        String value = variables.get(name);
        return value == null || value.isBlank() ? null : value;
    }

    /** The directory holding {@code config.properties}. */
    Path configDir() {
        return directory("DLOCK_CONFIG_DIR", "dlock.config.dir", "XDG_CONFIG_HOME", ".config");
    }

    /** The directory holding the local server's data, port file and log. */
    Path stateDir() {
        return directory("DLOCK_STATE_DIR", "dlock.state.dir", "XDG_STATE_HOME", ".local/state");
    }

    private Path directory(String variable, String property, String xdgVariable, String homeRelative) {
        String explicit = variable(variable);
        if (explicit != null) {
            return Path.of(explicit);
        }
        String fromProperty = properties.getProperty(property);
        if (fromProperty != null && !fromProperty.isBlank()) {
            return Path.of(fromProperty);
        }
        String xdg = variable(xdgVariable);
        return (xdg != null ? Path.of(xdg) : home.resolve(homeRelative)).resolve("dlock");
    }
}
