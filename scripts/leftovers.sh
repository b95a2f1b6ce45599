#!/usr/bin/env bash
# Lists the processes of a test run that are still alive, one per line as "pid command line", and exits
# 1 if there is any (0 if none). A process belongs to the run when its environment carries
# DLOCK_TEST_RUN=<id> or when it is in one of the given sessions. scripts/test.sh runs each of its
# commands in a session of its own with that variable set, and calls this at its end, so that a server a
# test or the fault suite leaves behind fails the run by name. Both marks are needed: redis-server
# overwrites its environment block with its process title (so /proc/PID/environ reads empty), and a
# process that starts a session of its own keeps the variable.
#   scripts/leftovers.sh [--kill] <id> [session id...]   (--kill: SIGKILL them too, after naming them)
set -u
kill=0
if [ "${1:-}" = "--kill" ]; then kill=1; shift; fi
[ $# -ge 1 ] && [ -n "$1" ] || { echo "usage: scripts/leftovers.sh [--kill] <run id> [session id...]" >&2; exit 2; }
id=$1
shift
sessions=" $* "

ours() {
  local pid stat session
  for pid in "$@"; do
    [ "$pid" = "$$" ] && continue
    # A process that ended meanwhile, or a zombie (no environment, gone from its session), does not count.
    read -r stat 2>/dev/null <"/proc/$pid/stat" || continue
    stat=${stat##*) }
    case $stat in Z* | X*) continue ;; esac
    read -r _ _ _ session _ <<<"$stat"
    if [[ "$sessions" == *" $session "* ]] || grep -qzxF "DLOCK_TEST_RUN=$id" "/proc/$pid/environ" 2>/dev/null; then
      echo "$pid"
    fi
  done
}

all=(/proc/[0-9]*)
# shellcheck disable=SC2207
pids=($(ours "${all[@]#/proc/}"))
# Processes killed together with their JVM may take a moment to be torn down: give them 5 seconds.
deadline=$((SECONDS + 5))
while [ ${#pids[@]} -gt 0 ] && [ $SECONDS -lt $deadline ]; do
  sleep 0.2
  # shellcheck disable=SC2207
  pids=($(ours "${pids[@]}"))
done
[ ${#pids[@]} -eq 0 ] && exit 0
for pid in "${pids[@]}"; do
  cmd=$(tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline")
  echo "$pid ${cmd:-(ended)}"
done
if [ $kill -eq 1 ]; then
  kill -9 "${pids[@]}" 2>/dev/null
fi
exit 1
