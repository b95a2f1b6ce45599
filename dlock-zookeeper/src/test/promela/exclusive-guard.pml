/*
 * The ZooKeeper exclusive lock with its guard nodes (ExclusiveRecipe, HolderNodes, docs/dlock-zookeeper.md):
 * one holder node per name, reused by every holder, created in one transaction with a guard <name>!<owner>
 * and deleted in one transaction with it; an attempt is that transaction followed by a read of the node
 * (pipelined, answered after it) that arms a data watch: the holder's deletion watch when the node is
 * ours, the wake-up watch of a waiter when it is another's; a read that finds no node makes the attempt
 * try again (after deleting a guard of its own that might be left). An operator's force-release reads
 * the node's owner and deletes node and guard in one transaction; when that fails because the holder
 * changed, it reads again (the fix of 2026-11-27; before it, the node was deleted the plain way).
 *
 * What is modelled. One name, N clients with one acquisition each (each acquisition has its own owner
 * id), one operator with one force-release. Each ZooKeeper request is one atomic step; the two requests
 * of an attempt are separate steps, so other sessions' requests can come between them, as on the server.
 * A deletion fires the data watches armed on the node at once. A holder releases whether or not its
 * watch told it the node was deleted (a release may be sent before the event is processed), or, once
 * told, may skip the release.
 *
 * What is abstracted. Sessions and their expiry (ephemeral nodes of an expired session vanish together,
 * guard included, so they keep the invariant), lost answers and Curator's retried creates (the read
 * finds our own node), the session tracker's refusals, tokens (the node's czxid), the timing of the
 * engine's local view (a holder's lease is the engine's concern).
 *
 * Invariants: a guard exists exactly while its owner's node is the holder node (checked after every
 * step); a release deletes only the node its owner created; no two holders that were not told of a
 * deletion; every client finishes (no invalid end state): no lost wake-up.
 *
 * Seeded bugs:
 *   -DBUG_PLAIN_FORCE_DELETE  a force-release that finds the holder changed deletes the node the plain
 *                             way, leaving the new holder's guard (the code before 2026-11-27)
 *   -DBUG_RELEASE_NO_GUARD    a release deletes the holder node without its guard (no guard at all: what
 *                             the guard exists to prevent)
 *   -DBUG_WAIT_WITHOUT_WATCH  a waiter whose read found the node gone waits for a wake-up anyway (its
 *                             read armed no watch)
 */

#define N 3

byte node = 0;            /* owner id of the holder node; 0 when there is none */
bool guard[N + 1];        /* guard[o]: the guard <name>!<o> exists */
bool watching[N + 1];     /* a data watch of client c is armed on the node */
bool woken[N + 1];        /* that watch fired */
bool holds[N + 1];        /* client c was granted and has not released */
byte finished = 0;

/* Deletes the holder node: every armed watch fires. */
inline deleteNode() {
  node = 0;
  for (j : 1 .. N) {
    if :: watching[j] -> watching[j] = false; woken[j] = true :: else -> skip fi
  }
}

/* A guard exists exactly while its owner's node is the holder node (N = 3 written out). */
#define GUARDS_MATCH (guard[1] == (node == 1) && guard[2] == (node == 2) && guard[3] == (node == 3))

proctype Client(byte id) {
  byte j, seen, untold;
attempt:
  atomic {   /* multi(create node, create guard): all or nothing */
    if
    :: node == 0 && !guard[id] -> node = id; guard[id] = true
    :: else -> skip   /* NODEEXISTS */
    fi
  }
  atomic {   /* getData(node, watch): answered after the transaction; others may come between */
    seen = node;
    woken[id] = false;
    if :: seen != 0 -> watching[id] = true :: else -> skip fi
  }
  if
  :: seen == id ->
     atomic {
       holds[id] = true;
       untold = 0;
       for (j : 1 .. N) { if :: holds[j] && !woken[j] -> untold++ :: else -> skip fi }
       assert(untold <= 1)
     }
     goto holding
  :: seen == 0 ->
     atomic { if :: guard[id] && node != id -> guard[id] = false :: else -> skip fi }   /* a guard of ours left */
#ifdef BUG_WAIT_WITHOUT_WATCH
     woken[id];
#endif
     goto attempt
  :: else ->
     woken[id];   /* busy: the wake-up watch on the other holder's node */
     goto attempt
  fi;

holding:
  if
  :: woken[id] -> skip   /* told its node was deleted: may skip the release */
  :: true ->
     atomic {   /* multi(delete guard, delete node) */
#ifdef BUG_RELEASE_NO_GUARD
       if :: node != 0 -> assert(node == id); deleteNode() :: else -> skip fi
#else
       if
       :: guard[id] && node != 0 -> assert(node == id); guard[id] = false; deleteNode()
       :: else -> skip   /* NONODE: the transaction fails as a whole */
       fi
#endif
     }
  fi;
  holds[id] = false;
  finished++
}

proctype Operator() {
  byte owner, j;
  byte tries = 0;
  bool changed;
read:
  atomic { owner = node }
  if
  :: owner == 0 -> goto done
  :: else -> skip
  fi;
  atomic {   /* multi(delete guard of the owner read, delete node) */
    changed = false;
    if
    :: guard[owner] && node != 0 -> assert(node == owner); guard[owner] = false; deleteNode()
    :: else ->
#ifdef BUG_PLAIN_FORCE_DELETE
       if :: node != 0 -> deleteNode() :: else -> skip fi
#else
       changed = true
#endif
    fi
  }
  tries++;
  if
  :: changed && tries < 3 -> goto read   /* the holder changed: read it again */
  :: else -> skip
  fi;
done:
  skip
}

/* Checks the guard invariant in every state: waits until it is broken, which must never happen. */
active proctype Guards() {
end: atomic { !GUARDS_MATCH -> assert(false) }
}

init {
  atomic {
    byte i;
    for (i : 1 .. N) { run Client(i) }
    run Operator()
  }
}
