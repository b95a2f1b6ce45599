#!/usr/bin/env bash
# The fault-injection suite: real client JVMs and real store processes under pauses, kills, partitions
# and clock jumps; checks that no stale fenced write is accepted and that the locks keep being granted.
#
#   scripts/chaos.sh [--quick | --long] [--store NAME]... [--fault NAME]... [--events N] [--clients N] [--seed N]
#
# --quick is the CI mode (scripts/test.sh runs it): a few faults per store, about 4 minutes in all.
# Without it every store gets --events fault events (default 1000).
# --long is the long run of the proof issue: 1000 fault events per store (an --events given after it
# wins), results under target/chaos-long. It takes hours per store: run one --store at a time, in the
# background, on a machine nobody else uses, and keep each store's report. Results: target/chaos/report.json,
# report.md and timeline-<store>.png. Exit status 1 when a hard target is missed, 2 for bad arguments.
#
# Needs redis-server + redis-tools, postgresql, mariadb-server, etcd-server, iproute2 and faketime (scripts/test.sh
# installs them); network namespaces need root (without them the partition fault is left out).
# Set CHAOS_SKIP_BUILD=1 to reuse the last build of dlock-chaos.
# Set DLOCK_ETCD_BINARY to run another etcd server binary than /usr/bin/etcd (it becomes the system property
# dlock.etcd.binary of the suite's JVM, which starts the etcd members; the client JVMs only get a URI), e.g.
# etcd-server 3.5.16 from Debian trixie unpacked with dpkg -x into /opt/etcd-3.5.16:
#   DLOCK_ETCD_BINARY=/opt/etcd-3.5.16/usr/bin/etcd scripts/chaos.sh --store etcd
# The clients then use allowStaleLeaderRevoke=true only if that etcd is affected by etcd-io/etcd#15247
# (before 3.4.31 and 3.5.13), and the report names the etcd version.
set -euo pipefail
cd "$(dirname "$0")/.."

classpath_file=dlock-chaos/target/classpath.txt
etcd_binary=()
if [ -n "${DLOCK_ETCD_BINARY:-}" ]; then
  etcd_binary=("-Ddlock.etcd.binary=$DLOCK_ETCD_BINARY")
fi
run() {
  exec java "${etcd_binary[@]}" -Djava.awt.headless=true -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -Xmx512m -XX:+UseSerialGC \
    -cp "dlock-chaos/target/classes:$(cat "$classpath_file")" dev.dlock.chaos.Main "$@"
}

# Bad arguments are answered before any build.
for arg in "$@"; do
  case "$arg" in --help|-h) [ -f "$classpath_file" ] && run --help ;; esac
done

args=()
for arg in "$@"; do
  case "$arg" in
    --long) args+=(--events 1000 --out target/chaos-long) ;;
    *) args+=("$arg") ;;
  esac
done
set -- "${args[@]}"

if [ "${CHAOS_SKIP_BUILD:-0}" != 1 ] || [ ! -f "$classpath_file" ]; then
  echo "[chaos.sh] building dlock-chaos" >&2
  mvn -B -q -pl dlock-chaos -am package -DskipTests -Dspotless.check.skip
fi
run "$@"
