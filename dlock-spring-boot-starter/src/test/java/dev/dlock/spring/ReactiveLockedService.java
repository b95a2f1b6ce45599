package dev.dlock.spring;

import dev.dlock.Lease;
import dev.dlock.LockException;
import java.util.function.Function;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** {@link WithLock} methods returning Reactor types. */
public class ReactiveLockedService {
    @WithLock(key = "'rx:' + #id", waitTime = "5s")
    public Mono<String> mono(String id, Lease lease, Function<Lease, Mono<String>> body) {
        return body.apply(lease);
    }

    @WithLock(key = "'rx:' + #id", waitTime = "5s")
    public Flux<String> flux(String id, Lease lease, Function<Lease, Flux<String>> body) {
        return body.apply(lease);
    }

    @WithLock(key = "'rx:' + #id", waitTime = "200ms")
    public Mono<String> monoOrThrow(String id, Lease lease, Function<Lease, Mono<String>> body) {
        return body.apply(lease);
    }

    @WithLock(key = "'rx:' + #id", waitTime = "200ms", ifNotAcquired = NotAcquired.SKIP)
    public Flux<String> fluxOrSkip(String id, Lease lease, Function<Lease, Flux<String>> body) {
        return body.apply(lease);
    }

    @WithLock(key = "'rx:' + #id", waitTime = "200ms", ifNotAcquired = NotAcquired.FALLBACK, fallback = "busy")
    public Mono<String> monoOrFallback(String id, Lease lease, Function<Lease, Mono<String>> body) {
        return body.apply(lease);
    }

    Mono<String> busy(String id, Lease lease, Function<Lease, Mono<String>> body, LockException cause) {
        return Mono.just("busy:" + id + ":" + cause.getClass().getSimpleName());
    }
}
