#!/usr/bin/env bash
# THE test command. Makes sure every server the tests need is installed and running, then runs
# `mvn -B verify` with any extra arguments passed through (e.g. scripts/test.sh -pl dlock-core -am).
#
# Needs: a JDK 17+ and Maven 3.8+. Installs with apt-get (when run as root) what is missing:
#   redis-server + redis-tools  (tests start their own redis-server processes on free ports)
#   postgresql                  (127.0.0.1:5432, trust auth, database "test")
#   mariadb-server              (127.0.0.1:3306, root without password, database "test")
#   etcd-server                 (dlock-etcd tests start their own etcd processes on free ports)
#   faketime + iproute2         (scripts/chaos.sh: clock jumps, network namespaces for partitions)
#   chromium + chromium-driver  (dlock-cli's console test drives headless Chromium with Selenium)
#   spin + gcc                  (scripts/spin.sh: the Promela models; gcc also builds SteppedClock, the
#                               clock-stepping preload of the Redis clock tests)
# ZooKeeper and H2 need no install: the tests run them in-process.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '[test.sh] %s\n' "$*" >&2; }
die() { printf '[test.sh] ERROR: %s\n' "$*" >&2; exit 1; }

apt_updated=0
ensure_packages() {
  local missing=()
  for pkg in "$@"; do
    dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
    die "missing packages: ${missing[*]}. Install them (e.g. sudo apt-get install ${missing[*]}) and re-run."
  fi
  log "installing ${missing[*]}"
  if [ $apt_updated -eq 0 ]; then apt-get update -qq; apt_updated=1; fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

wait_port() {
  local port=$1 what=$2
  for _ in $(seq 1 60); do port_open "$port" && return 0; sleep 1; done
  die "$what did not start listening on 127.0.0.1:$port"
}

command -v java >/dev/null || die "no java on PATH: install a JDK 17 or newer"
command -v mvn >/dev/null || die "no mvn on PATH: install Maven 3.8 or newer (apt-get install maven)"

ensure_packages redis-server redis-tools postgresql mariadb-server etcd-server faketime iproute2
ensure_packages chromium chromium-driver
ensure_packages spin gcc
command -v redis-server >/dev/null || die "redis-server is not on PATH after install"

# PostgreSQL: running, trust auth on 127.0.0.1, database "test".
if ! port_open 5432; then
  log "starting PostgreSQL"
  if command -v pg_ctlcluster >/dev/null; then
    version=$(ls /etc/postgresql | sort -V | tail -1)
    pg_ctlcluster --skip-systemctl-redirect "$version" main start || die "could not start PostgreSQL $version"
  else
    die "PostgreSQL is not running on 127.0.0.1:5432 and pg_ctlcluster is missing"
  fi
  wait_port 5432 PostgreSQL
fi
if [ "$(id -u)" -eq 0 ] && command -v psql >/dev/null; then
  if ! psql -h 127.0.0.1 -U postgres -d postgres -tAc 'select 1' >/dev/null 2>&1; then
    # Fresh install: allow trust auth on loopback, as the tests connect without a password.
    hba=$(ls /etc/postgresql/*/main/pg_hba.conf | head -1)
    sed -i -E 's/^(host\s+all\s+all\s+(127\.0\.0\.1\/32|::1\/128)\s+)\S+/\1trust/' "$hba"
    su postgres -c "psql -tAc 'select pg_reload_conf()'" >/dev/null
  fi
  psql -h 127.0.0.1 -U postgres -d postgres -tAc "select 1 from pg_database where datname='test'" | grep -q 1 \
    || psql -h 127.0.0.1 -U postgres -d postgres -c 'create database test' >/dev/null
fi

# MariaDB: running, root without password over TCP, database "test".
if ! port_open 3306; then
  log "starting MariaDB"
  mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld 2>/dev/null || true
  start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd -- --user=mysql >/dev/null 2>&1 \
    || die "could not start MariaDB"
  wait_port 3306 MariaDB
fi
if [ "$(id -u)" -eq 0 ] && command -v mariadb >/dev/null; then
  mariadb -uroot -e "CREATE DATABASE IF NOT EXISTS test" 2>/dev/null \
    || mariadb -uroot -h127.0.0.1 -e "CREATE DATABASE IF NOT EXISTS test" \
    || die "cannot log in to MariaDB as root without a password"
  # TCP logins as root without a password (unix_socket auth alone is not enough for JDBC).
  if ! mariadb -uroot -h127.0.0.1 -e 'select 1' >/dev/null 2>&1; then
    mariadb -uroot -e "ALTER USER 'root'@'localhost' IDENTIFIED VIA mysql_native_password USING PASSWORD('') OR unix_socket" \
      || die "MariaDB refuses root over TCP without a password"
  fi
fi

# Every command below runs in a session of its own with DLOCK_TEST_RUN=<id> in its environment; Maven,
# the test JVMs and every process they start inherit both (the databases above carry neither). When the
# script ends, however it ends, no such process may still be alive: scripts/leftovers.sh names each one
# (and kills it) and the run fails. Interrupting the script stops the command's whole session.
run_id="test-$$-$(date +%s)"
sessions=()
# A command put in the background by a non-interactive shell starts with SIGINT and SIGQUIT ignored, and a
# JVM started so keeps SIGINT ignored (as would every JVM the tests start from it): env resets both, so the
# tests run as from a terminal (dlock-cli's tests send Ctrl-C as SIGINT to the commands they start).
marked() {
  DLOCK_TEST_RUN="$run_id" setsid env --default-signal=INT,QUIT "$@" &
  local pid=$!
  sessions+=("$pid")
  trap 'kill -TERM -- "-'"$pid"'" 2>/dev/null; exit 130' INT TERM
  wait "$pid"
}
finish() {
  local status=$? left
  trap - EXIT
  if ! left=$(scripts/leftovers.sh --kill "$run_id" "${sessions[@]}"); then
    log "ERROR: processes started by this run were still alive at its end (now killed):"
    printf '[test.sh]   %s\n' "$left" >&2
    [ "$status" -ne 0 ] || status=1
  fi
  exit "$status"
}
trap finish EXIT

# With arguments: `mvn -B verify ARGS` and nothing else (e.g. scripts/test.sh -pl dlock-core -am).
if [ $# -gt 0 ]; then
  log "servers ready; running mvn -B verify $*"
  marked mvn -B verify "$@"
  exit 0
fi

# Without: the build and every test, then the virtual-thread case on JDK 21+, the quick fault suite, the
# Promela models and the release packaging (scripts/test-jobs.sh --list names the jobs).
# DLOCK_TEST_LANES=N runs the jobs after the build in N parallel lanes (default 4); 1 runs everything in
# one `mvn -B verify` and then the other jobs in turn, as before lanes. Most jobs mostly wait (leases,
# timeouts: the machine is ~80% idle under three lanes of them), so lanes overlap the waits; they share
# nothing but servers on free ports (see test-jobs.sh). The jobs that keep a core busy (`--list` marks them
# heavy: the bench, the Promela models, 2,000 virtual threads per store, the release packaging and fault
# suite) all go to lane 1, one after another, so that no two of them starve the waiting jobs' timers; those
# that only compute run at nice 15 (test-jobs.sh: nicely).
lanes=${DLOCK_TEST_LANES:-4}
[[ "$lanes" =~ ^[1-9][0-9]*$ ]] || die "DLOCK_TEST_LANES must be a positive number, not '$lanes'"
if [ "$lanes" -eq 1 ]; then
  log "servers ready; running mvn -B verify (DLOCK_TEST_LANES=1: no lanes)"
  marked mvn -B verify
  marked scripts/test-jobs.sh vt release-chaos spin
  exit 0
fi

scripts/test-jobs.sh --check-coverage || die "add the modules above to a job in scripts/test-jobs.sh"
log "servers ready; building without tests: mvn -B verify -DskipTests"
marked mvn -B verify -DskipTests
# Plan: the heavy jobs in lane 1; then longest job first, each into the lane with the least expected time.
declare -a plan load
for ((l = 0; l < lanes; l++)); do plan[l]=""; load[l]=0; done
jobs=$(scripts/test-jobs.sh --list)
for entry in $(grep ":heavy$" <<<"$jobs") $(grep -v ":heavy$" <<<"$jobs"); do
  IFS=: read -r name seconds kind <<<"$entry"
  least=0
  if [ "$kind" != heavy ]; then
    for ((l = 1; l < lanes; l++)); do [ "${load[l]}" -lt "${load[least]}" ] && least=$l; done
  fi
  plan[least]+=" $name"
  load[least]=$((load[least] + seconds))
done
logs=target/test-lanes
rm -rf "$logs"
mkdir -p "$logs"
pids=()
trap 'for p in "${pids[@]}"; do kill -TERM -- "-$p" 2>/dev/null; done; exit 130' INT TERM
for ((l = 0; l < lanes; l++)); do
  [ -n "${plan[l]}" ] || continue
  log "lane $((l + 1)) (expected ${load[l]} s):${plan[l]}"
  # DLOCK_TEST_LANE/LANES: each lane's servers take ports from a share of their own (dev.dlock.testsupport.FreePorts).
  # shellcheck disable=SC2086
  DLOCK_TEST_RUN="$run_id" DLOCK_TEST_LANE=$((l + 1)) DLOCK_TEST_LANES=$lanes \
    setsid env --default-signal=INT,QUIT scripts/test-jobs.sh --log "$logs" ${plan[l]} &
  pids+=("$!")
  sessions+=("$!")
done
failed=0
for p in "${pids[@]}"; do wait "$p" || failed=1; done
[ $failed -eq 0 ] || die "some jobs failed after $SECONDS s (their logs are above and in $logs/)"
log "all jobs passed; $SECONDS s since the start (scripts/test-times.sh: where the time went)"
