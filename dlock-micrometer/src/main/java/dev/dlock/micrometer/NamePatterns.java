package dev.dlock.micrometer;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * Maps lock names to a bounded set of tag values: the first configured pattern that matches ({@code *}
 * matches any characters), or {@code other}.
 *
 * <p>Concurrency: immutable.
 */
final class NamePatterns {
    static final String OTHER = "other";

    private final List<String> patterns;
    private final List<Pattern> compiled;

    NamePatterns(List<String> patterns) {
        List<String> kept = new ArrayList<>();
        List<Pattern> regexes = new ArrayList<>();
        for (String pattern : patterns) {
            if (pattern == null || pattern.isBlank()) {
                throw new IllegalArgumentException(
                        "name patterns must not contain an empty pattern (dlock.metrics.name-patterns in Spring Boot)");
            }
            kept.add(pattern);
            regexes.add(toRegex(pattern));
        }
        this.patterns = List.copyOf(kept);
        this.compiled = List.copyOf(regexes);
    }

    private static Pattern toRegex(String glob) {
        StringBuilder regex = new StringBuilder();
        int start = 0;
        for (int star = glob.indexOf('*'); star >= 0; star = glob.indexOf('*', start)) {
            regex.append(Pattern.quote(glob.substring(start, star))).append(".*");
            start = star + 1;
        }
        regex.append(Pattern.quote(glob.substring(start)));
        return Pattern.compile(regex.toString(), Pattern.DOTALL);
    }

    /** Every tag value this can produce: the patterns, then {@code other}. */
    List<String> tags() {
        List<String> tags = new ArrayList<>(patterns);
        tags.add(OTHER);
        return tags;
    }

    /** The tag value of a lock name. */
    String tagOf(String name) {
        for (int i = 0; i < compiled.size(); i++) {
            if (compiled.get(i).matcher(name).matches()) {
                return patterns.get(i);
            }
        }
        return OTHER;
    }
}
