package dev.dlock.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** {@link LockBackendFactory#andThen}: a decorator that fails leaves no backend open behind it. */
class LockBackendFactoryTest {
    private final AtomicInteger closed = new AtomicInteger();

    private final LockBackendFactory factory = context -> (LockBackend) Proxy.newProxyInstance(
            LockBackend.class.getClassLoader(), new Class<?>[] {LockBackend.class}, (proxy, method, args) -> {
                if (method.getName().equals("close")) {
                    closed.incrementAndGet();
                }
                return null;
            });

    private LockBackend open(LockBackendFactory f) {
        return f.open(new BackendContext(null, Duration.ofSeconds(1), reason -> {}));
    }

    @Test
    void aDecoratorThatThrowsClosesTheOpenedBackend() {
        assertThatThrownBy(() -> open(factory.andThen(b -> {
                    throw new IllegalStateException("broken decorator");
                })))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("broken decorator");
        assertThat(closed).hasValue(1);
    }

    @Test
    void aDecoratorThatReturnsNothingIsRefusedAndTheBackendClosed() {
        assertThatThrownBy(() -> open(factory.andThen(b -> null))).hasMessageContaining("the decorator returned null");
        assertThat(closed).hasValue(1);
    }

    @Test
    void aWorkingDecoratorWrapsWithoutClosing() {
        LockBackend wrapped = open(factory.andThen(b -> new ForwardingLockBackend(b) {}));
        assertThat(wrapped).isInstanceOf(ForwardingLockBackend.class);
        assertThat(closed).hasValue(0);
    }
}
