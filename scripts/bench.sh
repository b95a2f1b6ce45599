#!/usr/bin/env bash
# The side-by-side benchmark: dlock against Redisson, Spring Integration, Curator and the raw floors, on
# the local servers, in one run. Builds dlock-bench (and the modules it needs), then runs it.
#
#   scripts/bench.sh [--quick] [--scenario NAME]... [--system NAME]... [--backend NAME]... [--help]
#   scripts/bench.sh --jmh [JMH ARGS]      # the JMH benchmarks of the engine's hot paths instead
#
# Results: dlock-bench/target/bench/results.json, results.md and chart.png. Needs Redis (127.0.0.1:6379),
# PostgreSQL (127.0.0.1:5432, database test, user postgres, trust) and MariaDB (127.0.0.1:3306, root
# without password, database test); scripts/test.sh installs and starts them. ZooKeeper runs in-process.
# Set BENCH_SKIP_BUILD=1 to reuse the last build.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "${BENCH_SKIP_BUILD:-0}" != 1 ]; then
  echo "[bench.sh] building dlock-bench" >&2
  mvn -B -q -pl dlock-bench -am package -DskipTests
fi
classpath="dlock-bench/target/classes:$(cat dlock-bench/target/classpath.txt)"
jvm=(-Djava.awt.headless=true -Xms1g -Xmx2g -XX:+UseG1GC)

if [ "${1:-}" = "--jmh" ]; then
  shift
  exec java "${jvm[@]}" -cp "$classpath" org.openjdk.jmh.Main "$@"
fi
exec java "${jvm[@]}" -cp "$classpath" dev.dlock.bench.Main --out dlock-bench/target/bench "$@"
