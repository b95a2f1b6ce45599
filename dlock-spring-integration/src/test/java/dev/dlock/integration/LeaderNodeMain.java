package dev.dlock.integration;

import dev.dlock.LockClient;
import java.time.Duration;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.integration.leader.Candidate;
import org.springframework.integration.leader.Context;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;

/**
 * One application for {@link LeaderProcessKillTest}, in a JVM of its own: a client, a {@link
 * DlockLockRegistry} and Spring Integration's leader initiator in a Spring context. It prints {@code
 * granted <term token>} when it becomes the leader and then runs until it is killed.
 *
 * <p>Arguments: the store URI, the namespace, the registry's lease time in milliseconds.
 */
final class LeaderNodeMain {
    private LeaderNodeMain() {}

    public static void main(String[] args) throws Exception {
        LockClient client = LockClient.builder(args[0]).namespace(args[1]).build();
        DlockLockRegistry registry = new DlockLockRegistry(client, Duration.ofMillis(Long.parseLong(args[2])));
        Candidate candidate = new Candidate() {
            @Override
            public String getRole() {
                return LeaderInitiatorContract.ROLE;
            }

            @Override
            public String getId() {
                return "child";
            }

            @Override
            public void onGranted(Context ctx) {
                long term = registry.currentLease(getRole()).orElseThrow().fencingToken();
                System.out.println("granted " + term);
                System.out.flush();
            }

            @Override
            public void onRevoked(Context ctx) {}
        };
        GenericApplicationContext context = new GenericApplicationContext();
        context.registerBean(LockRegistryLeaderInitiator.class, () -> {
            LockRegistryLeaderInitiator initiator = new LockRegistryLeaderInitiator(registry, candidate);
            initiator.setHeartBeatMillis(100);
            initiator.setBusyWaitMillis(50);
            return initiator;
        });
        context.refresh();
        Thread.sleep(Long.MAX_VALUE);
    }
}
