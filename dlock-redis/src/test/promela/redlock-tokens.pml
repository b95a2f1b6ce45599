/*
 * Redlock's fencing tokens (RedlockBackend.writeBack, Round; tokens.lua's nextToken and dlock.lua's
 * floor on each master; the hold-back of epoch.lua): a focused companion of redlock.pml, whose masters
 * share one clock and so never make a counter that ran ahead, the case the token write-back is for (a
 * missing write-back was not found there).
 *
 * What is modelled. Two clients take one exclusive lock over NM masters (majority Q) on a discrete clock
 * (a lease is L ticks, the per-master timeout TMO ticks). Each master's clock may run ahead of the
 * others' by S ticks (chosen at the start, per master): a master's next token is max(counter + 1,
 * its clock * K), K per tick (tokens.lua: the last token plus the block, at least the server clock in
 * microseconds), so a master whose clock is ahead hands out tokens the others do not reach for S ticks.
 * A master grants a free hold (until its time + L) unless it is holding grants back after a restart;
 * the floor raises its counter to at least the token (never lowers it); a release frees the owner's hold.
 * Every request and every answer travels on its own FIFO connection (so a client's follow-ups reach a
 * master after its acquire, as Round.after makes them) and may be delayed by whole ticks (DELAYS in all);
 * a master may crash and restart empty (CRASHES in all: hold and counter lost, every message on its
 * connections lost), holding grants back until its restart + L + D. A client's round, as RedlockBackend
 * and Round do it:
 *   - acquire: start = the clock before sending; sent to every master at once; an answer counts until
 *     start + TMO; decided as Round decides (a majority granted, a majority failed, or a majority
 *     answered and granted can no longer win);
 *   - granted: the token is the highest the granting masters answered; it is written back (floor) to
 *     every master that did not answer with it, awaited from a majority or until a majority failed; then
 *     handed out if L - (now - start) - D > 0;
 *   - otherwise (no majority, late, or the write-back failed): the give-back, a release to every master
 *     that did not answer busy;
 *   - holding: the release at once (the view ends first; to every master), or none (the holds run out).
 * Client 0 starts at tick 0, client 1 at any tick up to MAXT (before, during or after client 0's round).
 *
 * What is abstracted. Exclusion under delays and renewals (redlock-validity.pml, whose invariant this
 * model also checks at each hand-out), the write queue and a follow-up overtaking its acquire
 * (redlock.pml), names and modes (the exclusive grant only), the token block (1 here, 16 in the code: the
 * room for passes between a client's threads is the engine's), retries (a client makes one round; a
 * retry is a later round, as client 1's), and clock drift within a master (its clock runs at the rate of
 * the others, ahead by a constant).
 *
 * Invariants:
 *   - tokens increase: every hand-out's token is above every token handed out before it (the order the
 *     contract asks: by grant), whether or not its round started before the earlier hand-out;
 *   - no two clients hold valid leases at once by their own views (at every hand-out).
 *
 * Bounds of the default run (scripts/spin.sh; about 3.2 million states, 1 GB, 8 s): 3 masters, lease 4
 * ticks, timeout 1 tick, no master's clock ahead, master 0's, or masters 0 and 1's ahead by S = 2 ticks
 * (the masters are alike, so that covers one or two fast clocks), one one-tick delay of a request or an
 * answer, one master crash before tick 5, client 1 starting by tick 5.
 *
 * Not found within these bounds (not seeded): a write-back sent but not awaited (-DBUG_WRITEBACK_UNAWAITED,
 * handed out before a majority answered the floor). Every master of the granting majority that needs the
 * floor gets it before the client's release on the same connection, and two majorities share such a
 * master, so it has the token before it can grant again; what the wait adds is for a floor lost with its
 * connection or delayed past the lease, which these bounds do not make. A per-master timeout of half the
 * lease (-DTMO=2, above the third docs/dlock-redlock.md asks) finds nothing here either: one delay does
 * not stretch a round that far.
 *
 * Seeded bugs:
 *   -DBUG_NO_WRITEBACK    the token not written back (handed out once a majority granted)
 *   -DBUG_NO_HOLDBACK     a restarted master grants at once, its counter lost (unsafeGrantAfterRestart)
 */

#define NC 2        /* clients */
#define NM 3        /* masters */
#define Q 2         /* majority */
#define L 4         /* lease, ticks */
#define D 0         /* drift margin, ticks */
#ifndef TMO
#define TMO 1       /* per-master timeout, ticks (a tenth of the lease by default: below L / 3) */
#endif
#define K 4         /* a master's clock floor of a token: K per tick */
#ifndef S
#define S 2         /* how far a master's clock may run ahead of the others, ticks */
#endif
#ifndef MAXT
#define MAXT 5      /* client 1 starts by then; crashes happen before it */
#endif
#define LIMIT 20    /* the clock stops (a client still waiting then is an invalid end state) */
#ifndef DELAYS
#define DELAYS 1
#endif
#ifndef CRASHES
#define CRASHES 1
#endif

/* requests, and the answer's kind */
#define ACQ 1
#define FLOOR 2
#define REL 3

/* an answer, as the client's round records it */
#define PENDING 0
#define YES 1
#define NO 2
#define FAILED 3

/* client phases: which answers the client waits for */
#define VOTE 1
#define WB 2
#define IDLE 3

byte now = 0;

/* masters */
byte owner[NM];             /* client + 1, 0 = free */
byte expiry[NM];
byte counter[NM];
byte skew[NM];              /* how far this master's clock is ahead */
byte heldUntil[NM];         /* hold-back after a restart */
byte delays = 0;
byte crashes = 0;

/* connection c * NM + m: requests {kind, token} to the master, answers {kind, yes, token} back */
chan req[NC * NM] = [3] of { byte, byte };
chan back[NC * NM] = [3] of { byte, bit, byte };
bit slowReq[NC * NM];       /* the next request waits for the next tick */
bit slowBack[NC * NM];      /* the next answer waits for the next tick */

/* clients */
byte phase[NC];
byte start[NC];             /* the acquire round's clock before sending */
byte at[NC];                /* the write-back's send time */
byte vote[NC * NM];         /* the acquire round's answers */
byte tok[NC * NM];          /* the token a master granted with */
byte ans[NC * NM];          /* the write-back's answers */
byte view[NC];              /* the client's own view: its lease valid while now < view */
byte handedMax = 0;         /* the highest token handed out */
byte done = 0;

/* scratch, used within one atomic step only (not part of the state) */
hidden byte n, m, kind, arg, tm;
hidden byte yes;

#define I(c, m) ((c) * NM + (m))

#define VOTES(c, x) ((vote[I(c, 0)] == x -> 1 : 0) + (vote[I(c, 1)] == x -> 1 : 0) + (vote[I(c, 2)] == x -> 1 : 0))
#define ANSWERS(c, x) ((ans[I(c, 0)] == x -> 1 : 0) + (ans[I(c, 1)] == x -> 1 : 0) + (ans[I(c, 2)] == x -> 1 : 0))

/* a client waiting: a vote or a write-back answer times out (Round: the copy's orTimeout) */
#define TIMEOUT(c, mm) \
  :: atomic { phase[c] == VOTE && vote[I(c, mm)] == PENDING && now >= start[c] + TMO -> vote[I(c, mm)] = FAILED } \
  :: atomic { phase[c] == WB && ans[I(c, mm)] == PENDING && now >= at[c] + TMO -> ans[I(c, mm)] = FAILED }
#define TIMEOUTS(c) TIMEOUT(c, 0) TIMEOUT(c, 1) TIMEOUT(c, 2)

/* a message on a connection (3 places: never full in these bounds) */
#define send(c, m, kind, arg) assert(nfull(req[I(c, m)])); req[I(c, m)]!kind, arg

/* the give-back (RedlockBackend.releaseEverywhere): to every master that did not answer busy */
inline giveBack(c) {
  atomic {
    phase[c] = IDLE;
    for (m : 0 .. NM - 1) { if :: vote[I(c, m)] != NO -> send(c, m, REL, 0) :: else -> skip fi }
  }
}

proctype Client(byte c) {
  byte y, wake, token;
  if
  :: c == 1 ->
     do
     :: break
     :: atomic { now < MAXT -> wake = now + 1 }; atomic { now >= wake -> wake = 0 }
     od
  :: else -> skip
  fi;
  /* the acquire round */
  atomic {
    start[c] = now; phase[c] = VOTE;
    for (m : 0 .. NM - 1) { send(c, m, ACQ, 0) }
  }
  do
  :: atomic {
       VOTES(c, YES) >= Q || VOTES(c, FAILED) >= Q || (NM - VOTES(c, NO) - VOTES(c, FAILED) < Q && VOTES(c, YES) + VOTES(c, NO) >= Q) ->
       y = VOTES(c, YES); break
     }
  TIMEOUTS(c)
  od;
  if :: y < Q -> giveBack(c); goto over :: else -> y = 0 fi;
  /* the token write-back */
  atomic {
    phase[c] = WB; at[c] = now; token = 0;
    for (m : 0 .. NM - 1) { if :: vote[I(c, m)] == YES && tok[I(c, m)] > token -> token = tok[I(c, m)] :: else -> skip fi }
    for (m : 0 .. NM - 1) {
#if defined(BUG_NO_WRITEBACK)
      ans[I(c, m)] = YES
#elif defined(BUG_WRITEBACK_UNAWAITED)
      ans[I(c, m)] = YES;
      if :: vote[I(c, m)] == YES && tok[I(c, m)] == token -> skip :: else -> send(c, m, FLOOR, token) fi
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
  TIMEOUTS(c)
  od;
  if :: y < Q || now - start[c] >= L - D -> giveBack(c); goto over :: else -> y = 0 fi;
  /* the hand-out */
  atomic {
    assert(view[1 - c] <= now);
    assert(token > handedMax);
    handedMax = token; view[c] = start[c] + L - D; phase[c] = IDLE
  }
  /* the release at once (the view ends first), or none: the holds run out */
  if
  :: atomic { view[c] = 0; for (m : 0 .. NM - 1) { send(c, m, REL, 0) } }
  :: skip
  fi;
over:
  /* the round's record is of no more use (only the view outlives it) */
  atomic {
    token = 0; start[c] = 0; at[c] = 0; phase[c] = IDLE;
    for (m : 0 .. NM - 1) { vote[I(c, m)] = PENDING; tok[I(c, m)] = 0; ans[I(c, m)] = PENDING }
    done++
  }
}

/* an answer of master m reaches client c: counted if that round still waits for it */
inline record(c, m, kind, yes, arg) {
  if
  :: kind == ACQ && phase[c] == VOTE && vote[I(c, m)] == PENDING ->
     if :: yes -> vote[I(c, m)] = YES; tok[I(c, m)] = arg :: else -> vote[I(c, m)] = NO fi
  :: kind == FLOOR && phase[c] == WB && ans[I(c, m)] == PENDING -> ans[I(c, m)] = YES
  :: else -> skip
  fi
}

/* the answer goes back at once, or (DELAYS in all) waits on its connection for a later tick; FIFO: an
   answer behind a waiting one waits too */
inline answer(c, m, kind, yes, arg) {
  if
  :: empty(back[I(c, m)]) -> record(c, m, kind, yes, arg)
  :: nempty(back[I(c, m)]) || delays < DELAYS ->
     if :: empty(back[I(c, m)]) -> delays++; slowBack[I(c, m)] = 1 :: else -> skip fi;
     back[I(c, m)]!kind, yes, arg
  fi
}

/* master m serves client c's next request */
inline serve(c, m) {
  req[I(c, m)]?kind, arg;
  if :: owner[m] != 0 && expiry[m] <= now -> owner[m] = 0; expiry[m] = 0 :: else -> skip fi;
  if
  :: kind == ACQ ->
     if
     :: owner[m] == 0 && now >= heldUntil[m] ->
        owner[m] = c + 1; expiry[m] = now + L;
        if :: counter[m] + 1 > (now + skew[m]) * K -> counter[m] = counter[m] + 1 :: else -> counter[m] = (now + skew[m]) * K fi;
        yes = 1; arg = counter[m]
     :: else -> yes = 0; arg = 0
     fi;
     answer(c, m, kind, yes, arg)
  :: kind == FLOOR ->
     if :: counter[m] < arg -> counter[m] = arg :: else -> skip fi;
     yes = 1; arg = 0;
     answer(c, m, kind, yes, arg)
  :: kind == REL ->
     if :: owner[m] == c + 1 -> owner[m] = 0; expiry[m] = 0 :: else -> skip fi
  fi
}

/* master m crashes and restarts empty: every message on its connections is lost */
inline crash(m) {
  owner[m] = 0; expiry[m] = 0; counter[m] = 0;
#ifdef BUG_NO_HOLDBACK
  heldUntil[m] = 0;
#else
  heldUntil[m] = now + L + D;
#endif
  for (n : 0 .. NC - 1) {
    do :: req[I(n, m)]?kind, arg :: empty(req[I(n, m)]) -> break od;
    do :: back[I(n, m)]?kind, yes, arg :: empty(back[I(n, m)]) -> break od
  }
}

#define CONNECTION(cc, mm) \
  :: atomic { nempty(req[I(cc, mm)]) && slowReq[I(cc, mm)] == 0 -> n = cc; m = mm; serve(n, m) } \
  :: atomic { nempty(back[I(cc, mm)]) && slowBack[I(cc, mm)] == 0 -> n = cc; m = mm; back[I(n, m)]?kind, yes, arg; record(n, m, kind, yes, arg) } \
  :: atomic { nempty(req[I(cc, mm)]) && slowReq[I(cc, mm)] == 0 && delays < DELAYS -> slowReq[I(cc, mm)] = 1; delays++ }

proctype Network() {
  do
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
       for (n : 0 .. NC * NM - 1) { slowReq[n] = 0; slowBack[n] = 0 }
     }
  :: done == NC -> break
  od
}

init {
  atomic {
    /* which masters' clocks run ahead */
    if :: skip :: skew[0] = S :: skew[0] = S; skew[1] = S fi;
    for (n : 0 .. NC - 1) { run Client(n) }
    run Network()
  }
}
