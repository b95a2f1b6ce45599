/**
 * The in-memory backend ({@code mem:} URIs): full lock semantics inside one JVM, with {@link
 * dev.dlock.mem.MemoryStore} to simulate an outage in tests.
 */
package dev.dlock.mem;
