/**
 * The fault-injection suite: client JVMs running a lock workload against a fenced and an unfenced
 * resource, stores run as their own processes, a nemesis that pauses, kills, partitions and shifts clocks,
 * and a checker. Run it with {@code scripts/chaos.sh}; {@link dev.dlock.chaos.Main} is the entry point.
 */
package dev.dlock.chaos;
