/** A ShedLock {@code LockProvider} backed by a dlock {@code LockClient}. */
module dev.dlock.shedlock {
    requires transitive dev.dlock.core;
    requires transitive net.javacrumbs.shedlock.core;

    exports dev.dlock.shedlock;
}
