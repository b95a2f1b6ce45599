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
set -euo pipefail
cd "$(dirname "$0")/.."

classpath_file=dlock-chaos/target/classpath.txt
run() {
  exec java -Djava.awt.headless=true -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -Xmx512m -XX:+UseSerialGC \
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
