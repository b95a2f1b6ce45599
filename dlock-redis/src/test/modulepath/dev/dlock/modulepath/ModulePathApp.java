package dev.dlock.modulepath;

import dev.dlock.Lease;
import dev.dlock.LockClient;
import dev.dlock.spi.LockBackendProvider;
import java.lang.invoke.MethodHandles;
import java.lang.reflect.Field;
import java.lang.reflect.InaccessibleObjectException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.Arrays;

/**
 * Takes and releases a lock on the memory store and on the Redis server named by the argument, both found
 * through {@code ServiceLoader}, then reaches for the engine behind {@code LockClient} and expects to be
 * refused. Prints one line per check; exits with 1 at the first that fails.
 */
public final class ModulePathApp {
    private ModulePathApp() {}

    public static void main(String[] args) throws Exception {
        check(LockClient.class.getModule().isNamed(), "dev.dlock.core is a named module");
        lockAndRelease("mem:", "dev.dlock.core");
        lockAndRelease(args[0], "dev.dlock.redis");
        engineIsSealed();
        System.out.println("all checks passed");
    }

    private static void lockAndRelease(String uri, String providerModule) throws Exception {
        String found = LockBackendProvider.factoryFor(uri).getClass().getModule().getName();
        check(providerModule.equals(found), "backend for " + scheme(uri) + " comes from " + found);
        try (LockClient first = LockClient.connect(uri);
                LockClient second = LockClient.connect(uri)) {
            try (Lease lease = first.lock("module-path").acquire(Duration.ofSeconds(10))) {
                check(lease.isValid(), scheme(uri) + " lock taken, token " + lease.fencingToken());
                check(second.lock("module-path").tryAcquire().isEmpty(), scheme(uri) + " held: another client waits");
            }
            try (Lease again = second.lock("module-path").acquire(Duration.ofSeconds(10))) {
                check(again.isValid(), scheme(uri) + " released: the other client takes it");
            }
        }
    }

    private static void engineIsSealed() throws Exception {
        Field field = Arrays.stream(LockClient.class.getDeclaredFields())
                .filter(f -> f.getType().getPackageName().startsWith("dev.dlock.internal"))
                .findFirst()
                .orElseThrow(() -> new AssertionError("LockClient holds no engine from dev.dlock.internal"));
        Class<?> engine = field.getType();
        Module core = LockClient.class.getModule();
        check(!core.isExported(engine.getPackageName()), engine.getPackageName() + " is not exported");
        try {
            field.setAccessible(true);
            check(false, "setAccessible on LockClient." + field.getName() + " succeeded");
        } catch (InaccessibleObjectException expected) {
            check(true, "setAccessible refused: " + expected.getMessage());
        }
        Method method = Arrays.stream(engine.getDeclaredMethods())
                .filter(m -> Modifier.isPublic(m.getModifiers()))
                .findFirst()
                .orElseThrow(() -> new AssertionError(engine + " has no public method"));
        try {
            MethodHandles.lookup().unreflect(method);
            check(false, "a handle on " + engine.getSimpleName() + "." + method.getName() + " was given");
        } catch (IllegalAccessException expected) {
            check(true, "public " + engine.getSimpleName() + "." + method.getName() + " refused: " + expected.getMessage());
        }
    }

    private static String scheme(String uri) {
        return uri.substring(0, uri.indexOf(':') + 1);
    }

    private static void check(boolean condition, String what) {
        System.out.println((condition ? "ok: " : "FAILED: ") + what);
        if (!condition) {
            System.exit(1);
        }
    }
}
