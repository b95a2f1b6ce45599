/*
 * The ZooKeeper semaphore's waiters: each counts down the entries ahead of it from its client's one
 * persistent watch instead of watching one entry (QueueRecipe.decide, the PERMIT branch that fills
 * Node.ahead; Wakeups.permitEvent; Wakeups.subscribe/addPermitWatch; the engine's Acquisition/WaitState:
 * subscribe after the first busy answer and ask again, keep a wake-up that comes while an attempt is in
 * flight; docs/dlock-zookeeper.md, the semaphore row of "Recipes and guarantees").
 *
 * What is modelled. One semaphore directory of EPHEMERAL_SEQUENTIAL entries (the bit index is the sequence
 * number), P permits, C clients with one acquisition each (each client its own ZooKeeper session and
 * its own persistent recursive watch). Each client's event thread is a FIFO channel that carries, in the
 * order the server made them, the answers to its requests and its watch's NodeDeleted events (ZooKeeper
 * delivers a watch event before the answer of any later read of the same session; events are per node
 * and not coalesced). The server is atomic: a getChildren read is one step that puts a snapshot of the
 * entries on the reader's channel; a delete is one step that puts a NodeDeleted event on the channel of
 * every client whose watch is set at that moment. A client reads (attempt 1, sent from the caller's
 * thread); it is granted when fewer than P entries precede it, else it keeps the sequences of the
 * entries ahead (Node.ahead) and becomes a waiter; at its first busy answer it subscribes (the watch is
 * set by a request of its own whose answer comes on the channel, or, when another acquisition of the
 * same client set it before, at once) and then reads again (attempt 2); later it waits. On a NodeDeleted
 * of an entry in its set it removes it and, when fewer than P remain, is woken: it reads again, or, if it
 * is still asking (a read or the subscription on its way), right after its busy answer
 * (WaitState.afterWake/afterBusy). A holder releases (or its session expires: the same delete) at any
 * later moment. The entries are created in client order before any read (an entry created later is behind
 * every waiter that read before it, which the count-down ignores; letting the creates interleave gives
 * the same verdicts for the model and every seeded bug at 40 times the states). Clients 0 and 1 are
 * granted at their first read; client 2 waits and may give up (its entry deleted), chosen at its start;
 * client 3 waits, its client's watch set before its first read (kept by an earlier acquisition of that
 * client), so its subscription is live at once and its retry goes out from where its first answer was
 * handled.
 *
 * What is abstracted. Sessions (the entries' ephemerality is the holder's delete), the re-queueing of an
 * entry found gone, duplicates from a retried create, MAX_TRIES, held.grantable (refused grants), tokens,
 * several local waiters of one client (each would have its own set; the engine asks the store with one
 * waiter per client and name), watch loss on a reconnect (Wakeups.reconnected wakes every subscriber, who
 * read again), and the engine's retry at the latest after a lease time (WaitRequest.retryDelayNanos): the
 * model waits for its wake-up alone, so a lost wake-up is a deadlock or a stalled waiter here and a wait
 * of up to a lease time in the product. Sending a request and the server's handling of it are one step
 * (the event thread handles nothing for this client between them that the model would not also allow
 * before the send).
 *
 * Invariants: never more than P holders (checked at every grant); no lost wake-up, checked in every
 * state: a waiter that is not asking (no read in flight, no wake-up kept for later) and has nothing left
 * on its event channel has at least P entries ahead of it in the queue (a waiter within the first P
 * with nothing on its way to tell it would wait while a permit is free); every client finishes (no
 * invalid end state). What the count-down relies on, and the model keeps: entries only leave the part of
 * the queue ahead of a waiter (new entries have larger sequences), each deletion is one event delivered
 * once, and a waiter's set is taken from a read made after its watch was set and handled before any event
 * the server made after that read (the answer and the events in server order, on one thread).
 *
 * Bounds: C = 4 clients, P = 2 permits, one waiter that may give up: about 58,000 states, under a second;
 * each seeded bug is found in under a second.
 *
 * Seeded bugs:
 *   -DBUG_NO_REREAD            no second read after the watch is set: the set of entries ahead stays the
 *                              one from the first read, before the watch, and a deletion between them is
 *                              never counted (the waiter stalls with a permit free)
 *   -DBUG_ADMIT_WHEN_EMPTY     a waiter is woken only when no entry is left ahead of it (a lock's rule,
 *                              not a semaphore's): with P = 2 it stalls at one entry ahead
 *   -DBUG_AHEAD_INCLUDES_BEHIND  the set is filled from every other entry of the read, not only those
 *                              before the waiter's own: it counts on entries that wait for it
 *   -DBUG_DECIDE_OFF_EVENT_THREAD  the code before the fix of 2026-11-27 (see "Found" below): a read sent
 *                              from a thread other than ZooKeeper's event thread (the caller's first
 *                              attempt; the retry after a subscription that was live already, sent from
 *                              where the first answer was handled) may have its answer handled on that
 *                              thread after events the event thread handled meanwhile
 *
 * Found by this model, fixed since (docs/models.md; the test is LateAnswerTest.
 * aSemaphoreWaiterWhoseReadIsAnsweredBeforeItsRequestReturnsIsWokenByTheNextRelease, which failed before
 * the fix): QueueRecipe.evaluate now attaches decide to the read's answer before the request is sent
 * (Background.run(operation, then), through Requests.getChildren(path, then)), so decide always runs on
 * the event thread at the answer's place among the events, whichever thread sent the read: what the
 * default run models (every CHILDREN answer is decided where the client's channel delivers it). Before
 * the fix, Background.run handed back a future that Curator's
 * callback completes on the event thread, and QueueRecipe chained decide on it with thenCompose after the
 * request was sent. When the answer arrives before thenCompose is attached, CompletableFuture runs decide
 * on the attaching (calling) thread, and the event thread goes on to the next events meanwhile: a
 * NodeDeleted it handles before decide fills the set is counted against the node's old set (or not at all
 * before its first set), and decide then fills the set with the deleted entry in it. It takes two such
 * answers in a row for one acquisition (the first makes the old set stale, the second loses the count):
 * the waiter then waits with a permit free until another entry of its set leaves or the engine asks
 * again after a lease time. The shortest run (spin -t -p with -DBUG_DECIDE_OFF_EVENT_THREAD): client 3
 * (its client's watch set already) reads entries 0-3, the answer is handled late on the calling thread;
 * meanwhile client 0 releases and the event thread drops the NodeDeleted of entry 0 (client 3 is no
 * waiter yet); the late decide fills the set {0,1,2} and, the subscription being live, sends the retry
 * from the same thread; its answer (entries 1-3) is late too; client 2, granted by its read of entries
 * 1-3, releases, and the event thread takes entry 2 off the stale set ({0,1}: two left, no wake-up); the
 * late decide fills the set {1,2}. Only entry 1 is ahead now: a permit is free and client 3 waits.
 */

#define C 4            /* clients; entry sequences 0 .. C - 1 */
#define P 2            /* permits */

#define below(s) ((1 << (s)) - 1)
#define bit(x, k) (((x) >> (k)) & 1)
#define count(x) (bit(x, 0) + bit(x, 1) + bit(x, 2) + bit(x, 3))

mtype = { DELETED, CHILDREN, WATCHED };

chan events[C] = [C + 2] of { mtype, byte };   /* each client's event thread, in server order */

byte live = 0;         /* the live entries, by sequence (bit) */
bool watchSet[C];      /* the server has the client's persistent watch */
byte holders = 0;

/* what the monitor reads */
byte seqOf[C];
bool paused[C];        /* a waiter that is not asking: it waits for a wake-up */

/* The server deletes entry s: the NodeDeleted event goes to every watch set now. */
inline deleteEntry(s) {
  live = live & ~(1 << s);
  for (k : 0 .. C - 1) {
    if :: watchSet[k] -> events[k]!DELETED,s :: else -> skip fi
  }
  k = 0
}

/* A getChildren read, handled by the server now: its answer queues behind the events made before it. */
inline read(offThread) {
  events[me]!CHILDREN,live;
#ifdef BUG_DECIDE_OFF_EVENT_THREAD
  readOffThread = offThread
#else
  skip
#endif
}

/* The engine asks again: now, or after the answer on its way (WaitState.afterWake). */
inline wake() {
  if
  :: asking -> wakePending = true
  :: else -> asking = true; paused[me] = false; read(false)
  fi
}

/* QueueRecipe.decide for a semaphore on the answer `snap`, then the engine's afterBusy. */
inline decide(snap, offThread) {
  if
  :: count(snap & below(mine)) < P ->
     granted = true; waiter = false; holders++; assert(holders <= P)
  :: else ->
#ifdef BUG_AHEAD_INCLUDES_BEHIND
     ahead = snap & ~(1 << mine);
#else
     ahead = snap & below(mine);
#endif
     waiter = true;
     if
     :: !subscribed ->
        subscribed = true; wakePending = false;
        if
        :: watchSet[me] ->                         /* live already: the retry goes out from here, at once */
#ifdef BUG_NO_REREAD
           asking = false; paused[me] = true
#else
           read(offThread)
#endif
        :: else -> watchSet[me] = true; events[me]!WATCHED,0
        fi
     :: subscribed && wakePending -> wakePending = false; read(false)
     :: else -> asking = false; paused[me] = true
     fi
  fi
}

proctype Client(byte me; bool mayGiveUp) {
  byte mine, ahead, arg, k;
#ifdef BUG_DECIDE_OFF_EVENT_THREAD
  byte deferred;
  bool readOffThread = false;
  bool hasDeferred = false;  /* an answer whose decide runs later, on the thread that sent the read */
#endif
  mtype m;
  bool waiter = false;       /* the node is among Wakeups.waiters, with its set `ahead` */
  bool subscribed = false;   /* the acquisition subscribed (WaitState.subscribed) */
  bool asking = true;        /* the acquisition is in flight: a read or its subscription on its way */
  bool wakePending = false;  /* a wake-up came while asking */
  bool granted = false;

  atomic {
    if :: mayGiveUp = false :: skip fi;            /* chosen at the start, see above */
    mine = seqOf[me];
    read(true)                                     /* attempt 1, from the caller's thread */
  };
  do
  :: atomic {
       nempty(events[me]) -> events[me]?m,arg;
       if
       :: m == DELETED ->                          /* Wakeups.permitEvent */
          if
          :: waiter && bit(ahead, arg) ->
             ahead = ahead & ~(1 << arg);
#ifdef BUG_ADMIT_WHEN_EMPTY
             if :: ahead == 0 -> wake() :: else -> skip fi
#else
             if :: count(ahead) < P -> wake() :: else -> skip fi
#endif
          :: else -> skip
          fi
       :: m == WATCHED ->                          /* the subscription is live: ask again */
#ifdef BUG_NO_REREAD
          asking = false; paused[me] = true
#else
          read(false)
#endif
       :: m == CHILDREN ->
#ifdef BUG_DECIDE_OFF_EVENT_THREAD
          if
          :: readOffThread -> hasDeferred = true; deferred = arg   /* thenCompose attached too late */
          :: true -> decide(arg, false)
          fi
#else
          decide(arg, false)
#endif
       fi;
       m = 0; arg = 0
     }
#ifdef BUG_DECIDE_OFF_EVENT_THREAD
  :: atomic { hasDeferred -> hasDeferred = false; decide(deferred, true); deferred = 0 }
#endif
  :: atomic { mayGiveUp && paused[me] ->           /* cancelWait: its entry is deleted */
       paused[me] = false; waiter = false; deleteEntry(mine); break }
  :: granted -> atomic { holders--; deleteEntry(mine) }; break   /* release, or its session expires */
  od;
  atomic { watchSet[me] = false; do :: events[me]?m,arg :: empty(events[me]) -> break od; m = 0; arg = 0 }
}

#define stalled(w) (paused[w] && len(events[w]) == 0 && count(live & below(seqOf[w])) < P)

/* No lost wake-up, checked in every state: waits until it is broken, which must never happen. */
active proctype NoLostWakeup() {
end:
  atomic { stalled(0) || stalled(1) || stalled(2) || stalled(3) -> assert(false) }
}

init {
  byte c;
  atomic {
    for (c : 0 .. C - 1) { seqOf[c] = c; live = live | (1 << c) }   /* the entries, in client order */
    watchSet[3] = true;
    run Client(0, false);
    run Client(1, false);
    run Client(2, true);
    run Client(3, false)
  }
}
