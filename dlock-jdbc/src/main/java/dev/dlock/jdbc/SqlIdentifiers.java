package dev.dlock.jdbc;

import java.util.regex.Pattern;

/**
 * Validation of the table and column names the guard helpers put into SQL text. Values never go into
 * SQL text (they are bind parameters); names cannot be bound, so only plain identifiers pass: letters,
 * digits and underscores, not starting with a digit, at most 63 characters, optionally qualified once
 * ({@code schema.table}). Nothing is quoted, so the database folds case as it does for hand-written SQL.
 */
final class SqlIdentifiers {
    private static final Pattern NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,62}");

    private SqlIdentifiers() {}

    static String column(String name, String what) {
        if (name == null || !NAME.matcher(name).matches()) {
            throw new IllegalArgumentException(what + " must be a plain SQL identifier ([A-Za-z_][A-Za-z0-9_]*,"
                    + " at most 63 characters), got " + (name == null ? "null" : "'" + name + "'"));
        }
        return name;
    }

    static String table(String name) {
        if (name == null) {
            throw new IllegalArgumentException("table must not be null");
        }
        int dot = name.indexOf('.');
        if (dot < 0) {
            return column(name, "table");
        }
        column(name.substring(0, dot), "schema of table '" + name + "'");
        column(name.substring(dot + 1), "table '" + name + "'");
        return name;
    }
}
