/*
 * The token room of a cohort chain: the fencing tokens of store grants, of the passes the engine makes
 * without the store, and of a downgrade's read, for one lock name.
 *
 * What is modelled. The engine (Cohort: the constructor's maxPasses = min(localHandoff, tokenBlock() - 1);
 * allowed(): not downgraded, pass() < maxPasses, the hold not known lost; LeaseImpl.passOn and its private
 * constructor: the next holder's token is its predecessor's + 1, pass + 1) and the stores' side of
 * LockBackend.tokenBlock(), in one of two kinds chosen at the start:
 *   COUNTER  (Redis exclusive.lua/dlock.lua, JDBC Tables.nextToken, mem MemoryStore.nextToken): a counter
 *            that never goes back, stepped by the block B at every grant, a downgrade's read included
 *            (the smallest step: the clock may only push it further);
 *   ORDER    (OrderTokens, used by the ZooKeeper and etcd backends): each queue entry gets the next
 *            creation order o when it is created (a write entry when its client starts waiting, a
 *            downgrade's read entry when it downgrades), a grant's token is o * SCALE, and a downgrade's
 *            read takes the last value of its write's room, ofDowngradedRead = o * SCALE + BLOCK, with
 *            tokenBlock() = BLOCK = SCALE - 1. A write entry is granted when it is the oldest entry and no
 *            write or read holds; a downgrade's read is refused when its write entry is gone from the
 *            store, granted by the read rule or not (etcd's KeyLayout.downgradeWithoutItsWrite,
 *            ZooKeeper's QueueRules.downgradeWithoutItsWrite; see BUG_ZK_DOWNGRADE_WITHOUT_WRITE).
 * Two clients, each asking the store for the write lock (or exclusive: the same here) again and again,
 * G store grants in all. A client holding a chain may at any moment: pass the hold to a waiter of its own
 * (a new holder, the next token); renew or confirm it (the store answers whether it still holds it: if not,
 * every link is told and the chain ends); downgrade (the holder takes the read lock; the store grants the
 * read or refuses it; the hold never passes again); release to the store (or learn there that it was
 * taken). The downgraded read is released later, at any moment. An operator force-releases the write hold
 * once, at any moment: the chain it took from does not know until a renewal, confirmation or release
 * tells it, and may pass on meanwhile.
 *
 * What is abstracted. Time: the FRESH and chain-time bounds of a pass are cohort-handoff.pml's; here a
 * chain the store took back may pass at any moment until it is told (more than the engine allows: the
 * token order must hold anyway). Leases and expiry (an expiry at the store is a takeover like the
 * operator's), queues beyond the FIFO order of write entries, the clock step of Redis and JDBC tokens
 * (it only makes steps larger), reads other than the downgrade's, and several waiters' identities (a pass
 * goes to "the next waiter").
 *
 * Invariants, at every hand-out of a token t (a store grant, a pass, a downgrade's read):
 *   (1) tokens increase in grant order: a store grant's token (a downgrade's read included: the store
 *       grants it), and a pass on a chain no later store grant followed, is above every token handed
 *       out before it;
 *   (2) a hand-out on a chain the store took back (a later grant was made) is below the first grant made
 *       after its chain's grant, so it sorts before the takeover, and a resource that checks tokens turns
 *       the stale holder away once it saw the later grant's token: one write holder by the tokens;
 *   (3) a pass stays in its grant's room: t < grant + tokenBlock();
 *   (4) no write pass while the chain's downgraded read holds (a writer beside a reader).
 * Every client finishes (no invalid end state).
 *
 * Bounds: B = tokenBlock() = 3 (room for 2 passes), localHandoff 3 (the room is the binding cap), G = 3
 * store write grants, 1 force-release, both store kinds: about 230,000 states, under a second; each
 * seeded bug is found in under a second, by (1) or (2) as well as by (3) or (4) (checked with those
 * two assertions taken out).
 *
 * Seeded bugs:
 *   -DBUG_ROOM_OFF_BY_ONE   maxPasses = min(localHandoff, tokenBlock()): the last pass takes the token
 *                           of the next grant (COUNTER) or of the downgrade's read (ORDER)
 *   -DBUG_NO_ROOM_CAP       maxPasses = localHandoff, without the store's room
 *   -DBUG_PASS_AFTER_DOWNGRADE  allowed() does not check the downgrade mark: the write passes while the
 *                           downgraded read holds, with a token below the read's
 *   -DBUG_BLOCK_IS_SCALE    OrderTokens.BLOCK = SCALE (tokenBlock() 16 with SCALE 16): a downgrade's read
 *                           takes the token of the next entry's grant
 *   -DBUG_ZK_DOWNGRADE_WITHOUT_WRITE  ZooKeeper's QueueRecipe before the fix of 2026-11-27 (see "Found"
 *                           below): a downgrade's read whose write entry is gone is refused only when the
 *                           read rule does not grant it; granted, it takes its write's room token
 *
 * Found by this model, fixed since (docs/models.md; the test is ForceReleaseRaceTest.
 * aDowngradeWhoseWriteHoldWasForceReleasedIsRefusedEvenWithNoWriterAhead, which failed before the fix):
 * QueueRecipe.decide now refuses a downgrade's read whose write entry is not in the read's answer before
 * applying the read rule (QueueRules.downgradeWithoutItsWrite: the entry of the downgradeFrom owner at the
 * sequence the `d-` entry names), deletes it and fails with etcd's LockBackendException, which is what
 * the default run models. Before the fix, the ZooKeeper backend granted a downgrade's read
 * whose write entry an operator deleted, if no write entry was ahead of the read's `d-` entry then
 * (QueueRecipe.decide ended the downgrade only when not granted), and Node.token() gave it
 * ofDowngradedRead(writeCzxid), the last value of the deleted write's room. If another client's write was
 * granted (and released) between the force-release and the read's getChildren, its token (its own
 * czxid * 16) is above the read's: a store grant with a token below one handed out before it (and below
 * what tokenBlock() promised after that write's grant). The shortest run (spin -t -p
 * -DBUG_ZK_DOWNGRADE_WITHOUT_WRITE; SCALE 4, BLOCK 3 here): client 0's entry has order 1, client 1's
 * order 2; client 0 is granted token 4; the operator force-releases it; client 1 is granted token 8 and
 * releases; client 0, not yet told, downgrades: its read entry (order 3) has no write entry ahead and is
 * granted with token 4 + 3 = 7. etcd refuses that read (KeyLayout.downgradeWithoutItsWrite, before
 * deciding), as this model's ORDER store does by default. It fails safe (a resource that saw token 8
 * turns the reader away; no writer holds beside the read, since a write entry ahead refuses it) and
 * needs the holder's thread to take the read lock (QueueRecipe.heldWrite sees the node HELD) before
 * HeldNodes.deletionEvent and its exists check marked the write node ENDED.
 */

#define B 3                /* tokenBlock() */
#define HANDOFF 3          /* LockClient.Builder.localHandoff passes */
#define G 3                /* store write grants in all */
#define NONE 255

#ifdef BUG_BLOCK_IS_SCALE
#define SCALE B            /* BLOCK = SCALE */
#else
#define SCALE (B + 1)      /* OrderTokens: BLOCK = SCALE - 1 */
#endif

#ifdef BUG_NO_ROOM_CAP
#define MAXPASSES HANDOFF
#elif defined(BUG_ROOM_OFF_BY_ONE)
#define MAXPASSES (HANDOFF < B -> HANDOFF : B)
#else
#define MAXPASSES (HANDOFF < B - 1 -> HANDOFF : B - 1)
#endif

#ifdef BUG_PASS_AFTER_DOWNGRADE
#define NOT_DOWNGRADED(x) true
#else
#define NOT_DOWNGRADED(x) !downgraded[x]
#endif

bool order;                /* the store kind: ORDER (true) or COUNTER */

/* the store */
byte counter = 0;          /* COUNTER: the last token */
byte lastOrder = 0;        /* ORDER: the last creation order */
byte entry[2];             /* ORDER: the client's write entry's order, 0 for none */
byte holder = NONE;        /* the chain whose write hold the store has */
byte holderClient = NONE;  /* and its client */
bool readHeld[2];          /* the client's downgraded read holds at the store */

/* the chains (one per store write grant) */
byte grants = 0;
byte grantTok[G];
byte lastTok[G];           /* the last token handed out on the chain */
byte passes[G];
byte nextAfter[G];         /* the token of the first store grant after this chain's, 0 while none */
bool downgraded[G];
byte maxHanded = 0;

/* A store grant of token t: of chain ch's write, or a downgrade's read (ch: the write's chain for ORDER,
 * whose room it ends, NONE for COUNTER, whose read is a grant of its own). */
inline storeGrant(t, ch) {
  assert(t > maxHanded);                                       /* (1) */
  for (k : 0 .. G - 1) {
    if :: k < grants && k != ch && nextAfter[k] == 0 -> nextAfter[k] = t :: else -> skip fi
  }
  k = 0;
  maxHanded = t
}

/* A hand-out of t on chain ch without the store: a pass. */
inline chainHandOut(t, ch) {
  if
  :: nextAfter[ch] == 0 -> assert(t > maxHanded)               /* (1) */
  :: else -> assert(t < nextAfter[ch])                         /* (2) */
  fi;
  if :: t > maxHanded -> maxHanded = t :: else -> skip fi;
  lastTok[ch] = t
}

/* The oldest live write entry: the one the store may grant (ORDER); COUNTER grants whoever asks. */
#define oldest(c) (!order || entry[1 - (c)] == 0 || entry[c] < entry[1 - (c)])

proctype Client(byte c) {
  byte ch = NONE;          /* the chain this client holds (believes it holds) */
  byte t, k;
  bool asked = false;
  do
  :: atomic { ch == NONE && !asked && grants < G ->            /* starts waiting for the write lock */
       asked = true;
       if :: order -> lastOrder++; entry[c] = lastOrder :: else -> skip fi }
  :: atomic { ch == NONE && asked && holder == NONE && !readHeld[0] && !readHeld[1] &&
              grants < G && oldest(c) ->                       /* the store grants it */
       ch = grants; grants++;
       if :: order -> t = entry[c] * SCALE :: else -> counter = counter + B; t = counter fi;
       grantTok[ch] = t; lastTok[ch] = t;
       storeGrant(t, ch);
       holder = ch; holderClient = c; asked = false }
  :: atomic { ch != NONE && passes[ch] < MAXPASSES && NOT_DOWNGRADED(ch) ->   /* Cohort: a pass */
       assert(!readHeld[c]);                                   /* (4) */
       t = lastTok[ch] + 1;
       assert(t < grantTok[ch] + B);                           /* (3) */
       passes[ch]++;
       chainHandOut(t, ch) }
  :: atomic { ch != NONE && holder != ch ->                    /* a renewal or confirmation: not held */
       ch = NONE; entry[c] = 0 }                               /* every link is told */
  :: atomic { ch != NONE && !downgraded[ch] && !readHeld[c] ->  /* downgrade: asks for the read lock */
       downgraded[ch] = true;
       if
       :: !order ->                                            /* a grant like any other */
          if
          :: holder == NONE || holder == ch ->
             counter = counter + B; t = counter; storeGrant(t, NONE); readHeld[c] = true
          :: else -> skip                                      /* another writer holds: refused */
          fi
       :: order ->                                             /* its `d-` entry, created now */
          lastOrder++;
          if
          :: holder == ch -> t = grantTok[ch] + B; storeGrant(t, ch); readHeld[c] = true
#ifdef BUG_ZK_DOWNGRADE_WITHOUT_WRITE
          :: holder != ch && entry[1 - c] == 0 ->             /* no write entry ahead: granted */
             t = grantTok[ch] + B; storeGrant(t, ch); readHeld[c] = true
          :: holder != ch && entry[1 - c] != 0 -> skip         /* a writer ahead: refused */
#else
          :: holder != ch -> skip                              /* its write entry is gone: refused */
#endif
          fi
       fi }
  :: atomic { ch != NONE ->                                    /* release to the store */
       if :: holder == ch -> holder = NONE; holderClient = NONE :: else -> skip fi; /* else: not held */
       ch = NONE; entry[c] = 0 }
  :: atomic { readHeld[c] -> readHeld[c] = false }             /* the downgraded read ends */
  :: atomic { ch == NONE && !readHeld[c] && grants >= G -> asked = false; entry[c] = 0; break }
  od;
  t = 0; k = 0
}

proctype Operator() {
  if
  :: atomic { holder != NONE ->                                /* force-release: the hold and its entry */
       entry[holderClient] = 0; holder = NONE; holderClient = NONE }
  :: skip
  fi
}

init {
  atomic {
    if :: order = true :: order = false fi;
    run Client(0);
    run Client(1);
    run Operator()
  }
}
