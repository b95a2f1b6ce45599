package dev.dlock.jdbc;

/**
 * A resource's row of the locks table as a grant transaction sees it, locked for the rest of that
 * transaction: the last fencing token, the inline exclusive holder (null when none) and its expiry, and
 * the database's now, all in milliseconds by the database's clock.
 */
record ResourceRow(long token, String owner, long expiresAt, long now) {}
