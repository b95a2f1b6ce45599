package dev.dlock.jdbc;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A {@code jdbc:} URI split into the driver's URL and dlock's own parameters.
 *
 * <p>dlock's parameters start with {@code dlock.} and may stand among the URL's query parameters
 * ({@code ?a=b&dlock.tablePrefix=x_}) or, for H2, its {@code ;} settings ({@code ;dlock.createTables=true}).
 * They are removed from the URL handed to the driver: {@code dlock.tablePrefix}, {@code
 * dlock.createTables}, {@code dlock.advisory}, {@code dlock.threads}.
 *
 * @param jdbcUrl the URL for the driver, without dlock's parameters
 * @param dialect the database, by sub-protocol
 * @param options the backend settings
 */
record JdbcUri(String jdbcUrl, Dialect dialect, JdbcOptions options) {
    static JdbcUri parse(String uri) {
        if (uri == null) {
            throw new IllegalArgumentException("JDBC URI must not be null");
        }
        Dialect dialect = Dialect.ofUrl(uri);
        JdbcOptions options = JdbcOptions.DEFAULTS;
        String main = uri;
        String query = null;
        int q = uri.indexOf('?');
        if (q >= 0) {
            main = uri.substring(0, q);
            query = uri.substring(q + 1);
        }
        List<String> kept = new ArrayList<>();
        String[] settings = main.split(";", -1);
        StringBuilder url = new StringBuilder(settings[0]);
        for (int i = 1; i < settings.length; i++) {
            if (isDlock(settings[i])) {
                options = apply(options, settings[i], uri);
            } else {
                url.append(';').append(settings[i]);
            }
        }
        if (query != null) {
            for (String param : query.split("&", -1)) {
                if (isDlock(param)) {
                    options = apply(options, param, uri);
                } else if (!param.isEmpty()) {
                    kept.add(param);
                }
            }
            if (!kept.isEmpty()) {
                url.append('?').append(String.join("&", kept));
            }
        }
        if (options.advisory() && dialect == Dialect.H2) {
            throw new IllegalArgumentException("dlock.advisory needs PostgreSQL or MySQL/MariaDB, not H2: " + uri);
        }
        return new JdbcUri(url.toString(), dialect, options);
    }

    private static boolean isDlock(String param) {
        return param.toLowerCase(Locale.ROOT).startsWith("dlock.");
    }

    private static JdbcOptions apply(JdbcOptions options, String param, String uri) {
        int eq = param.indexOf('=');
        if (eq < 0) {
            throw new IllegalArgumentException("dlock parameter '" + param + "' has no value in " + uri);
        }
        String key = param.substring("dlock.".length(), eq);
        String value = param.substring(eq + 1);
        return switch (key) {
            case "tablePrefix" -> options.withTablePrefix(value);
            case "createTables" -> options.withCreateTables(bool(key, value));
            case "advisory" -> options.withAdvisory(bool(key, value));
            case "threads" -> {
                try {
                    yield options.withThreads(Integer.parseInt(value));
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException("dlock.threads must be a number, got '" + value + "'", e);
                }
            }
            default ->
                throw new IllegalArgumentException("unknown parameter 'dlock." + key
                        + "' (known: dlock.tablePrefix, dlock.createTables, dlock.advisory, dlock.threads)");
        };
    }

    private static boolean bool(String key, String value) {
        if (value.equalsIgnoreCase("true")) {
            return true;
        }
        if (value.equalsIgnoreCase("false")) {
            return false;
        }
        throw new IllegalArgumentException("dlock." + key + " must be true or false, got '" + value + "'");
    }
}
