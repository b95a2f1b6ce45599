package dev.dlock.shedlock;

/** The kit on the in-memory store. */
class MemoryShedLockTest extends ShedLockKitTest {
    @Override
    String uri() {
        return "mem:shedlock";
    }
}
