package dev.dlock.integration;

/** The leader initiator on the in-memory store; a paused node's requests stop at its SPI. */
class MemoryLeaderInitiatorTest extends LeaderInitiatorContract {
    @Override
    String uri(int port) {
        return "mem:si-leader";
    }

    @Override
    int storePort() {
        return -1;
    }
}
