-- dlock lease tables for MySQL 8 and MariaDB 10.5+. Replace ${prefix} with the table prefix (default dlock_).
-- One row per (namespace, kind, name), never deleted: it keeps the last fencing token, and holds the
-- holder of an exclusive lock inline so that acquire and release are one statement each.
CREATE TABLE IF NOT EXISTS ${prefix}locks (
    ns         VARCHAR(64)   NOT NULL,
    kind       VARCHAR(8)    NOT NULL,
    name_key   CHAR(64)      NOT NULL,
    name       VARCHAR(1024) NOT NULL,
    token      BIGINT        NOT NULL,
    owner      VARCHAR(128),
    expires_at BIGINT        NOT NULL,
    PRIMARY KEY (ns, kind, name_key),
    INDEX ${prefix}locks_owner (owner)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
-- Holders and queue entries of fair locks, read-write locks and semaphores.
CREATE TABLE IF NOT EXISTS ${prefix}entries (
    id         BIGINT        NOT NULL AUTO_INCREMENT PRIMARY KEY,
    ns         VARCHAR(64)   NOT NULL,
    kind       VARCHAR(8)    NOT NULL,
    name_key   CHAR(64)      NOT NULL,
    owner      VARCHAR(128)  NOT NULL,
    mode       VARCHAR(10)   NOT NULL,
    held       SMALLINT      NOT NULL,
    token      BIGINT        NOT NULL,
    expires_at BIGINT        NOT NULL,
    UNIQUE KEY ${prefix}entries_key (ns, kind, name_key, owner),
    INDEX ${prefix}entries_owner (owner)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
