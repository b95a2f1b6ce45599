/** Micrometer meters for dlock: a {@code LockListener} that records to a {@code MeterRegistry}. */
@SuppressWarnings("requires-transitive-automatic") // its types are in this module's API
module dev.dlock.micrometer {
    requires transitive dev.dlock.core;
    requires transitive micrometer.core;

    exports dev.dlock.micrometer;
}
