package dev.dlock.cli;

import java.io.PrintStream;
import java.util.List;

/** Prints rows of text as columns separated by two spaces: leading text columns left-aligned, the rest right. */
final class Table {
    private Table() {}

    static void print(PrintStream out, List<String[]> rows, int leftAligned) {
        int columns = rows.get(0).length;
        int[] widths = new int[columns];
        for (String[] row : rows) {
            for (int i = 0; i < columns; i++) {
                widths[i] = Math.max(widths[i], row[i].length());
            }
        }
        for (String[] row : rows) {
            StringBuilder line = new StringBuilder();
            for (int i = 0; i < columns; i++) {
                if (i > 0) {
                    line.append("  ");
                }
                String padding = " ".repeat(widths[i] - row[i].length());
                line.append(i < leftAligned ? row[i] + padding : padding + row[i]);
            }
            out.println(line.toString().stripTrailing());
        }
    }
}
