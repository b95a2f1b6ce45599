/** A Spring Integration {@code LockRegistry} backed by a dlock {@code LockClient}. */
@SuppressWarnings("requires-transitive-automatic") // its types are in this module's API
module dev.dlock.spring.integration {
    requires transitive dev.dlock.core;
    requires transitive spring.integration.core;
    requires transitive spring.context;

    exports dev.dlock.integration;
}
