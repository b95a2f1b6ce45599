/*
 * The Redis exclusive lock of exclusive.lua: mutual exclusion and no lost wake-up.
 *
 * What is modelled. Each script call (acquire, release, renew) is one atomic step, as a Lua script is in
 * Redis. Time is a small integer clock that any process may see and the clock process advances; a hold
 * and the waiter marker expire by it, as keys with a PX do. A client subscribes to the lock's channel
 * before its first attempt (RedisBackend does so before it asks the store), and a waiter sleeps until a
 * wake-up message or its own retry time (the busy answer's time left), then attempts again. The holder
 * may renew its hold (the watchdog) or pause past its lease (the hold then expires, nobody publishes).
 *
 * What is abstracted. Owners, tokens and names (one lock); the client's local queue (one thread per
 * client); the network (a call and its answer are one step). The fencing counter is modelled in
 * token-order.pml's spirit elsewhere; here only who holds.
 *
 * Invariants checked:
 *   1. Mutual exclusion: no grant while another client's lease is valid by that client's own view (here
 *      the store's clock and the clients' agree; drift is the hold-back model's subject).
 *   2. No lost wake-up: when a release removes a hold, every client that waits and whose own retry time
 *      has not come is subscribed and the release publishes (the waiter marker is still there).
 *   3. No invalid end state: every client finishes (given time goes on).
 *
 * Seeded bugs (scripts/spin.sh --seeded runs each and expects a failure):
 *   -DBUG_MARKER_TTL   the marker lives only the queue time, not the hold's time left plus it
 *   -DBUG_SUBSCRIBE_LATE the client subscribes after its first busy answer
 *   -DBUG_RENEW_ANY    a renewal extends the hold without checking its owner
 */

#define N 3        /* clients */
#define L 3        /* lease, in ticks */
#define Q 1        /* queue time added to the marker */
#define MAXT 6     /* time passes freely until here, later only when every client is blocked */

byte now = 1;
byte owner = 0;          /* 0: free; else client id */
byte holdUntil = 0;      /* the hold's expiry (store clock) */
byte markerUntil = 0;    /* the waiter marker's expiry; absent when <= now */
bool subscribed[N + 1];
byte wakeups[N + 1];     /* messages delivered, not yet read */
byte retryAt[N + 1];     /* a waiting client's own retry time; 0 when not waiting */
byte validUntil[N + 1];  /* each client's own view: its lease is valid while now < validUntil */
byte done = 0;

inline holdLive() { (owner != 0 && holdUntil > now) }

inline publish() {
  byte j;
  for (j : 1 .. N) {
    if
    :: subscribed[j] -> wakeups[j]++
    :: else -> skip
    fi
  }
}

proctype Client(byte id) {
  bool granted = false;
  byte renewals = 0;
#ifndef BUG_SUBSCRIBE_LATE
  subscribed[id] = true;
#endif
attempt:
  atomic {
    if
    :: !(owner != 0 && holdUntil > now) ->
       /* invariant 1, checked at every grant: no other client's lease is valid by its own view */
       byte m;
       for (m : 1 .. N) { assert(m == id || validUntil[m] <= now) }
       owner = id; holdUntil = now + L; validUntil[id] = holdUntil; granted = true; retryAt[id] = 0
    :: else ->
#ifdef BUG_MARKER_TTL
       if :: markerUntil < now + Q -> markerUntil = now + Q :: else -> skip fi;
#else
       if :: markerUntil < holdUntil + Q -> markerUntil = holdUntil + Q :: else -> skip fi;
#endif
       retryAt[id] = holdUntil   /* the busy answer's time left, counted from now */
    fi
  }
#ifdef BUG_SUBSCRIBE_LATE
  subscribed[id] = true;
#endif
  if
  :: granted -> goto holding
  :: else -> skip
  fi;
  /* wait: a wake-up or the retry time */
  if
  :: atomic { wakeups[id] > 0 -> wakeups[id] = 0; retryAt[id] = 0 }
  :: atomic { now >= retryAt[id] -> retryAt[id] = 0 }
  fi;
  goto attempt;

holding:
  do
  :: renewals < 2 -> atomic {
#ifdef BUG_RENEW_ANY
       if :: owner != 0 && holdUntil > now -> holdUntil = now + L; validUntil[id] = holdUntil :: else -> skip fi;
#else
       if :: owner == id && holdUntil > now -> holdUntil = now + L; validUntil[id] = holdUntil :: else -> skip fi;
#endif
       renewals++
     }
  :: break
  od;
  /* release (or a pause past the lease: the hold just expires and nobody publishes) */
  if
  :: atomic {
       validUntil[id] = 0;
       if
       :: owner == id && holdUntil > now ->
          /* invariant 2, checked at the moment the hold is removed */
          byte k;
          for (k : 1 .. N) {
            assert(retryAt[k] == 0 || retryAt[k] <= now || wakeups[k] > 0 || (subscribed[k] && markerUntil > now))
          }
          owner = 0;
          if
          :: markerUntil > now -> markerUntil = 0; publish()
          :: else -> skip
          fi
       :: else -> skip   /* the store no longer holds it for us: the script answers 0 */
       fi
     }
  :: skip   /* paused past its lease: leaves the hold to expire (its own view expires with it), nobody publishes */
  fi;
  done++
}

/* Time passes freely up to MAXT; after that only when nothing else can move (so a waiter's retry time and
 * a paused holder's expiry still come, and every run ends). */
inline tick() {
  now++;
  if :: owner != 0 && holdUntil <= now -> owner = 0 :: else -> skip fi
}

proctype Clock() {
  do
  :: atomic { now < MAXT -> tick() }
  :: atomic { timeout && done < N && now < 250 -> tick() }
  :: done == N -> break
  od
}

init {
  atomic {
    byte i;
    for (i : 1 .. N) { run Client(i) }
    run Clock()
  }
}
