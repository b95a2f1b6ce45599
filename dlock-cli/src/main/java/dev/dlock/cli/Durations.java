package dev.dlock.cli;

import java.math.BigDecimal;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine;

/**
 * Reads and writes the durations of the command line: a number with a unit, {@code 500ms}, {@code 10s},
 * {@code 1.5s}, {@code 2m}, {@code 1h}, {@code 1d}; a bare number means seconds (as in {@code flock -w}); ISO
 * 8601 ({@code PT10S}) is accepted too. Negative values are refused.
 */
final class Durations implements CommandLine.ITypeConverter<Duration> {
    private static final Pattern SIMPLE = Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*(ms|s|m|h|d)?");

    @Override
    public Duration convert(String value) {
        return parse(value);
    }

    /** Parses a duration, or throws {@link CommandLine.TypeConversionException} naming the problem. */
    static Duration parse(String value) {
        String text = value == null ? "" : value.trim().toLowerCase(Locale.ROOT);
        Matcher m = SIMPLE.matcher(text);
        if (m.matches()) {
            BigDecimal amount = new BigDecimal(m.group(1));
            String unit = m.group(2) == null ? "s" : m.group(2);
            BigDecimal millisPerUnit =
                    switch (unit) {
                        case "ms" -> BigDecimal.ONE;
                        case "s" -> BigDecimal.valueOf(1_000);
                        case "m" -> BigDecimal.valueOf(60_000);
                        case "h" -> BigDecimal.valueOf(3_600_000);
                        default -> BigDecimal.valueOf(86_400_000);
                    };
            BigDecimal millis = amount.multiply(millisPerUnit);
            if (millis.compareTo(BigDecimal.valueOf(Long.MAX_VALUE / 1_000_000)) > 0) {
                throw new CommandLine.TypeConversionException("duration '" + value + "' is too long");
            }
            return Duration.ofNanos(millis.movePointRight(6).longValue());
        }
        if (text.startsWith("pt") || text.startsWith("p")) {
            try {
                Duration d = Duration.parse(value.trim());
                if (d.isNegative()) {
                    throw new CommandLine.TypeConversionException("duration '" + value + "' is negative");
                }
                return d;
            } catch (DateTimeParseException e) {
                // fall through to the common message
            }
        }
        throw new CommandLine.TypeConversionException(
                "'" + value + "' is not a duration: use a number with a unit, e.g. 500ms, 10s, 1.5s, 2m, 1h");
    }

    /** A short human form: {@code 850ms}, {@code 3.2s}, {@code 2m05s}, {@code 1h02m}. */
    static String format(Duration d) {
        long millis = d.toMillis();
        if (millis < 1_000) {
            return millis + "ms";
        }
        if (millis < 60_000) {
            return String.format(Locale.ROOT, "%.1fs", millis / 1000.0);
        }
        long seconds = millis / 1000;
        if (seconds < 3_600) {
            return String.format(Locale.ROOT, "%dm%02ds", seconds / 60, seconds % 60);
        }
        return String.format(Locale.ROOT, "%dh%02dm", seconds / 3600, (seconds % 3600) / 60);
    }
}
