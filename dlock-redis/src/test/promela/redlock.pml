/*
 * Redlock (RedlockBackend, Round, dlock.lua on each master): majority, validity, give-back, token
 * write-back, follow-up order, renewals on a majority, and a master restarting empty with its hold-back.
 *
 * What is modelled. NC clients take one exclusive lock over NM independent masters (majority Q), on a
 * discrete clock shared by all (ticks; a lease is L ticks, a per-master timeout TMO ticks). Each master is
 * dlock.lua's exclusive grant: a hold (owner, expiry), a token counter (next token = max(counter + 1,
 * clock * K), the clock floor of nextToken), and the hold-back of epoch.lua: a master that restarted
 * without persistence grants nothing until restart + L + D. Each client-master connection is FIFO
 * (one TCP connection); an acquire is first put in the client's write queue (Netty queues a command
 * issued off its event loop) and reaches the connection a step later, while a follow-up issued from the
 * event loop (a decision runs there) goes straight to the connection. A client's round:
 *   - acquire: sent to every master at once (start = the clock before sending); a master's answer counts
 *     until its timeout (start + TMO, reached only once the request left the write queue); decided as
 *     Round decides: a majority granted, a majority failed, or a majority answered and granted can no
 *     longer win;
 *   - granted by a majority: the highest token is written back (floor) to the masters that did not
 *     answer it, awaited from a majority; then handed out only if L - (now - start) - D > 0, with the
 *     client's own view of its lease ending at start + L - D (the engine's deadline, from its send time);
 *   - otherwise (no majority, late, or the write-back failed): the give-back, a release to every master
 *     that did not answer busy, each sent once that master answered or timed out (Round.after), awaited
 *     (each answered or timed out) before the busy answer; then a new round with the same owner;
 *   - holding: RENEWALS renewal rounds (valid from its send time when a majority confirmed, lost when a
 *     majority denied, else unchanged), then the release (the view ends first), sent to each master
 *     after its acquire answered or timed out.
 * Faults: a master crashes and restarts empty (CRASHES in all: holds, counter and every message on its
 * connections lost); a message is lost (LOSSES in all: an acquire's answer, or any other request).
 *
 * What is abstracted. Clock drift (one clock; D is the margin the engine subtracts, which only shortens
 * a view), names and read-write modes (the exclusive grant only), the waiter queue and wake-ups (a
 * client retries at once), the uptime check (minUptime, off by default), a restart from a file (the
 * single-server model hold-back.pml has it), a command Lettuce re-sends after a reconnect, and how long
 * the engine keeps retrying (a client retries until granted; it does not give up).
 *
 * Invariants:
 *   - no two clients hold valid leases at once by their own views: at every hand-out and every
 *     confirmed renewal, every other client's view has ended;
 *   - tokens increase: a round that starts after a hand-out hands out a larger token;
 *   - no stray hold: a hold a client does not know of (its round is over) exists only while a release of
 *     it is still on its way to that master, or after a release to it was lost (a stray hold refuses
 *     every client, its owner's retries included, until it expires);
 *   - every client gets the lock and releases it (no invalid end state).
 *
 * Bounds of the default run (scripts/spin.sh; about 6 million states, 30-40 s, 1.7 GB): 2 clients, one
 * acquire round each (no retry), no renewal, one master crash, one message delayed by a tick, two client
 * pauses of a tick, no message loss, time up to tick 5. Renewals, losses, retries and longer pauses are
 * in the model (-DRENEWALS=1 -DLOSSES=1 -DROUNDS=2 ...) but each multiplies the states beyond what fits
 * the job; with them the search did not complete in 3 GB.
 *
 * Seeded bugs:
 *   -DBUG_NO_HOLDBACK     a restarted master votes again at once (unsafeGrantAfterRestart)
 *   -DBUG_NO_GIVEBACK     a failed round gives nothing back (release-everywhere skipped)
 *   -DBUG_OVERTAKE        a follow-up goes at once, not after its master answered or timed out the acquire
 * Not found within the default bounds: BUG_FULL_VALIDITY (the lease counted from the quorum's
 * arrival, the time spent not subtracted) needs two delayed answers and a pause of a lease, and
 * BUG_NO_WRITEBACK (the token not written back) a counter that ran ahead of the clocks; both runs did
 * not complete (over 11 million states). The focused models redlock-validity.pml (answers delayed apart
 * from their grants, renewals) and redlock-tokens.pml (a master's clock ahead) find each in seconds.
 */

#define NC 2        /* clients */
#define NM 3        /* masters */
#define Q 2         /* majority */
#define L 4         /* lease, ticks */
#define D 0         /* drift margin, ticks: the clocks agree here */
#define TMO 1       /* per-master timeout, ticks (a tenth of the lease by default: below L / 3) */
#define K 4         /* clock floor of a token: K per tick */
#ifndef MAXT
#define MAXT 5 /* time passes freely up to MAXT, later only when nothing else can move */
#endif
#define LIMIT 30    /* the clock stops (a client still waiting then is an invalid end state) */
#ifndef RENEWALS
#define RENEWALS 0 
#endif
#ifndef CRASHES
#define CRASHES 1 
#endif
#ifndef ROUNDS
#define ROUNDS 1    /* acquire rounds per client; then it gives up */
#endif
#define QUEUED I(0, NM - 1)  /* the one connection where an acquire first waits in the write queue */
#ifndef DELAYS
#define DELAYS 1
#endif
#ifndef PAUSES
#define PAUSES 2
#endif
#ifndef LOSSES
#define LOSSES 0 
#endif

/* messages */
#define ACQ 1
#define FLOOR 2
#define REL 3
#define RENEW 4

/* a master's answer, as the client's round records it */
#define PENDING 0
#define YES 1
#define NO 2
#define FAILED 3
#define SKIP 4      /* give-back: nothing to give back there (answered busy) */
#define DEFER 5     /* give-back or release: waits for that master's acquire answer or timeout */

/* client phases */
#define VOTE 1
#define WB 2
#define GB 3
#define HOLD 4
#define RN 5
#define OVER 6      /* the round is over: busy answered, or released */

byte now = 0;

/* masters */
byte owner[NM];             /* client + 1, 0 = free */
byte expiry[NM];
byte counter[NM];
byte heldUntil[NM];         /* hold-back after a restart */
byte crashes = 0;
byte delays = 0;            /* a message waits for a later tick */
byte pauses = 0;            /* a client waits for a later tick before its next step */
byte losses = 0;

/* connections c * NM + m: FIFO of {kind, round parity, token} */
chan conn[NC * NM] = [4] of { byte, bit, byte };
bit queued[NC * NM];        /* an acquire in the client's write queue */
bit queuedPar[NC * NM];
bit lostRelease[NC * NM];   /* a release on this connection was lost */
bit slow[NC * NM];          /* this connection's next message waits for the next tick */

/* clients */
byte phase[NC];
bit par[NC];                /* round parity, tags a round's messages */
byte start[NC];             /* the acquire round's clock before sending */
byte at[NC];                /* the current follow-up round's send time */
byte vote[NC * NM];         /* the acquire round's answers */
byte tok[NC * NM];          /* the token a master granted with */
byte ans[NC * NM];          /* the follow-up round's answers (write-back, give-back, renewal) */
byte view[NC];              /* the client's own view: its lease valid while now < view */
byte handedMax = 0;         /* the highest token handed out */
byte done = 0;
byte wakeAt[NC];            /* a paused client waits for this tick */

/* scratch, used within one atomic step only (not part of the state) */
hidden byte n, m, kind, arg;
hidden byte tag;
hidden byte late;

#define I(c, m) ((c) * NM + (m))

/* a message on client c's connection to master m (4 places: never full in these bounds) */
#define send(c, m, kind, arg) assert(nfull(conn[I(c, m)])); conn[I(c, m)]!kind, par[c], arg

/* a vote times out: only once the request left the write queue (it did long before, in practice) */
#define voteTimesOut(c, m) (vote[I(c, m)] == PENDING && queued[I(c, m)] == 0 && now >= start[c] + TMO)
#define settledVote(c, m) (vote[I(c, m)] != PENDING)

/* a client waiting: a vote or a follow-up answer times out, or a deferred follow-up goes */
#define FOLLOW(c, mm) \
  :: atomic { voteTimesOut(c, mm) -> vote[I(c, mm)] = FAILED } \
  :: atomic { ans[I(c, mm)] == DEFER && settledVote(c, mm) -> ans[I(c, mm)] = PENDING; send(c, mm, REL, 0) } \
  :: atomic { ans[I(c, mm)] == PENDING && (phase[c] == WB || phase[c] == GB || phase[c] == RN) && now >= at[c] + TMO -> \
       ans[I(c, mm)] = FAILED }
#define FOLLOWUPS(c) FOLLOW(c, 0) FOLLOW(c, 1) FOLLOW(c, 2)

/* how many of the acquire round's votes, or of the follow-up round's answers, are x */
#define VOTES(c, x) ((vote[I(c, 0)] == x -> 1 : 0) + (vote[I(c, 1)] == x -> 1 : 0) + (vote[I(c, 2)] == x -> 1 : 0))
#define ANSWERS(c, x) ((ans[I(c, 0)] == x -> 1 : 0) + (ans[I(c, 1)] == x -> 1 : 0) + (ans[I(c, 2)] == x -> 1 : 0))

/* a client starts its next step now or at a later tick */
#define PAUSE(c) \
  do \
  :: break \
  :: atomic { now < MAXT && pauses < PAUSES -> pauses++; \
       wakeAt[c] = now + 1 }; \
     atomic { now >= wakeAt[c] -> wakeAt[c] = 0 } \
  od

/* at a hand-out or a confirmed renewal: every other client's view has ended */
inline checkExclusive(c) {
  for (m : 0 .. NC - 1) { assert(m == c || view[m] <= now) }
}

/* the busy answer: the client keeps no hold it does not know of, but where a release is on its way or lost */
inline checkNoStray(c) {
  for (m : 0 .. NM - 1) {
    assert(!(owner[m] == c + 1 && expiry[m] > now) || conn[I(c, m)]??[REL, _, _] || lostRelease[I(c, m)])
  }
}

/* give back everywhere, and wait for each master's answer or timeout */
inline giveBack(c) {
  atomic {
    phase[c] = GB; at[c] = now;
    for (m : 0 .. NM - 1) {
#ifdef BUG_NO_GIVEBACK
      ans[I(c, m)] = SKIP
#else
      if
      :: vote[I(c, m)] == NO -> ans[I(c, m)] = SKIP
#ifndef BUG_OVERTAKE
      :: vote[I(c, m)] == PENDING -> ans[I(c, m)] = DEFER
#endif
      :: else -> ans[I(c, m)] = PENDING; send(c, m, REL, 0)
      fi
#endif
    }
  }
  do
  :: atomic {
       (ans[I(c, 0)] == SKIP || ans[I(c, 0)] == YES || ans[I(c, 0)] == FAILED) &&
       (ans[I(c, 1)] == SKIP || ans[I(c, 1)] == YES || ans[I(c, 1)] == FAILED) &&
       (ans[I(c, 2)] == SKIP || ans[I(c, 2)] == YES || ans[I(c, 2)] == FAILED) ->
       phase[c] = OVER; checkNoStray(c); break
     }
  FOLLOWUPS(c)
  od
}

proctype Client(byte c) {
  byte y, token, floorAtStart, renewals = 0, rounds = 0;
  bool granted = false;
  do
  :: granted || rounds == ROUNDS -> break
  :: else ->
     PAUSE(c);
     rounds++;
     /* the acquire round */
     atomic {
       par[c] = 1 - par[c]; start[c] = now; floorAtStart = handedMax; phase[c] = VOTE;
       for (m : 0 .. NM - 1) { vote[I(c, m)] = PENDING; ans[I(c, m)] = PENDING;
         if
         :: I(c, m) == QUEUED -> queued[I(c, m)] = 1; queuedPar[I(c, m)] = par[c]
         :: else -> send(c, m, ACQ, 0)
         fi
       }
     }
     do
     :: atomic {
          VOTES(c, YES) >= Q || VOTES(c, FAILED) >= Q || (NM - VOTES(c, NO) - VOTES(c, FAILED) < Q && VOTES(c, YES) + VOTES(c, NO) >= Q) ->
          y = VOTES(c, YES); break
        }
     FOLLOWUPS(c)
     od;
     if
     :: y >= Q ->
        /* the token write-back */
        atomic {
          phase[c] = WB; at[c] = now; token = 0;
          for (m : 0 .. NM - 1) { if :: vote[I(c, m)] == YES && tok[I(c, m)] > token -> token = tok[I(c, m)] :: else -> skip fi }
          for (m : 0 .. NM - 1) {
#ifdef BUG_NO_WRITEBACK
            ans[I(c, m)] = YES
#else
            if
            :: vote[I(c, m)] == YES && tok[I(c, m)] == token -> ans[I(c, m)] = YES
            :: else -> ans[I(c, m)] = PENDING; send(c, m, FLOOR, token)
            fi
#endif
          }
        }
        do
        :: atomic { ANSWERS(c, YES) >= Q || ANSWERS(c, FAILED) >= Q -> y = ANSWERS(c, YES); break }
        FOLLOWUPS(c)
        od;
#ifdef BUG_FULL_VALIDITY
        if
        :: y >= Q ->
           atomic {
             checkExclusive(c); view[c] = now + L - D;
#else
        if
        :: y >= Q && now - start[c] < L - D ->
           atomic {
             checkExclusive(c); view[c] = start[c] + L - D;
#endif
             assert(token > floorAtStart);
             if :: token > handedMax -> handedMax = token :: else -> skip fi;
             phase[c] = HOLD; granted = true
           }
        :: else -> giveBack(c)
        fi
     :: else -> giveBack(c)
     fi
  od;
  if :: !granted -> atomic { phase[c] = OVER; done++ }; goto gaveUp :: else -> skip fi;
  /* holding: renewals on a majority */
  do
  :: renewals < RENEWALS && view[c] > now ->
     PAUSE(c);
     atomic {
       renewals++; phase[c] = RN; at[c] = now;
       for (m : 0 .. NM - 1) { ans[I(c, m)] = PENDING; send(c, m, RENEW, 0) }
     }
     do
     :: atomic { ANSWERS(c, YES) >= Q ->
          if :: view[c] > at[c] -> checkExclusive(c); view[c] = at[c] + L - D :: else -> skip fi; break }
     :: atomic { ANSWERS(c, NO) > NM - Q -> view[c] = 0; break }
     :: atomic { ANSWERS(c, YES) < Q && ANSWERS(c, NO) <= NM - Q && ANSWERS(c, PENDING) == 0 -> break }
     FOLLOWUPS(c)
     od;
     phase[c] = HOLD
  :: else -> break
  od;
  /* the release: the view ends first; to each master after its acquire answered or timed out */
  PAUSE(c);
  atomic {
    view[c] = 0; phase[c] = GB; at[c] = now;
    for (m : 0 .. NM - 1) {
      if
#ifndef BUG_OVERTAKE
      :: vote[I(c, m)] == PENDING -> ans[I(c, m)] = DEFER
#endif
      :: else -> ans[I(c, m)] = YES; send(c, m, REL, 0)
      fi
    }
  }
  do
  :: atomic { ans[I(c, 0)] != DEFER && ans[I(c, 1)] != DEFER && ans[I(c, 2)] != DEFER -> phase[c] = OVER; done++; break }
  FOLLOWUPS(c)
  od;
gaveUp:
  skip
}

/* master m takes the next message of client c's connection; answered: whether the answer reaches c */
inline serve(c, m, answered) {
  conn[I(c, m)]?kind, tag, arg;
  if :: owner[m] != 0 && expiry[m] <= now -> owner[m] = 0 :: else -> skip fi;
  late = (tag != par[c] || phase[c] == OVER);
  if
  :: kind == ACQ ->
     if
     :: owner[m] == 0 && now >= heldUntil[m] ->
        /* a grant for a round that is over must have its release behind it on this connection */
        assert(!late || conn[I(c, m)]??[REL, _, _] || lostRelease[I(c, m)]);
        owner[m] = c + 1; expiry[m] = now + L;
        if :: counter[m] + 1 > now * K -> counter[m] = counter[m] + 1 :: else -> counter[m] = now * K fi;
        if :: answered && !late && vote[I(c, m)] == PENDING -> vote[I(c, m)] = YES; tok[I(c, m)] = counter[m] :: else -> skip fi
     :: else ->
        if :: answered && !late && vote[I(c, m)] == PENDING -> vote[I(c, m)] = NO :: else -> skip fi
     fi
  :: kind == FLOOR ->
     if :: counter[m] < arg -> counter[m] = arg :: else -> skip fi;
     if :: answered && !late && phase[c] == WB && ans[I(c, m)] == PENDING -> ans[I(c, m)] = YES :: else -> skip fi
  :: kind == REL ->
     if :: owner[m] == c + 1 -> owner[m] = 0 :: else -> skip fi;
     if :: answered && !late && phase[c] == GB && ans[I(c, m)] == PENDING -> ans[I(c, m)] = YES :: else -> skip fi
  :: kind == RENEW ->
     if
     :: owner[m] == c + 1 && expiry[m] > now ->
        expiry[m] = now + L;
        if :: answered && phase[c] == RN && ans[I(c, m)] == PENDING -> ans[I(c, m)] = YES :: else -> skip fi
     :: else ->
        if :: answered && phase[c] == RN && ans[I(c, m)] == PENDING -> ans[I(c, m)] = NO :: else -> skip fi
     fi
  fi
}

/* a lost message: an acquire is served but its answer lost; any other request is lost itself */
inline lose(c, m) {
  if
  :: conn[I(c, m)]?[ACQ, _, _] -> serve(c, m, false)
  :: else -> conn[I(c, m)]?kind, tag, arg; if :: kind == REL -> lostRelease[I(c, m)] = 1 :: else -> skip fi
  fi
}

/* master m crashes and restarts empty: every message on its connections is lost */
inline crash(m) {
  owner[m] = 0; counter[m] = 0;
#ifdef BUG_NO_HOLDBACK
  heldUntil[m] = 0;
#else
  heldUntil[m] = now + L + D;
#endif
  for (n : 0 .. NC - 1) {
    do
    :: conn[I(n, m)]?kind, tag, arg -> if :: kind == REL -> lostRelease[I(n, m)] = 1 :: else -> skip fi
    :: empty(conn[I(n, m)]) -> break
    od
  }
}

#define CONNECTION(cc, mm) \
  :: atomic { nempty(conn[I(cc, mm)]) && slow[I(cc, mm)] == 0 -> n = cc; m = mm; serve(n, m, true) } \
  :: atomic { nempty(conn[I(cc, mm)]) && slow[I(cc, mm)] == 0 && now < MAXT && delays < DELAYS -> slow[I(cc, mm)] = 1; delays++ } \
  :: atomic { queued[I(cc, mm)] == 1 && nfull(conn[I(cc, mm)]) -> \
       conn[I(cc, mm)]!ACQ, queuedPar[I(cc, mm)], 0; queued[I(cc, mm)] = 0 } \
  :: atomic { losses < LOSSES && nempty(conn[I(cc, mm)]) && slow[I(cc, mm)] == 0 -> losses++; n = cc; m = mm; lose(n, m) }

proctype Network() {
  do
  /* a master serves a message, a queued acquire reaches its connection, a message is lost */
  CONNECTION(0, 0) CONNECTION(0, 1) CONNECTION(0, 2)
  CONNECTION(1, 0) CONNECTION(1, 1) CONNECTION(1, 2)
  /* the clock ticks once nothing else can happen in this tick; a master may crash and restart empty */
  :: atomic {
       timeout && now < LIMIT ->
       if
       :: crashes < CRASHES && now < MAXT -> crashes++; m = 0; crash(m)
       :: crashes < CRASHES && now < MAXT -> crashes++; m = 1; crash(m)
       :: crashes < CRASHES && now < MAXT -> crashes++; m = 2; crash(m)
       :: true -> skip
       fi;
       now++;
       for (n : 0 .. NC * NM - 1) { slow[n] = 0 }
     }
  :: done == NC && empty(conn[0]) && empty(conn[1]) && empty(conn[2]) && empty(conn[3]) && empty(conn[4]) && empty(conn[5]) -> break
  od
}

init {
  atomic {
    for (n : 0 .. NC - 1) { run Client(n) }
    run Network()
  }
}
