/*
 * Redlock's lease validity (RedlockBackend.acquire and writeBack, Round, renew; the engine's deadline,
 * LeaseTiming): a focused companion of redlock.pml, which has every step of the protocol but is too large
 * to reach this property's interleavings (a lease counted from the quorum's arrival was not found there
 * within 11 million states).
 *
 * What is modelled. Two clients take one exclusive lock over NM masters (majority Q) on a discrete clock
 * shared by all (a lease is L ticks, the per-master timeout TMO ticks). A master grants when the request
 * reaches it (hold until its time + L) and renews the owner's unexpired hold (until its time + L). Every
 * request and every answer travels on its own FIFO connection and may be delayed by whole ticks (DELAYS
 * in all) or lost (LOSSES in all): a grant and its answer are two events, and a quorum can arrive well
 * after the grants that make it. A client's round, as RedlockBackend and Round do it:
 *   - acquire: start = the clock before sending (and the engine's own send time, earlier still, is the
 *     same tick); sent to every master at once; an answer counts until start + TMO; decided as Round
 *     decides (a majority granted, a majority failed, or a majority answered and granted can no longer
 *     win);
 *   - granted: the token write-back, a floor to every master that did not answer with the highest token
 *     (which granting masters answered a lower token is the adversary's choice: tokens are not modelled
 *     here, see redlock-tokens.pml), awaited from a majority or until a majority failed (each bounded by
 *     TMO); then handed out only if L - (now - start) - D > 0, the lease valid by the client's own view
 *     until start + L - D (LeaseTiming: the send time plus the lease minus the drift margin);
 *   - holding: RENEWALS renewal rounds, each sent at a tick the client chooses while its view is valid,
 *     decided once every master answered or timed out (Round.settled): valid until the renewal's send
 *     time + L - D when a majority confirmed, lost when more than NM - Q denied, else unchanged (the
 *     engine retries until its deadline).
 * Client 0 starts at tick 0, client 1 at any tick up to MAXT (a lease-long pause and more): the clock is
 * shared and the masters start free, so a run where client 1 starts first is client 0's run relabelled.
 *
 * What is abstracted. Tokens (redlock-tokens.pml), crashes and the hold-back (redlock.pml), the write
 * queue and the order of follow-ups (redlock.pml), clock drift (one clock, D = 0), names and modes (the
 * exclusive grant only), and everything after a round's outcome that cannot give a second valid lease:
 * each client makes one acquire round, so the give-back of a failed round and the release (the view
 * ends first) only free masters for a client that already answered or already gave up its own round;
 * a client that did not get the lock gives up (no retry: a retry is a later round, as client 1's).
 *
 * Invariant: no two clients hold valid leases at once by their own views: at every hand-out and every
 * confirmed renewal, the other client's view has ended.
 *
 * The backend's own time check (hand out only if L - (now - start) - D > 0) cannot fail within these
 * bounds (a hand-out comes at most 2 TMO after the start) and is not what keeps the lease safe: the
 * view runs from the send time, so a late grant would be handed out with a view already over; the
 * check spares the caller a useless grant. The seeded bugs below are the counting that matters.
 *
 * Bounds of the default run (scripts/spin.sh; about 5 million states, 1.3 GB, 11 s): 3 masters, lease 4
 * ticks, timeout 1 tick, two one-tick delays of a request or an answer, one renewal per client, client 1
 * starting by tick 5; no loss. -DLOSSES=1 -DDELAYS=1 runs the loss path (a request or an answer lost;
 * about 4.5 million states, 10 s).
 *
 * Seeded bugs:
 *   -DBUG_FULL_VALIDITY   the lease counted from the quorum's arrival (after the write-back), not the start
 *   -DBUG_RENEW_ARRIVAL   a confirmed renewal counted from the majority's answers, not from its sending
 */

#define NC 2        /* clients */
#define NM 3        /* masters */
#define Q 2         /* majority */
#define L 4         /* lease, ticks */
#define D 0         /* drift margin, ticks: the clocks agree here */
#ifndef TMO
#define TMO 1       /* per-master timeout, ticks (a tenth of the lease by default: below L / 3) */
#endif
#ifndef MAXT
#define MAXT 5      /* client 1 starts by then */
#endif
#define LIMIT 20    /* the clock stops (a client still waiting then is an invalid end state) */
#ifndef RENEWALS
#define RENEWALS 1
#endif
#ifndef DELAYS
#define DELAYS 2
#endif
#ifndef LOSSES
#define LOSSES 0
#endif

/* requests, and the answer's kind */
#define ACQ 1
#define FLOOR 2
#define RENEW 3

/* an answer, as the client's round records it */
#define PENDING 0
#define YES 1
#define NO 2
#define FAILED 3

/* client phases: which answers the client waits for */
#define VOTE 1
#define WB 2
#define RN 3
#define IDLE 4

byte now = 0;

/* masters */
byte owner[NM];             /* client + 1, 0 = free */
byte expiry[NM];
byte delays = 0;
byte losses = 0;

/* connection c * NM + m: requests to the master, answers {kind, yes} back to the client */
chan req[NC * NM] = [3] of { byte };
chan back[NC * NM] = [3] of { byte, bit };
bit slowReq[NC * NM];       /* the next request waits for the next tick */
bit slowBack[NC * NM];      /* the next answer waits for the next tick */

/* clients */
byte phase[NC];
byte start[NC];             /* the acquire round's clock before sending */
byte at[NC];                /* the follow-up round's send time */
byte vote[NC * NM];         /* the acquire round's answers */
byte ans[NC * NM];          /* the follow-up round's answers (write-back, renewal) */
byte view[NC];              /* the client's own view: its lease valid while now < view */
byte done = 0;

/* scratch, used within one atomic step only (not part of the state) */
hidden byte n, m, kind, tm;
hidden byte yes;

#define I(c, m) ((c) * NM + (m))

#define VOTES(c, x) ((vote[I(c, 0)] == x -> 1 : 0) + (vote[I(c, 1)] == x -> 1 : 0) + (vote[I(c, 2)] == x -> 1 : 0))
#define ANSWERS(c, x) ((ans[I(c, 0)] == x -> 1 : 0) + (ans[I(c, 1)] == x -> 1 : 0) + (ans[I(c, 2)] == x -> 1 : 0))

/* a client waiting: a vote or a follow-up answer times out (Round: the copy's orTimeout) */
#define TIMEOUT(c, mm) \
  :: atomic { phase[c] == VOTE && vote[I(c, mm)] == PENDING && now >= start[c] + TMO -> vote[I(c, mm)] = FAILED } \
  :: atomic { (phase[c] == WB || phase[c] == RN) && ans[I(c, mm)] == PENDING && now >= at[c] + TMO -> ans[I(c, mm)] = FAILED }
#define TIMEOUTS(c) TIMEOUT(c, 0) TIMEOUT(c, 1) TIMEOUT(c, 2)

/* at a hand-out or a confirmed renewal: the other client's view has ended */
#define checkExclusive(c) assert(view[1 - (c)] <= now)

/* a client waits until a later tick (at most until MAXT) */
#define WAIT_TICKS(c) \
  do \
  :: break \
    :: atomic { now < MAXT -> wake = now + 1 }; atomic { now >= wake -> wake = 0 } \
  od

proctype Client(byte c) {
  byte y, wake, renewals = 0;
  if :: c == 1 -> WAIT_TICKS(c) :: else -> skip fi;
  /* the acquire round */
  atomic {
    start[c] = now; phase[c] = VOTE;
    for (m : 0 .. NM - 1) { req[I(c, m)]!ACQ }
  }
  do
  :: atomic {
       VOTES(c, YES) >= Q || VOTES(c, FAILED) >= Q || (NM - VOTES(c, NO) - VOTES(c, FAILED) < Q && VOTES(c, YES) + VOTES(c, NO) >= Q) ->
       y = VOTES(c, YES); break
     }
  TIMEOUTS(c)
  od;
  if :: y < Q -> goto over :: else -> y = 0 fi;
  /* the token write-back: the granting master with the highest token counts at once (one of them, the
     adversary's choice), any other granting master may have answered a lower token */
  atomic {
    phase[c] = WB; at[c] = now;
    if
    :: vote[I(c, 0)] == YES -> tm = 0
    :: vote[I(c, 1)] == YES -> tm = 1
    :: vote[I(c, 2)] == YES -> tm = 2
    fi;
    for (m : 0 .. NM - 1) {
      ans[I(c, m)] = PENDING;
      if
      :: m == tm -> ans[I(c, m)] = YES
      :: m != tm && vote[I(c, m)] == YES -> ans[I(c, m)] = YES
      :: else -> req[I(c, m)]!FLOOR
      fi
    }
  }
  do
  :: atomic { ANSWERS(c, YES) >= Q || ANSWERS(c, FAILED) >= Q -> y = ANSWERS(c, YES); break }
  TIMEOUTS(c)
  od;
  if :: y < Q -> goto over :: else -> y = 0 fi;
  /* the hand-out */
  atomic {
#ifdef BUG_FULL_VALIDITY
    checkExclusive(c); view[c] = now + L - D
#else
    if
    :: now - start[c] < L - D -> checkExclusive(c); view[c] = start[c] + L - D
    :: else -> skip
    fi
#endif
  }
  /* holding: renewals on a majority, each sent at a tick of the client's choosing while its view is valid */
  do
  :: renewals < RENEWALS && view[c] > now ->
     do
     :: break
       :: atomic { view[c] > now + 1 && now < MAXT -> wake = now + 1 }; atomic { now >= wake -> wake = 0 }
     od;
     if :: view[c] <= now -> break :: else -> skip fi;
     atomic {
       renewals++; phase[c] = RN; at[c] = now;
       for (m : 0 .. NM - 1) { ans[I(c, m)] = PENDING; req[I(c, m)]!RENEW }
     }
     do
     :: atomic { ANSWERS(c, PENDING) == 0 ->
          if
          :: ANSWERS(c, YES) >= Q && view[c] > at[c] ->
#ifdef BUG_RENEW_ARRIVAL
             checkExclusive(c); view[c] = now + L - D
#else
             checkExclusive(c); view[c] = at[c] + L - D
#endif
          :: ANSWERS(c, NO) > NM - Q -> view[c] = 0
          :: else -> skip
          fi;
          phase[c] = IDLE; break }
     TIMEOUTS(c)
     od
  :: else -> break
  od;
over:
  atomic { phase[c] = IDLE; done++ }
}

/* master m serves client c's next request and puts the answer on its way back */
inline serve(c, m) {
  req[I(c, m)]?kind;
  if :: owner[m] != 0 && expiry[m] <= now -> owner[m] = 0 :: else -> skip fi;
  if
  :: kind == ACQ ->
     if :: owner[m] == 0 -> owner[m] = c + 1; expiry[m] = now + L; yes = 1 :: else -> yes = 0 fi
  :: kind == FLOOR -> yes = 1
  :: kind == RENEW ->
     if :: owner[m] == c + 1 -> expiry[m] = now + L; yes = 1 :: else -> yes = 0 fi
  fi;
  back[I(c, m)]!kind, yes
}

/* an answer reaches client c: counted if that round still waits for it */
inline receive(c, m) {
  back[I(c, m)]?kind, yes;
  if
  :: kind == ACQ && phase[c] == VOTE && vote[I(c, m)] == PENDING -> vote[I(c, m)] = (yes -> YES : NO)
  :: ((kind == FLOOR && phase[c] == WB) || (kind == RENEW && phase[c] == RN)) && ans[I(c, m)] == PENDING ->
     ans[I(c, m)] = (yes -> YES : NO)
  :: else -> skip
  fi
}

#define CONNECTION(cc, mm) \
  :: atomic { nempty(req[I(cc, mm)]) && slowReq[I(cc, mm)] == 0 -> n = cc; m = mm; serve(n, m) } \
  :: atomic { nempty(back[I(cc, mm)]) && slowBack[I(cc, mm)] == 0 -> n = cc; m = mm; receive(n, m) } \
  :: atomic { nempty(req[I(cc, mm)]) && slowReq[I(cc, mm)] == 0 && delays < DELAYS -> slowReq[I(cc, mm)] = 1; delays++ } \
  :: atomic { nempty(back[I(cc, mm)]) && slowBack[I(cc, mm)] == 0 && delays < DELAYS -> slowBack[I(cc, mm)] = 1; delays++ } \
  :: atomic { nempty(req[I(cc, mm)]) && slowReq[I(cc, mm)] == 0 && losses < LOSSES -> losses++; req[I(cc, mm)]?kind } \
  :: atomic { nempty(back[I(cc, mm)]) && slowBack[I(cc, mm)] == 0 && losses < LOSSES -> losses++; back[I(cc, mm)]?kind, yes }

proctype Network() {
  do
  CONNECTION(0, 0) CONNECTION(0, 1) CONNECTION(0, 2)
  CONNECTION(1, 0) CONNECTION(1, 1) CONNECTION(1, 2)
  /* the clock ticks once nothing else can happen in this tick */
  :: atomic {
       timeout && now < LIMIT -> now++;
       for (n : 0 .. NC * NM - 1) { slowReq[n] = 0; slowBack[n] = 0 }
     }
  :: done == NC -> break
  od
}

init {
  atomic {
    for (n : 0 .. NC - 1) { run Client(n) }
    run Network()
  }
}
