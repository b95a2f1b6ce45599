package dev.dlock.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The check behind the javadoc examples: what it accepts and each way it refuses. */
class JavadocExamplesTest {
    private static final String REGION = String.join(
            "\n",
            "class Examples {",
            "    void run() {",
            "        // example: greet",
            "        if (ready) {",
            "            greet();  ",
            "        }",
            "        // end example",
            "    }",
            "}");

    @TempDir
    Path dir;

    private Path write(String name, String... lines) throws IOException {
        return Files.writeString(dir.resolve(name), String.join("\n", lines));
    }

    private Path documented(String... body) throws IOException {
        String[] lines = new String[body.length + 4];
        lines[0] = "/**";
        lines[1] = " * <!-- example: greet (a comment) -->";
        lines[2] = " * <pre>{@code";
        System.arraycopy(body, 0, lines, 3, body.length);
        lines[lines.length - 1] = " * }</pre>\n */";
        return write("Documented.java", lines);
    }

    @Test
    void acceptsACopyAtAnotherIndentation() throws IOException {
        Path documented = documented(" * if (ready) {", " *     greet();", " * }");
        assertThat(JavadocExamples.check(documented, write("Examples.java", REGION)))
                .containsExactly("greet");
    }

    @Test
    void refusesAnEditedCopyShowingBoth() throws IOException {
        Path documented = documented(" * if (ready) {", " *     greet(loudly);", " * }");
        assertThatThrownBy(() -> JavadocExamples.check(documented, write("Examples.java", REGION)))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("'greet'")
                .hasMessageContaining("differs")
                .hasMessageContaining("    greet();")
                .hasMessageContaining("    greet(loudly);");
    }

    @Test
    void refusesAChangedIndentationInside() throws IOException {
        Path documented = documented(" * if (ready) {", " * greet();", " * }");
        assertThatThrownBy(() -> JavadocExamples.check(documented, write("Examples.java", REGION)))
                .hasMessageContaining("differs");
    }

    @Test
    void refusesAnUnmarkedExample() throws IOException {
        Path documented = write("Documented.java", "/**", " * <pre>{@code", " * greet();", " * }</pre>", " */");
        assertThatThrownBy(() -> JavadocExamples.check(documented, write("Examples.java", REGION)))
                .hasMessageContaining("line 2")
                .hasMessageContaining("not marked");
    }

    @Test
    void refusesAMarkWithoutRegion() throws IOException {
        Path documented = documented(" * greet();");
        assertThatThrownBy(() -> JavadocExamples.check(documented, write("Examples.java", "class Examples {}")))
                .hasMessageContaining("has no region '// example: greet'");
    }

    @Test
    void refusesARegionWithoutExample() throws IOException {
        Path documented = write("Documented.java", "/** No examples. */");
        assertThatThrownBy(() -> JavadocExamples.check(documented, write("Examples.java", REGION)))
                .hasMessageContaining("the region 'greet'")
                .hasMessageContaining("example of nothing");
    }

    @Test
    void refusesAnUnclosedRegion() throws IOException {
        Path documented = documented(" * greet();");
        Path examples = write("Examples.java", "// example: greet", "greet();");
        assertThatThrownBy(() -> JavadocExamples.check(documented, examples)).hasMessageContaining("no // end example");
    }
}
