/*
 * The etcd exclusive lock's key queue (EtcdBackend, docs/dlock-etcd.md): each caller's key, ordered by
 * create revision; the key with the lowest create revision holds; a waiter watches its immediate
 * predecessor for deletion; a release deletes the caller's key and is retried until etcd confirms it.
 *
 * What is modelled. One lock name. Creating a key, reading the keys of the name and deleting a key are
 * each one atomic step (one etcd request), each raising the store's revision; a watch is created in a
 * step of its own after the read and reports every delete of its key from its start revision on, as
 * etcd's watch does. A delete request may be lost on its way (the connection drops): the client does not
 * know whether it was applied.
 *
 * What is abstracted. The etcd lease the keys are put on (the client keeps it alive for its other locks,
 * so a key whose delete was lost stays until deleted: the subject of the release rule), tokens
 * (create revision x 16), read-write and semaphores, compaction.
 *
 * Invariants: at most one client holds at a time; every client finishes (no invalid end state): no lost
 * wake-up and no key left behind by a lost delete.
 *
 * Seeded bugs:
 *   -DBUG_WATCH_FROM_NOW    the watch starts at the store's revision when it is created, not right after
 *                           the read it follows, so a delete in between is missed
 *   -DBUG_RELEASE_GIVES_UP  a release whose delete was lost is not retried (the key stays for the life of
 *                           the client's etcd lease: the bug of the lost release)
 */

#define N 3

byte rev = 1;
bool alive[N + 1];
byte createdAt[N + 1];   /* create revision; 0 before the key exists */
byte deletedAt[N + 1];   /* revision of the key's delete; 0 while it lives */
byte holders = 0;
byte finished = 0;

proctype Client(byte id) {
  byte readAt, predecessor, watchFrom, j;
  bool lowest;
  atomic { createdAt[id] = rev; alive[id] = true; rev++ }
check:
  atomic {
    readAt = rev;
    predecessor = 0;
    lowest = true;
    for (j : 1 .. N) {
      if
      :: alive[j] && j != id && createdAt[j] < createdAt[id] ->
         lowest = false;
         if :: predecessor == 0 || createdAt[j] > createdAt[predecessor] -> predecessor = j :: else -> skip fi
      :: else -> skip
      fi
    }
    if
    :: lowest -> holders++; assert(holders == 1)
    :: else -> skip
    fi
  }
  if
  :: lowest -> goto holding
  :: else -> skip
  fi;
  /* the watch on the predecessor, created after the read */
#ifdef BUG_WATCH_FROM_NOW
  watchFrom = rev;
#else
  watchFrom = readAt;
#endif
  (deletedAt[predecessor] != 0 && deletedAt[predecessor] >= watchFrom);
  goto check;

holding:
  holders--;
  do
  :: atomic { alive[id] = false; deletedAt[id] = rev; rev++ }; break   /* confirmed */
  :: skip ->                                                           /* lost on its way */
#ifdef BUG_RELEASE_GIVES_UP
     break
#else
     skip   /* retried */
#endif
  od;
  finished++
}

init {
  atomic {
    byte i;
    for (i : 1 .. N) { run Client(i) }
  }
}
