package dev.dlock.tck;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Keeps the code examples in javadoc compiling and running: each example is a copy of a marked region of
 * a test class, and {@link #check} fails when a copy differs from its region.
 *
 * <p>Java 17's javadoc has no {@code {@snippet}} tag (JEP 413 came with JDK 18), so an example stays a
 * {@code <pre>{@code ...}</pre>} block and is marked with an HTML comment on the line before it, which
 * javadoc passes through unseen:
 *
 * <pre>
 *  * &lt;!-- example: lockclient-basic --&gt;
 *  * &lt;pre&gt;{&#64;code
 *  * try (LockClient client = LockClient.connect("mem:")) { ... }
 *  * }&lt;/pre&gt;
 * </pre>
 *
 * <p>The test class holds the same lines between {@code // example: lockclient-basic} and {@code // end
 * example}, inside a test that runs them against the module's store. Indentation is compared after
 * removing what all lines of a block have in common, so a region may sit at any depth; trailing blanks
 * and blank lines around a block do not count. Every <code>&lt;pre&gt;{&#64;code</code> block of the documented file
 * must be marked, every mark must have its region and every region its mark: an example cannot be added,
 * edited or orphaned without the build noticing.
 */
public final class JavadocExamples {
    private static final Pattern MARK = Pattern.compile("<!--\\s*example:\\s*([A-Za-z0-9-]+)");
    private static final Pattern REGION_START = Pattern.compile("^\\s*// example: ([A-Za-z0-9-]+)\\s*$");
    private static final Pattern REGION_END = Pattern.compile("^\\s*// end example\\s*$");

    private JavadocExamples() {}

    /**
     * Checks the examples of a documented source file against the regions of an example source file.
     *
     * @param documented a main source file whose javadoc holds the examples, relative to the module
     * @param examples the test source file holding the regions
     * @return the names of the examples checked, in the order they appear in {@code documented}
     * @throws AssertionError naming the first example that is unmarked, has no region, has a region
     *     without an example, or differs from its region (with both texts)
     */
    public static List<String> check(Path documented, Path examples) {
        Map<String, List<String>> blocks = javadocBlocks(read(documented), documented);
        Map<String, List<String>> regions = regions(read(examples), examples);
        for (Map.Entry<String, List<String>> block : blocks.entrySet()) {
            List<String> region = regions.get(block.getKey());
            if (region == null) {
                throw new AssertionError("the example '" + block.getKey() + "' of " + documented
                        + " has no region '// example: " + block.getKey() + "' in " + examples);
            }
            List<String> expected = normalise(region);
            List<String> actual = normalise(block.getValue());
            if (!expected.equals(actual)) {
                throw new AssertionError("the example '" + block.getKey() + "' of " + documented
                        + " differs from its region in " + examples + "; copy the region into the javadoc."
                        + "\n--- region:\n" + String.join("\n", expected)
                        + "\n--- javadoc:\n" + String.join("\n", actual));
            }
        }
        for (String name : regions.keySet()) {
            if (!blocks.containsKey(name)) {
                throw new AssertionError("the region '" + name + "' of " + examples + " is the example of nothing"
                        + " in " + documented + "; mark its copy with <!-- example: " + name + " -->");
            }
        }
        return List.copyOf(blocks.keySet());
    }

    private static Map<String, List<String>> javadocBlocks(List<String> lines, Path file) {
        Map<String, List<String>> blocks = new LinkedHashMap<>();
        for (int i = 0; i < lines.size(); i++) {
            if (!javadocText(lines.get(i)).strip().equals("<pre>{@code")) {
                continue;
            }
            Matcher mark = i > 0 ? MARK.matcher(lines.get(i - 1)) : null;
            if (mark == null || !mark.find()) {
                throw new AssertionError("the example at line " + (i + 1) + " of " + file
                        + " is not marked: put <!-- example: NAME --> on the line before it and the same lines"
                        + " between // example: NAME and // end example in a test");
            }
            List<String> body = new ArrayList<>();
            int j = i + 1;
            for (; j < lines.size() && !javadocText(lines.get(j)).strip().equals("}</pre>"); j++) {
                body.add(javadocText(lines.get(j)));
            }
            if (j == lines.size()) {
                throw new AssertionError("the example at line " + (i + 1) + " of " + file + " has no closing }</pre>");
            }
            put(blocks, mark.group(1), body, file);
            i = j;
        }
        return blocks;
    }

    private static Map<String, List<String>> regions(List<String> lines, Path file) {
        Map<String, List<String>> regions = new LinkedHashMap<>();
        for (int i = 0; i < lines.size(); i++) {
            Matcher start = REGION_START.matcher(lines.get(i));
            if (!start.matches()) {
                continue;
            }
            List<String> body = new ArrayList<>();
            int j = i + 1;
            for (; j < lines.size() && !REGION_END.matcher(lines.get(j)).matches(); j++) {
                body.add(lines.get(j));
            }
            if (j == lines.size()) {
                throw new AssertionError("the region '" + start.group(1) + "' of " + file + " has no // end example");
            }
            put(regions, start.group(1), body, file);
            i = j;
        }
        return regions;
    }

    private static void put(Map<String, List<String>> into, String name, List<String> body, Path file) {
        if (into.put(name, body) != null) {
            throw new AssertionError("the example '" + name + "' appears twice in " + file);
        }
    }

    /** A javadoc line without its leading {@code *} and the one space after it. */
    private static String javadocText(String line) {
        String trimmed = line.stripLeading();
        if (!trimmed.startsWith("*") || trimmed.startsWith("*/")) {
            return "";
        }
        return trimmed.startsWith("* ") ? trimmed.substring(2) : trimmed.substring(1);
    }

    private static List<String> normalise(List<String> block) {
        List<String> lines = new ArrayList<>();
        for (String line : block) {
            lines.add(line.stripTrailing());
        }
        while (!lines.isEmpty() && lines.get(0).isEmpty()) {
            lines.remove(0);
        }
        while (!lines.isEmpty() && lines.get(lines.size() - 1).isEmpty()) {
            lines.remove(lines.size() - 1);
        }
        int indent = lines.stream()
                .filter(line -> !line.isEmpty())
                .mapToInt(line -> line.length() - line.stripLeading().length())
                .min()
                .orElse(0);
        lines.replaceAll(line -> line.isEmpty() ? line : line.substring(indent));
        return lines;
    }

    private static List<String> read(Path file) {
        try {
            return Files.readAllLines(file);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file.toAbsolutePath(), e);
        }
    }
}
