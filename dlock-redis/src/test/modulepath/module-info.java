/**
 * A small application that uses dlock on the module path (ModulePathTest compiles and runs it). It requires
 * only the core module: the Redis backend is found through its {@code provides} clause.
 */
module dev.dlock.modulepath {
    requires dev.dlock.core;
}
