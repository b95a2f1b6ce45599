package dev.dlock.redis;

import org.junit.jupiter.api.extension.RegisterExtension;

/** The whole contract on Redlock over 5 masters. */
class RedlockFiveContractTest extends RedlockContractSuite {
    @RegisterExtension
    static final Masters MASTERS = new Masters(5);

    @Override
    Masters masters() {
        return MASTERS;
    }
}
