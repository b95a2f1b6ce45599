/**
 * The contract kit: the test suite every dlock backend passes ({@code LockContractTest}), its property
 * tests, and the launchers the backends' tests start their stores with. JUnit reaches the kit's test
 * classes reflectively, so the package is open.
 */
open module dev.dlock.tck {
    requires transitive dev.dlock.core;
    requires transitive org.junit.jupiter.api;
    requires transitive org.assertj.core;
    requires transitive net.jqwik.api;
    requires org.junit.platform.launcher;
    requires java.net.http;
    requires jdk.jfr;

    exports dev.dlock.tck;
}
