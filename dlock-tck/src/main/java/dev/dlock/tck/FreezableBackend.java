package dev.dlock.tck;

import dev.dlock.LockInfo;
import dev.dlock.spi.AcquireRequest;
import dev.dlock.spi.AcquireResult;
import dev.dlock.spi.ForwardingLockBackend;
import dev.dlock.spi.LockBackend;
import dev.dlock.spi.LockKey;
import dev.dlock.spi.RenewRequest;
import dev.dlock.spi.WakeListener;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

/**
 * Wraps a backend so that one client can be made to "crash": after {@link #freeze()} no request from
 * this client reaches the store any more (each gets a stage that never completes), exactly what the store
 * sees of a process that died (answers to requests sent before the freeze are not delivered either). Other clients of the same store are unaffected. Install it through the SPI, around
 * the factory a builder opens: {@code builder.backend(builder.backend().andThen(FreezableBackend::new))}.
 *
 * <p>It can also make the way back slow: after {@link #delayAnswers(Duration)} every request still reaches
 * the store at once, but its answer reaches the client only after the delay, as over a congested link.
 * Single messages can be made late: the answer to the next call of a kind ({@link #delayNextAnswer}),
 * or the next release itself, held on its way until the test sends it on ({@link #holdNextRelease()}).
 * A client thread can be stopped just before its acquire leaves ({@link #pauseNextAcquire()}), as a
 * thread the operating system took off its core between deciding to ask and writing the request.
 */
public final class FreezableBackend extends ForwardingLockBackend {
    private static final ScheduledExecutorService DELAYS = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "tck-answer-delay");
        t.setDaemon(true);
        return t;
    });

    private volatile boolean frozen;
    private volatile long answerDelayNanos;
    private volatile boolean failNextRelease;
    private final Map<Call, Long> nextAnswerDelays = new ConcurrentHashMap<>();
    private final AtomicReference<HeldRequest> heldRelease = new AtomicReference<>();
    private final AtomicReference<PausedCall> nextPausedAcquire = new AtomicReference<>();
    private final AtomicReference<PausedCall> pausedAcquire = new AtomicReference<>();
    private final AtomicInteger acquiresSent = new AtomicInteger();
    private final AtomicInteger acquireAnswers = new AtomicInteger();
    private final AtomicInteger renewalsDone = new AtomicInteger();

    /**
     * Wraps a backend.
     *
     * @param delegate the real backend
     */
    public FreezableBackend(LockBackend delegate) {
        super(delegate);
    }

    /** From now on, nothing reaches the store. */
    public void freeze() {
        frozen = true;
    }

    /**
     * From now on, answers reach the client {@code delay} after the store gave them (zero: at once).
     *
     * @param delay the extra time on the way back
     */
    public void delayAnswers(Duration delay) {
        answerDelayNanos = delay.toNanos();
    }

    /**
     * The answer to the next acquire (only that one) reaches the client {@code delay} after the store gave
     * it, on top of any {@link #delayAnswers} delay.
     *
     * @param delay the extra time on the way back
     */
    public void delayNextAcquireAnswer(Duration delay) {
        delayNextAnswer(Call.ACQUIRE, delay);
    }

    /** The calls whose next answer can be made late ({@link #delayNextAnswer}). */
    public enum Call {
        /** {@code acquire}. */
        ACQUIRE,
        /** {@code release}: a release or a give-back. */
        RELEASE,
        /** {@code renew} and {@code holds}: the watchdog's renewal, an extend, a hand-off's confirmation. */
        RENEW,
        /** {@code cancelWait}: a wait that ended leaves the store's queue. */
        CANCEL_WAIT
    }

    /**
     * The answer to the next call of one kind (only that one) reaches the client {@code delay} after the
     * store gave it, on top of any {@link #delayAnswers} delay: the store acts on the call at once.
     *
     * @param call which kind of call
     * @param delay the extra time on the way back
     */
    public void delayNextAnswer(Call call, Duration delay) {
        nextAnswerDelays.put(call, delay.toNanos());
    }

    private long nextAnswerDelay(Call call) {
        Long delay = nextAnswerDelays.remove(call);
        return delay == null ? 0 : delay;
    }

    /**
     * The next release does not reach the store until the test sends it on with {@link
     * HeldRequest#send()}, as a request stuck on a slow connection.
     *
     * @return the handle of the release to come
     */
    public HeldRequest holdNextRelease() {
        HeldRequest held = new HeldRequest();
        heldRelease.set(held);
        return held;
    }

    /**
     * The thread that sends the next acquire stops inside this backend, before the request leaves, until
     * the test lets it go ({@link PausedCall#send()}) or the client closes this backend, whichever comes
     * first. A close lets the request leave, closes the connection, and only then lets the thread go on:
     * the interleaving of a descheduled thread that writes its request just before its client closes the
     * connection and sees the answer (or its failure) only after.
     *
     * @return the handle of the acquire to come
     */
    public PausedCall pauseNextAcquire() {
        PausedCall paused = new PausedCall();
        nextPausedAcquire.set(paused);
        return paused;
    }

    /**
     * How many acquire answers reached the client so far.
     *
     * @return the count
     */
    public int acquireAnswers() {
        return acquireAnswers.get();
    }

    /**
     * How many acquires this client sent so far.
     *
     * @return the count
     */
    public int acquiresSent() {
        return acquiresSent.get();
    }

    /**
     * How many renewals (watchdog batches, extends, hand-off confirmations) the store has answered so far,
     * whether or not their answers have reached the client yet ({@link #delayAnswers}).
     *
     * @return the count
     */
    public int renewalsDone() {
        return renewalsDone.get();
    }

    /** A request held on its way to the store ({@link #holdNextRelease()}). */
    public static final class HeldRequest {
        private final CompletableFuture<Void> caught = new CompletableFuture<>();
        private final CompletableFuture<Void> gate = new CompletableFuture<>();
        private final CompletableFuture<Object> answered = new CompletableFuture<>();

        private HeldRequest() {}

        /**
         * Whether the client has sent the request (it waits here).
         *
         * @return true once caught
         */
        public boolean caught() {
            return caught.isDone();
        }

        /**
         * Lets the request reach the store now.
         *
         * @return completes when the store answered it
         */
        public CompletableFuture<Object> send() {
            gate.complete(null);
            return answered;
        }
    }

    /** A client thread stopped just before its request leaves ({@link #pauseNextAcquire()}). */
    public static final class PausedCall {
        private final CompletableFuture<Void> caught = new CompletableFuture<>();
        private final CompletableFuture<Void> gate = new CompletableFuture<>();
        private final CompletableFuture<Void> sent = new CompletableFuture<>();
        private final CompletableFuture<Void> goOn = new CompletableFuture<>();

        private PausedCall() {}

        /**
         * Whether a client thread is stopped here.
         *
         * @return true once caught
         */
        public boolean caught() {
            return caught.isDone();
        }

        /**
         * Whether the request has left for the store (let go by the test or by the close).
         *
         * @return true once sent
         */
        public boolean sent() {
            return sent.isDone();
        }

        /** Lets the thread go on: its request leaves now. */
        public void send() {
            gate.complete(null);
            goOn.complete(null);
        }

        /** Stops the calling thread until {@code until} completes; bounded so a broken test cannot hang. */
        private static void await(CompletableFuture<Void> until) {
            try {
                until.get(1, TimeUnit.MINUTES);
            } catch (Exception e) {
                throw new IllegalStateException("a paused acquire was never let go", e);
            }
        }
    }

    private <T> CompletionStage<T> pass(Supplier<CompletionStage<T>> call) {
        return pass(call, 0);
    }

    private <T> CompletionStage<T> pass(Supplier<CompletionStage<T>> call, long extraDelayNanos) {
        if (frozen) {
            return new CompletableFuture<>();
        }
        long delay = answerDelayNanos + extraDelayNanos;
        CompletableFuture<T> delivered = new CompletableFuture<>();
        call.get().whenComplete((value, error) -> {
            Runnable deliver = () -> {
                if (frozen) {
                    return; // a crashed process never sees the answers to what it sent before the crash
                }
                if (error != null) {
                    delivered.completeExceptionally(error);
                } else {
                    delivered.complete(value);
                }
            };
            if (delay == 0) {
                deliver.run();
            } else {
                DELAYS.schedule(deliver, delay, TimeUnit.NANOSECONDS);
            }
        });
        return delivered;
    }

    @Override
    public CompletionStage<AcquireResult> acquire(AcquireRequest request) {
        PausedCall paused = nextPausedAcquire.getAndSet(null);
        if (paused != null) {
            pausedAcquire.set(paused);
            paused.caught.complete(null);
            PausedCall.await(paused.gate);
            try {
                return send(request);
            } finally {
                paused.sent.complete(null);
                PausedCall.await(paused.goOn);
            }
        }
        return send(request);
    }

    private CompletionStage<AcquireResult> send(AcquireRequest request) {
        long extra = nextAnswerDelay(Call.ACQUIRE);
        acquiresSent.incrementAndGet();
        return pass(() -> delegate.acquire(request), extra).whenComplete((r, e) -> acquireAnswers.incrementAndGet());
    }

    /** The next release fails before it reaches the store, as when the connection drops at that moment. */
    public void failNextRelease() {
        failNextRelease = true;
    }

    @Override
    public CompletionStage<Boolean> release(LockKey key, String owner) {
        if (failNextRelease) {
            failNextRelease = false;
            return CompletableFuture.failedFuture(new IllegalStateException("connection lost (injected)"));
        }
        HeldRequest held = heldRelease.getAndSet(null);
        if (held != null) {
            held.caught.complete(null);
            return held.gate
                    .thenCompose(go -> pass(() -> delegate.release(key, owner)))
                    .whenComplete((wasHeld, e) -> held.answered.complete(wasHeld));
        }
        return pass(() -> delegate.release(key, owner), nextAnswerDelay(Call.RELEASE));
    }

    @Override
    public CompletionStage<Set<String>> renew(List<RenewRequest> batch) {
        return pass(
                () -> delegate.renew(batch).whenComplete((lost, error) -> renewalsDone.incrementAndGet()),
                nextAnswerDelay(Call.RENEW));
    }

    @Override
    public CompletionStage<Boolean> holds(RenewRequest lease) {
        return pass(() -> delegate.holds(lease), nextAnswerDelay(Call.RENEW));
    }

    @Override
    public CompletionStage<Void> cancelWait(LockKey key, String owner) {
        return pass(() -> delegate.cancelWait(key, owner), nextAnswerDelay(Call.CANCEL_WAIT));
    }

    @Override
    public CompletionStage<Subscription> subscribe(LockKey key, WakeListener listener) {
        return pass(() -> delegate.subscribe(key, next -> {
            if (!frozen) {
                listener.wake(next);
            }
        }));
    }

    @Override
    public CompletionStage<LockInfo> describe(LockKey key) {
        return pass(() -> delegate.describe(key));
    }

    @Override
    public CompletionStage<List<LockInfo>> list(String namespace, String prefix) {
        return pass(() -> delegate.list(namespace, prefix));
    }

    @Override
    public CompletionStage<Boolean> forceRelease(LockKey key) {
        return pass(() -> delegate.forceRelease(key));
    }

    /** Lets a paused acquire leave first ({@link #pauseNextAcquire()}), then closes the real backend. */
    @Override
    public void close() {
        PausedCall paused = pausedAcquire.get();
        if (paused == null || paused.gate.isDone()) {
            delegate.close();
            return;
        }
        paused.gate.complete(null);
        PausedCall.await(paused.sent);
        try {
            delegate.close();
        } finally {
            paused.goOn.complete(null);
        }
    }
}
