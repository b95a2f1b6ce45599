package dev.dlock.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs a Spring bean method only in the instance that leads an election: every instance of the
 * application campaigns ({@link dev.dlock.LockClient#election}) from its start, and a call on an instance
 * that does not lead returns at once without running the method. Suits {@code @Scheduled} jobs that every
 * instance schedules and one should run.
 *
 * <pre>{@code
 * @Scheduled(fixedDelay = 60_000)
 * @OnLeader("billing:scheduler")
 * public void chargeDueSubscriptions() { ... }
 * }</pre>
 *
 * <ul>
 *   <li>Campaigning starts when the application context has started (one {@link dev.dlock.LeaderElection}
 *       per name, on the application's {@link dev.dlock.LockClient} bean) and ends, by resigning, when it
 *       stops, so another instance takes over at once. Before the start and after the stop every call is
 *       skipped.
 *   <li>A skipped call returns {@code null}, or an empty {@code Optional} for a method returning one. A
 *       method returning a primitive (other than {@code void}) is refused when the bean is created.
 *   <li>Leadership is checked when the call starts. A method that must stop when the leadership is lost
 *       mid-run, or fence its writes with the term number, uses {@link dev.dlock.LeaderElection} itself.
 *   <li>Several methods may name the same election: they run on the same leader.
 * </ul>
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface OnLeader {
    /**
     * The election's name (the name of the lock its leader holds), in the client's namespace.
     *
     * @return the name, not blank
     */
    String value();
}
