/*
 * Which entry each waiter of a ZooKeeper queue watches (QueueRecipe.decide, QueueRules.blocker,
 * Wakeups.nodeEvent; docs/dlock-zookeeper.md, "Recipes and guarantees", the "waiter watches" column).
 *
 * What is modelled. One queue directory of sequential entries (the index is the sequence number). An
 * attempt is one getChildren read (one atomic step) that decides from the entries sorted by sequence:
 * granted, or the one entry it waits for (QueueRules.blocker):
 *   fair   granted when first; else watches its immediate predecessor;
 *   write  granted when first and no `d-` entry of another write entry exists; else watches its
 *          immediate predecessor (any kind), or, when first, the first such `d-` entry;
 *   read   granted when no write entry precedes it, except the one its downgrade comes from and the
 *          writers queued behind that one; else watches the nearest preceding write entry (before that
 *          limit). A downgrade's read (`d-`) not granted fails rather than waits; here its write entry
 *          always lives, so that must never happen (asserted).
 * Then, as a step of its own (other clients' creates and deletes can come between), getData with a watch
 * on that entry: when the entry is there it arms a one-shot data watch that fires at the entry's deletion,
 * and the waiter waits for that alone, then reads the children again; when the entry is already gone it
 * arms nothing and the waiter reads the children again at once. A waiter may give up (cancelWait deletes
 * its entry); whether it will is chosen at its start, since one that could give up at every wait would
 * never be seen stuck. A holder releases by deleting its entry; a downgrade creates its `d-` entry while
 * holding the write, reads, then deletes the write entry and later the `d-` entry.
 * Two client mixes, chosen at the start (so the state spaces add up, not multiply): a read-write queue
 * (1: a writer that downgrades, 2: a writer that may give up while waiting, 3: a reader that may give up
 * while waiting, 4: a reader), and a fair queue (clients 1 to 3, client 2 may give up while waiting):
 * about 566,000 states, under a second.
 * Between them they reach each watch choice (each checked reachable while writing the model): a writer
 * behind a write, read or `d-` entry; a first writer behind a `d-` entry; a reader behind one or two
 * writers, with the downgrade going on; a getData that finds its entry gone; a watched predecessor that
 * leaves the queue without holding.
 *
 * What is abstracted. Sessions, ephemeral deletion on session loss and the re-queueing of an entry found
 * gone, tokens, duplicate entries of a retried create, MAX_TRIES, semaphores (their persistent watch counts
 * down the entries ahead instead: not modelled), and the engine's retries at the latest after a lease time
 * or a third of it (WaitRequest.retryDelayNanos): the model waits for the watch alone, so a lost wake-up is
 * a deadlock here and a wait of up to a lease time in the product. The engine keeps a wake-up that arrives
 * while an attempt is in flight and asks again after it (WaitState.afterWake), so a watch that fired is
 * not lost: a flag set by the deletion. Watches of several waiters of one client on one entry are one
 * ZooKeeper watch that Wakeups.nodeEvent hands to each of them: here each waiter's own.
 *
 * Invariants: a writer holds only when no other client holds anything (the downgrading writer's own read
 * excepted); at most one fair holder; a downgrade whose write entry lives is granted; every client
 * finishes (no invalid end state): no lost wake-up.
 *
 * Seeded bugs:
 *   -DBUG_WRITER_NO_DOWNGRADE_WATCH  the `d-` check is in the write's grant only, its watch is on the
 *                                    immediate predecessor only: a first writer that only a `d-` entry
 *                                    blocks arms no watch and waits (lost wake-up)
 *   -DBUG_WAIT_AFTER_NONODE          a waiter whose watch-arming getData found the entry gone waits anyway
 *                                    (as an exists watch on a gone node would: only a create fires it)
 *   -DBUG_WAKE_MEANS_GRANTED         a fair waiter woken by its predecessor's deletion takes the lock without
 *                                    reading the queue again (the predecessor may have left without holding)
 *   -DBUG_READER_WATCHES_WRITER_BEHIND  a plain reader looks for the nearest write entry from the end of
 *                                    the queue, not from its own place: it watches a writer behind it,
 *                                    which waits for it (deadlock)
 *
 * Not a bug here (spin finds nothing; kept as a switch, not in the list above): a reader that watches its
 * immediate predecessor, a read entry or the downgrade's `d-` entry, instead of the nearest preceding
 * write entry (-DWEAK_READER_WATCHES_PREDECESSOR): every entry ahead of a waiter leaves in the end (it
 * holds, or waits only for entries ahead of it or for a `d-` entry, which holds from its creation), so a
 * reader watching any entry ahead is woken in the end; the nearest writer only saves wake-ups and waiting.
 * What must not happen is a watch on an entry that waits for the waiter (one behind it, except a `d-`
 * entry), no watch at all, or a wait after a getData that armed nothing: the seeded bugs above.
 */

#define F 1            /* fair entry */
#define W 2            /* write entry */
#define R 3            /* read entry */
#define D 4            /* the read entry of a downgrade */
#define MAXE 6
#define NC 5           /* client ids 1 .. NC - 1 */
#define NONE 255

byte kind[MAXE];
byte from[MAXE];       /* for D entries: the write entry the downgrade comes from */
bool alive[MAXE];
byte next = 0;         /* the next sequence number */

byte watching[NC];     /* the entry a client's data watch is armed on, NONE if none */
bool woken[NC];        /* that watch fired */
bool holdsWrite[NC];
bool holdsRead[NC];
bool holdsFair[NC];

inline create(k, f, idx) {
  atomic { idx = next; kind[idx] = k; from[idx] = f; alive[idx] = true; next++ }
}

/* Deletes an entry: the data watches armed on it fire. */
inline deleteEntry(e) {
  alive[e] = false;
  for (c : 1 .. NC - 1) {
    if :: watching[c] == e -> watching[c] = NONE; woken[c] = true :: else -> skip fi
  }
}

/* One getChildren read and QueueRules.blocker: t is the entry to watch (NONE: granted), ok the grant.
 * i: the entry; m: its kind; f: for a downgrade's read, its write entry, else NONE. */
inline readChildren(i, m, f, t, ok) {
  t = NONE;
  if
  :: m == F || m == W ->
     j = i;
     do
     :: j > 0 -> j--; if :: alive[j] -> t = j; break :: else -> skip fi
     :: else -> break
     od;
     downgraded = false;
     if
     :: m == W && t == NONE ->
        for (j : 0 .. MAXE - 1) {
          if :: !downgraded && alive[j] && kind[j] == D && from[j] != i -> t = j; downgraded = true :: else -> skip fi
        }
     :: else -> skip
     fi;
#ifdef BUG_WRITER_NO_DOWNGRADE_WATCH
     ok = (t == NONE);
     if :: downgraded -> t = NONE :: else -> skip fi   /* the watch leaves the `d-` out; the grant does not */
#else
     ok = (t == NONE)
#endif
  :: else ->   /* R or D */
     limit = i;
     if :: f != NONE && alive[f] -> limit = f :: else -> skip fi;
#ifdef BUG_READER_WATCHES_WRITER_BEHIND
     if :: f == NONE -> limit = MAXE :: else -> skip fi;
#endif
     j = limit;
     do
     :: j > 0 -> j--; if :: alive[j] && kind[j] == W && j != i -> t = j; break :: else -> skip fi
     :: else -> break
     od;
     ok = (t == NONE);
#ifdef WEAK_READER_WATCHES_PREDECESSOR
     if
     :: !ok ->
        j = i;
        do
        :: j > 0 -> j--; if :: alive[j] -> t = j; break :: else -> skip fi
        :: else -> break
        od
     :: else -> skip
     fi
#endif
  fi
}

inline checkHolders(id) {
  for (c : 1 .. NC - 1) {
    assert(c == id || !(holdsWrite[id] && (holdsWrite[c] || holdsRead[c])));
    assert(c == id || !(holdsWrite[c] && (holdsWrite[id] || holdsRead[id])));
    assert(c == id || !(holdsFair[id] && holdsFair[c]))
  }
}

/* One acquisition of `entry` (kind m; f as for readChildren) by client id: returns with granted
 * set, or with the entry deleted after giving up (only when mayGiveUp). */
inline acquire(id, m, f, entry, mayGiveUp, granted) {
  granted = false;
  do
  :: atomic {
       readChildren(entry, m, f, target, granted);
       if
       :: granted ->
          if :: m == W -> holdsWrite[id] = true :: m == F -> holdsFair[id] = true :: else -> holdsRead[id] = true fi;
          checkHolders(id)
       :: else -> assert(m != D)   /* a downgrade with its write entry in the queue is never refused */
       fi
     }
     if :: granted -> break :: else -> skip fi;
     atomic {   /* getData(target, watch): a separate request */
       woken[id] = false;
       if
       :: target == NONE -> armed = true   /* nothing to watch (only with a seeded bug): busy, waits */
       :: else -> armed = alive[target]; if :: armed -> watching[id] = target :: else -> skip fi
       fi
     }
#ifdef BUG_WAIT_AFTER_NONODE
     armed = true;
#endif
     if
     :: armed ->
        if
        :: woken[id]
#ifdef BUG_WAKE_MEANS_GRANTED
           -> if
              :: m == F -> atomic { granted = true; holdsFair[id] = true; checkHolders(id) }; break
              :: else -> skip
              fi
#endif
        :: mayGiveUp ->   /* cancelWait */
           atomic { watching[id] = NONE; deleteEntry(entry) }; break
        fi
     :: else -> skip   /* NONODE: read the children again */
     fi
  od
}

proctype Client(byte id; byte m; bool downgrades; bool mayGiveUp) {
  byte mine, down, target, j, c, limit;
  bool granted, armed, downgraded;
  /* Decided at the start: a client that may give up at any wait would never be seen stuck. */
  if :: mayGiveUp = false :: skip fi;
  create(m, NONE, mine);
  acquire(id, m, NONE, mine, mayGiveUp, granted);
  if
  :: granted && downgrades ->
     create(D, mine, down);
     acquire(id, D, mine, down, false, granted);
     atomic { holdsWrite[id] = false; deleteEntry(mine) };
     atomic { holdsRead[id] = false; deleteEntry(down) }
  :: granted && !downgrades ->
     atomic { holdsWrite[id] = false; holdsRead[id] = false; holdsFair[id] = false; deleteEntry(mine) }
  :: else -> skip   /* gave up */
  fi
}

init {
  byte c;
  for (c : 1 .. NC - 1) { watching[c] = NONE }
  atomic {
    if
    :: run Client(1, W, true, false);    /* the read-write queue */
       run Client(2, W, false, true);
       run Client(3, R, false, true);
       run Client(4, R, false, false)
    :: run Client(1, F, false, false);   /* the fair queue */
       run Client(2, F, false, true);
       run Client(3, F, false, false)
    fi
  }
}
