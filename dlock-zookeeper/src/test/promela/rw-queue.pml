/*
 * The ZooKeeper read-write queue with downgrades (ZooKeeperBackend's read/write recipe, see
 * docs/dlock-zookeeper.md, "read" and "write" rows and "Safety").
 *
 * What is modelled. One queue directory of sequential entries (the index is the sequence number): `w-`
 * writer entries, `r-` reader entries, and `d-` entries, the read of a downgrade, which name the write
 * entry they come from. Creating, deleting and reading the children are each one atomic step, as each is
 * one ZooKeeper request; a client decides from one read of the children (getChildren) and, when not
 * granted, waits for a change of the children (the watch) and reads again. The rules:
 *   read  granted when no live write entry precedes it, except the downgrade's own write entry and
 *         writers queued behind that one;
 *   write granted when its entry is first and no live `d-` entry of another write entry exists.
 * The clients: A writes, downgrades (creates its `d-` entry, waits for it, then deletes its write entry)
 * and then releases the read; B writes; C reads.
 *
 * What is abstracted. Sessions, ephemeral deletion on session loss, tokens (czxid x 16), the guard nodes
 * of the exclusive lock, and sequence overflow. The watch here fires on any change of the directory; the
 * backend watches one chosen entry, so a wrong choice of entry to watch is not caught by this model
 * (queue-watch.pml models that choice).
 *
 * Invariant: a writer holds only when no other client holds anything (A's own read of its downgrade may
 * overlap A's write: that is the downgrade). Every client finishes (no invalid end state).
 *
 * Seeded bugs:
 *   -DBUG_WRITER_IGNORES_DOWNGRADE  the write rule does not look for `d-` entries of other writes
 *   -DBUG_READ_SKIPS_WRITERS        a plain read does not wait for the writers queued ahead of it
 *   -DBUG_DOWNGRADE_WAITS_BEHIND    a downgrade's read waits for the writers queued behind its write (deadlock)
 */

#define W 1
#define R 2
#define D 3
#define MAXE 6
#define NONE 255

byte kind[MAXE];
byte owner[MAXE];
byte from[MAXE];       /* for D entries: the write entry the downgrade comes from */
bool alive[MAXE];
byte next = 0;         /* the next sequence number */
byte version = 0;      /* changes with every create and delete: what a watch reports */

bool holdsWrite[4];    /* by client id 1..3 */
bool holdsRead[4];
byte finished = 0;

inline create(k, o, f, idx) {
  atomic { idx = next; kind[idx] = k; owner[idx] = o; from[idx] = f; alive[idx] = true; next++; version++ }
}

/* The write rule, as one read of the children. */
inline writeGranted(i, ok) {
  ok = true;
  byte j;
  for (j : 0 .. MAXE - 1) {
    if
    :: j < i && alive[j] -> ok = false
#ifndef BUG_WRITER_IGNORES_DOWNGRADE
    :: alive[j] && kind[j] == D && from[j] != i -> ok = false
#endif
    :: else -> skip
    fi
  }
}

/* The read rule; f is the downgrade's write entry or NONE. */
inline readGranted(i, f, ok) {
  ok = true;
  byte j;
  for (j : 0 .. MAXE - 1) {
    if
#ifdef BUG_READ_SKIPS_WRITERS
    :: j < i && alive[j] && kind[j] == W && f != NONE && j < f -> ok = false
#elif defined(BUG_DOWNGRADE_WAITS_BEHIND)
    :: j < i && alive[j] && kind[j] == W && !(f != NONE && j == f) -> ok = false
#else
    :: j < i && alive[j] && kind[j] == W && !(f != NONE && j >= f) -> ok = false
#endif
    :: else -> skip
    fi
  }
}

inline checkExclusion(id) {
  byte c;
  for (c : 1 .. 3) {
    assert(c == id || !(holdsWrite[id] && (holdsWrite[c] || holdsRead[c])));
    assert(c == id || !(holdsWrite[c] && (holdsWrite[id] || holdsRead[id])))
  }
}

proctype Writer(byte id; bool downgrades) {
  byte mine, down, seen;
  bool ok;
  create(W, id, NONE, mine);
  do
  :: atomic { writeGranted(mine, ok); seen = version; if :: ok -> holdsWrite[id] = true; checkExclusion(id); break :: else -> skip fi }
     version != seen   /* the watch fires */
  od;
  if
  :: downgrades ->
     create(D, id, mine, down);
     do
     :: atomic { readGranted(down, mine, ok); seen = version; if :: ok -> holdsRead[id] = true; checkExclusion(id); break :: else -> skip fi }
        version != seen
     od;
     atomic { holdsWrite[id] = false; alive[mine] = false; version++ };
     atomic { holdsRead[id] = false; alive[down] = false; version++ }
  :: else ->
     atomic { holdsWrite[id] = false; alive[mine] = false; version++ }
  fi;
  finished++
}

proctype Reader(byte id) {
  byte mine, seen;
  bool ok;
  create(R, id, NONE, mine);
  do
  :: atomic { readGranted(mine, NONE, ok); seen = version; if :: ok -> holdsRead[id] = true; checkExclusion(id); break :: else -> skip fi }
     version != seen
  od;
  atomic { holdsRead[id] = false; alive[mine] = false; version++ };
  finished++
}

init {
  atomic {
    run Writer(1, true);
    run Writer(2, false);
    run Reader(3)
  }
}
