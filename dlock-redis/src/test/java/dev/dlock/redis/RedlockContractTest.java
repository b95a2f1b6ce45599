package dev.dlock.redis;

import org.junit.jupiter.api.extension.RegisterExtension;

/** The whole contract on Redlock over 3 masters. */
class RedlockContractTest extends RedlockContractSuite {
    @RegisterExtension
    static final Masters MASTERS = new Masters(3);

    @Override
    Masters masters() {
        return MASTERS;
    }
}
