package dev.dlock.jdbc;

/**
 * A resource's row of the locks table as a grant transaction sees it, locked for the rest of that
 * transaction: the last fencing token, the inline exclusive holder (null when none) and its expiry, and
 * the database's now, in milliseconds by the database's clock, and the same clock in microseconds, read
 * by the statement that returned the locked row (the floor of the next token, {@link Tables#nextToken}).
 */
record ResourceRow(long token, String owner, long expiresAt, long now, long nowMicros) {}
