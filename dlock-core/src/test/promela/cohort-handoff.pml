/*
 * Cohort hand-off (dev.dlock.internal.Cohort): when may a hold pass to a local waiter without the store?
 *
 * What is modelled. One client A holds a store grant on one lock; its callers pass the hold on to each
 * other. The holder (caller 0) starts holding; callers 1 and 2 ask at any moment and queue in the order
 * they asked. An operator (or a store that lost its state) may take the hold back from A once, at any
 * moment. The watchdog renews the hold: it sends a renewal, the store answers it, the answer is applied
 * (three steps, so a takeover can fall between them). A release does what Cohort.release does:
 *   - nobody waiting, or the chain bound reached, or the hold known lost: back to the store;
 *   - the first waiter asked before the request of the last confirmation (grant or renewal) was sent, and
 *     that request was sent less than FRESH ticks ago: pass without the store;
 *   - else, if a renewal is at the store: back to the store;
 *   - else confirm: ask the store once (send, store answers, answer applied; `LockBackend.holds`, a
 *     read or a renewal: only its held/not-held answer is modelled); held: pass to the first waiter if
 *     it asked before this confirmation was sent; not held: the hold is lost, every link is told.
 * A waiter that is not passed the hold goes to the store when the chain ends (not modelled further).
 * "Asked before" is event order (a global counter), not ticks: the engine compares nanoTime readings.
 *
 * What is abstracted. Tokens (the block per grant makes passes' tokens sit between store grants; the
 * Lincheck test checks token order on the engine itself), the lease deadline (long against FRESH here),
 * a second client's grant after the takeover (it is what makes a late pass two holders; the invariants
 * below speak of the takeover itself), the time limit of a chain, and the store's wake-ups.
 *
 * Invariants, at every pass:
 *   (1) the waiter asked before the store took the hold back: the pass can be ordered before the
 *       takeover, so it never makes a second holder beside a grant made after the takeover;
 *   (2) a pass made without its own confirmation comes less than FRESH ticks after the takeover: the
 *       local view of the hold is never more than FRESH stale.
 * At the end: a hold taken back is told (the confirmation or the release to the store finds it gone),
 * and every caller finishes (no invalid end state).
 *
 * Seeded bugs:
 *   -DBUG_NO_ASK_CHECK    a pass does not check that the waiter asked before the last confirmation
 *   -DBUG_NO_AGE_CHECK    a pass without the store does not check the age of the last confirmation
 *   -DBUG_ARRIVAL_TIME    a renewal counts as confirming from when its answer arrived, not when it was sent
 *   -DBUG_PASS_WHEN_LOST  a confirmation the store refused still passes the hold
 */

#define W 3        /* callers of client A: 0 holds first, 1 and 2 may ask */
#define FRESH 2    /* ticks a confirmation is fresh for a pass without the store */
#define MAXP 2     /* passes per chain */
#define MAXT 4
#define RENEWALS 1
#define NONE 255

byte now = 0;
byte ev = 1;                 /* event counter: orders asks and confirmation requests */

/* the store */
bool heldByA = true;         /* the store holds A's grant */
bool takenBack = false;      /* ghost: the operator took it back */
byte takenAt = 0;

/* client A's view of the hold */
byte confirmedEv = 1;        /* when the request of the last confirmation was sent (event order) */
byte confirmedT = 0;         /* and at which tick */
bool renewing = false;       /* a renewal is at the store (the lease's renewal claim) */
bool chainEnded = false;     /* the hold went back to the store, or is known lost */
bool told = false;           /* the holders were told that the store no longer held it */
byte passes = 0;
byte passedTo = NONE;

byte asked[W];               /* 0: has not asked */
bool askedAfterTakeover[W];
byte finished = 0;

inline backToStore() {
  if :: heldByA -> heldByA = false :: else -> told = true fi;
  chainEnded = true
}

/* The first caller still waiting, in the order they asked; NONE if there is none. */
inline firstWaiting(f) {
  f = NONE;
  for (i : 1 .. W - 1) {
    if
    :: asked[i] != 0 && passedTo != i && (f == NONE || asked[i] < asked[f]) -> f = i
    :: else -> skip
    fi
  }
}

inline pass(to, confirmed) {
  assert(!askedAfterTakeover[to]);                             /* (1) */
  assert(confirmed || !takenBack || now - takenAt < FRESH);    /* (2) */
  passes++;
  asked[to] = 0;
  passedTo = to
}

inline release(me) {
  byte i;
  byte f;
  byte sentEv;
  byte sentT;
  bool ok;
  bool confirm = false;
  bool fresh;
  atomic {
    firstWaiting(f);
    if
    :: f == NONE || passes >= MAXP || chainEnded -> backToStore()
    :: else ->
#ifdef BUG_NO_ASK_CHECK
       fresh = now - confirmedT < FRESH;
#elif defined(BUG_NO_AGE_CHECK)
       fresh = asked[f] < confirmedEv;
#else
       fresh = asked[f] < confirmedEv && now - confirmedT < FRESH;
#endif
       if
       :: fresh -> pass(f, false)
       :: !fresh && renewing -> backToStore()
       :: !fresh && !renewing -> renewing = true; sentEv = ev; ev++; sentT = now; confirm = true
       fi
    fi
  }
  if
  :: confirm ->
     atomic { ok = heldByA }                                   /* the store answers the confirmation */
     atomic {
       renewing = false;
       if
#ifdef BUG_PASS_WHEN_LOST
       :: !ok -> firstWaiting(f); if :: f != NONE -> pass(f, true) :: else -> told = true; chainEnded = true fi
#else
       :: !ok -> told = true; chainEnded = true                 /* lost: every link is told */
#endif
       :: ok ->
          confirmedEv = sentEv; confirmedT = sentT;
          firstWaiting(f);
          if
          :: f != NONE && asked[f] < confirmedEv -> pass(f, true)
          :: else -> backToStore()
          fi
       fi
     }
  :: else -> skip
  fi;
  d_step { i = 0; f = 0; sentEv = 0; sentT = 0; ok = false; fresh = false; confirm = false }  /* smaller states */
}

proctype Caller(byte me) {
  if
  :: me == 0 -> skip                                          /* holds the store grant */
  :: else ->
     if
     :: atomic { chainEnded -> finished++ }; goto out          /* asks too late: goes to the store */
     :: atomic { !chainEnded -> asked[me] = ev; ev++; askedAfterTakeover[me] = takenBack }
     fi;
     atomic { passedTo == me || chainEnded }
     if :: passedTo != me -> asked[me] = 0; finished++; goto out :: else -> skip fi
  fi;
  /* holds: releases at any later moment */
  release(me);
  finished++;
out:
  skip
}

proctype Watchdog() {
  byte sentEv;
  byte sentT;
  byte n = 0;
  bool ok;
  do
  :: atomic { n < RENEWALS && !chainEnded && !renewing -> renewing = true; sentEv = ev; ev++; sentT = now };
     atomic { ok = heldByA };                                  /* the store answers the renewal */
     atomic {
       if
       :: ok && !chainEnded ->
#ifdef BUG_ARRIVAL_TIME
          confirmedEv = ev; ev++; confirmedT = now
#else
          confirmedEv = sentEv; confirmedT = sentT
#endif
       :: !ok && !chainEnded -> told = true; chainEnded = true
       :: else -> skip
       fi;
       renewing = false;
       sentEv = 0; sentT = 0; ok = false
     };
     n++
  :: break
  od
}

proctype Operator() {
  if
  :: atomic { heldByA -> heldByA = false; takenBack = true; takenAt = now }
  :: skip
  fi
}

proctype Clock() {
  do
  :: atomic { now < MAXT -> now++ }
  :: finished == W -> break
  od
}

init {
  atomic {
    byte i;
    for (i : 0 .. W - 1) { run Caller(i) }
    run Watchdog();
    run Operator();
    run Clock()
  }
  finished == W;
  assert(!takenBack || told)
}
