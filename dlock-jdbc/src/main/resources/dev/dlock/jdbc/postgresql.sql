-- dlock lease tables for PostgreSQL. Replace ${prefix} with the table prefix (default dlock_).
-- One row per (namespace, kind, name), never deleted: it keeps the last fencing token, and holds the
-- holder of an exclusive lock inline so that acquire and release are one statement each.
CREATE TABLE IF NOT EXISTS ${prefix}locks (
    ns         VARCHAR(64)  NOT NULL,
    kind       VARCHAR(8)   NOT NULL,
    name_key   CHAR(64)     NOT NULL,
    name       TEXT         NOT NULL,
    token      BIGINT       NOT NULL,
    owner      VARCHAR(128),
    expires_at BIGINT       NOT NULL,
    PRIMARY KEY (ns, kind, name_key)
);
CREATE INDEX IF NOT EXISTS ${prefix}locks_owner ON ${prefix}locks (owner);
-- Holders and queue entries of fair locks, read-write locks and semaphores.
CREATE TABLE IF NOT EXISTS ${prefix}entries (
    id         BIGINT       GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    ns         VARCHAR(64)  NOT NULL,
    kind       VARCHAR(8)   NOT NULL,
    name_key   CHAR(64)     NOT NULL,
    owner      VARCHAR(128) NOT NULL,
    mode       VARCHAR(10)  NOT NULL,
    held       SMALLINT     NOT NULL,
    token      BIGINT       NOT NULL,
    expires_at BIGINT       NOT NULL,
    UNIQUE (ns, kind, name_key, owner)
);
CREATE INDEX IF NOT EXISTS ${prefix}entries_owner ON ${prefix}entries (owner);
