package dev.dlock.zookeeper;

import dev.dlock.LockClient;
import dev.dlock.spi.LockBackend;
import java.lang.reflect.Field;
import org.apache.curator.framework.CuratorFramework;

/** Reaches the ZooKeeper backend behind a {@code LockClient}, for tests that inject session faults. */
final class TestClients {
    private TestClients() {}

    /** The backend of a client, unwrapping the contract suite's {@code FreezableBackend}. */
    static ZooKeeperBackend backend(LockClient client) {
        Object engine = field(client, "engine");
        Object backend = field(engine, "backend");
        while (!(backend instanceof ZooKeeperBackend)) {
            if (!(backend instanceof LockBackend)) {
                throw new IllegalStateException("not a ZooKeeper client: " + client);
            }
            backend = field(backend, "delegate");
        }
        return (ZooKeeperBackend) backend;
    }

    /** The Curator client behind a {@code LockClient}. */
    static CuratorFramework curator(LockClient client) {
        return backend(client).curator();
    }

    static Object field(Object target, String name) {
        for (Class<?> c = target.getClass(); c != null; c = c.getSuperclass()) {
            try {
                Field f = c.getDeclaredField(name);
                f.setAccessible(true);
                return f.get(target);
            } catch (NoSuchFieldException e) {
                // look in the superclass
            } catch (IllegalAccessException e) {
                throw new IllegalStateException(e);
            }
        }
        throw new IllegalStateException("no field '" + name + "' in " + target.getClass());
    }
}
