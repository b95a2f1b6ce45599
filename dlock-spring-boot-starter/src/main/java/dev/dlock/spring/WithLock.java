package dev.dlock.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.springframework.core.annotation.AliasFor;

/**
 * Runs a Spring bean method only while this process holds a distributed lock, taken from the
 * application's {@link dev.dlock.LockClient} bean.
 *
 * <pre>{@code
 * @WithLock(key = "'order:' + #orderId", waitTime = "5s")
 * public void ship(long orderId, Lease lease) {
 *     warehouse.ship(orderId, lease.fencingToken());
 * }
 * }</pre>
 *
 * <h2>Keys</h2>
 *
 * <p>Each key is a SpEL expression over the method's arguments ({@code #orderId}, or {@code #p0} /
 * {@code #a0} when the code is compiled without {@code -parameters}), {@code #root.method}, {@code
 * #root.target}, and beans ({@code @beanName}). Several keys, or one key whose value is a collection or
 * array, take a multi-lock over all the names, all or nothing, in sorted order. A key that evaluates to
 * null or an empty string fails the call with {@link IllegalArgumentException}, without calling the
 * method.
 *
 * <h2>Waiting, failing and the lease</h2>
 *
 * <p>The call waits up to {@link #waitTime()} for the lock; when it is not had in time, {@link
 * #ifNotAcquired()} decides: throw (the default), skip, or call the {@link #fallback()} method. The
 * method never runs without the lock unless a fallback was chosen. A parameter of type {@link
 * dev.dlock.Lease} receives the lease, whatever the caller passed, so the method can read the fencing
 * token; for a multi-lock use {@link dev.dlock.Lease#parts()}. If the lease is lost while the method runs,
 * the call ends with {@link dev.dlock.LeaseLostException} once the method returns, so the caller learns
 * that the work was not protected to its end.
 *
 * <h2>Synchronous and asynchronous methods</h2>
 *
 * <p>A method returning {@code CompletableFuture} or {@code CompletionStage}, or (with reactor-core on the
 * class path) {@code Mono} or {@code Flux}, does not block its caller: the lock is acquired without
 * blocking, the method is called once it is held, and the lease is released when the returned future or
 * publisher completes, fails or is cancelled. Synchronous methods hold the lock through the thread-owned
 * {@link java.util.concurrent.locks.Lock} view, so a nested call with the same key on the same thread is
 * reentrant; asynchronous methods hold a lease, which is not reentrant.
 *
 * <p>The usual Spring AOP rules apply: the method must be public and called through the bean (not from
 * another method of the same object), and the class must not be final. Definitions are checked when the
 * bean is created: a bad expression, duration, mode or fallback fails the application's start.
 */
@Target({ElementType.METHOD, ElementType.ANNOTATION_TYPE})
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface WithLock {
    /**
     * Alias for {@link #key()}.
     *
     * @return the key expressions
     */
    @AliasFor("key")
    String[] value() default {};

    /**
     * SpEL expressions giving the lock names; at least one.
     *
     * @return the key expressions
     */
    @AliasFor("value")
    String[] key() default {};

    /**
     * The kind of lock. Multi-locks (several names) are {@link LockMode#EXCLUSIVE} only.
     *
     * @return the mode
     */
    LockMode mode() default LockMode.EXCLUSIVE;

    /**
     * The longest wait for the lock, such as {@code "500ms"}, {@code "5s"} or {@code "PT5S"}, or a {@code
     * ${...}} placeholder; {@code "0"} tries once. Empty means {@code dlock.wait-time}.
     *
     * @return the wait time
     */
    String waitTime() default "";

    /**
     * The lease time of the grant, in the same format as {@link #waitTime()}. Empty means {@code
     * dlock.lease-time}. The lease is renewed while the method runs unless {@code dlock.renewal} is
     * false.
     *
     * @return the lease time
     */
    String leaseTime() default "";

    /**
     * The least time the lock stays held, counted from its grant, in the same format as {@link
     * #waitTime()}: a method that returns sooner leaves it held (and renewed) until then, with no thread
     * waiting ({@link dev.dlock.Lease#closeAfter}). For scheduled jobs with {@link NotAcquired#SKIP}: a
     * job that ends in 50 ms on one node is not run again by a node whose clock is a little behind. Empty
     * means none.
     *
     * @return the minimum hold
     */
    String minHold() default "";

    /**
     * What happens when the lock is not had in time.
     *
     * @return the policy
     */
    NotAcquired ifNotAcquired() default NotAcquired.THROW;

    /**
     * With {@link NotAcquired#FALLBACK}: the name of a method of the same class to call instead. It takes
     * the same parameters as the annotated method, optionally followed by one parameter of type {@link
     * dev.dlock.LockException} (or a supertype) that receives why the lock was not had; a {@link
     * dev.dlock.Lease} parameter receives null. Its return type must be assignable to the annotated
     * method's.
     *
     * @return the fallback method name
     */
    String fallback() default "";
}
