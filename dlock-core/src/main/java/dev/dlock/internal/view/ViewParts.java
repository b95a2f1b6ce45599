package dev.dlock.internal.view;

import dev.dlock.internal.wait.Acquisitions;
import java.time.Duration;

/**
 * What a lock view uses of its client, and nothing more: where it starts waits, the thread-owned holds of
 * the {@code Lock} view, and the wait of {@code acquire()}.
 *
 * @param acquisitions starts every wait
 * @param holds the thread-owned holds
 * @param waitTime the wait of {@code acquire()}
 */
record ViewParts(Acquisitions acquisitions, Holds holds, Duration waitTime) {}
