/*
 * Told first across a store that forgets: the hold-back after lost state (restart without persistence).
 *
 * What is modelled. One lock on one store. Each grant and renewal is one atomic step at the store. The
 * store may, at any moment (twice in all): restart and forget everything (holds and the epoch marker);
 * restart from a file that kept the marker but not the last hold; or be replaced by a failover to a
 * replica that missed the last hold, and maybe the marker too, and has been up since before anything
 * happened. A grant attempt reads the marker as epoch.lua does: written by this process, its base
 * stands; missing or written by another process, the base is now on a process that once replicated (a
 * promoted replica), else the later of the process start and the marker's own base; the attempt writes
 * the marker (even when held back). Nothing is granted before base + MAXL (the declared maximum lease).
 * Clients take leases of at most MAXL and renew while they hold; a client's own view of its lease ends at
 * the grant or renewal time plus its lease (its clock runs with the store's here; drift is the margin the
 * engine subtracts, which only shortens the client's view).
 *
 * What is abstracted. Tokens, waiting and wake-ups (exclusive-wakeup.pml), names, the network (a call
 * and its answer are one step), which replica is promoted (one replica, or one that missed the most).
 *
 * Invariant: no grant while another client's lease is valid by its own view ("told first": the holder's
 * lease has run out by its own clock before anyone else is granted), across any number of restarts.
 * And every client gets the lock (no invalid end state): the hold-back ends.
 *
 * Seeded bugs:
 *   -DBUG_NO_HOLDBACK    a missing marker is not looked at (the behaviour before the hold-back)
 *   -DBUG_SHORT_HOLDBACK the hold-back lasts one tick less than the longest lease
 *   -DBUG_OVER_MAX       one client takes a lease longer than the declared maximum
 *   -DBUG_PROMOTED_AS_FRESH a promoted replica reads a missing marker as a fresh namespace (from its
 *                        start: the rule before the replica check)
 */

#define N 2
#define MAXL 3      /* the declared maximum lease */
#define MAXT 7
#define RESTARTS 2

byte now = 1;
byte owner = 0;
byte holdUntil = 0;
bool marker = false;
bool markedByThis = false;
byte markBase = 0;
bool promoted = false;
byte startedAt = 0;
byte restarts = 0;
byte validUntil[N + 1];
byte done = 0;

#ifdef BUG_SHORT_HOLDBACK
#define HOLDBACK (MAXL - 1)
#else
#define HOLDBACK MAXL
#endif

proctype Client(byte id) {
  byte lease = MAXL;
  byte renewals = 0;
#ifdef BUG_OVER_MAX
  if :: id == 1 -> lease = MAXL + 2 :: else -> skip fi;
#endif
  bool granted = false;
  do
  :: granted -> break
  :: atomic {
       !granted && !(owner != 0 && holdUntil > now) ->
       if
       :: !(marker && markedByThis) ->
          if
#ifdef BUG_PROMOTED_AS_FRESH
          :: promoted && marker -> markBase = now
#else
          :: promoted -> markBase = now
#endif
          :: else -> if :: !marker || markBase < startedAt -> markBase = startedAt :: else -> skip fi
          fi;
          marker = true; markedByThis = true
       :: else -> skip
       fi;
#ifdef BUG_NO_HOLDBACK
       if :: true ->
#else
       if :: now >= markBase + HOLDBACK ->
#endif
          byte m;
          for (m : 1 .. N) { assert(m == id || validUntil[m] <= now) }
          owner = id; holdUntil = now + lease; validUntil[id] = holdUntil; granted = true
       :: else -> skip
       fi
     }
  od;
  do
  :: renewals < 2 -> atomic {
       if :: owner == id && holdUntil > now -> holdUntil = now + lease; validUntil[id] = holdUntil
          :: else -> skip
       fi;
       renewals++
     }
  :: break
  od;
  atomic {
    validUntil[id] = 0;
    if :: owner == id -> owner = 0 :: else -> skip fi;
    done++
  }
}

/*
 * The store: time passes (freely up to MAXT, later only when nothing else can move), and it may lose state:
 * a restart without persistence, a restart from a file that kept the marker but not the last hold, or a
 * failover to a replica up since time 0 that missed the last hold, with or without the marker.
 */
proctype Store() {
  do
  :: atomic { now < MAXT -> now++; if :: owner != 0 && holdUntil <= now -> owner = 0 :: else -> skip fi }
  :: atomic { timeout && done < N && now < 250 -> now++; if :: owner != 0 && holdUntil <= now -> owner = 0 :: else -> skip fi }
  :: atomic { restarts < RESTARTS && done < N -> owner = 0; marker = false; startedAt = now; promoted = false; restarts++ }
  :: atomic { restarts < RESTARTS && done < N -> owner = 0; markedByThis = false; startedAt = now; promoted = false; restarts++ }
  :: atomic { restarts < RESTARTS && done < N -> owner = 0; markedByThis = false; startedAt = 0; promoted = true; restarts++ }
  :: atomic { restarts < RESTARTS && done < N -> owner = 0; marker = false; markedByThis = false; startedAt = 0; promoted = true; restarts++ }
  :: done == N -> break
  od
}

init {
  atomic {
    byte i;
    for (i : 1 .. N) { run Client(i) }
    run Store()
  }
}
