#!/usr/bin/env bash
# The parts of scripts/test.sh after the build, as named jobs. scripts/test.sh runs them in parallel lanes
# (each lane a sequence of jobs, one call of this script); alone it needs a build first:
#   mvn -B verify -DskipTests && scripts/test-jobs.sh redis jdbc
#   scripts/test-jobs.sh [--log DIR] JOB...   (--log: each job's output goes to DIR/JOB.log, printed if it fails)
#   scripts/test-jobs.sh --list               (the jobs: name:expected seconds[:heavy], longest first)
#
# A module job runs `mvn test` on the build's classes (see NO_BUILD), and -am brings the modules it
# depends on into the reactor without running their tests (the -Dtest patterns name only the job's own
# packages), so a job writes only its own modules' reports. Jobs that share more than servers on free
# ports (dev.dlock.testsupport.FreePorts) are one job: the CLI demo and the bench both use the machine's Redis and
# the default JDBC tables; the release check rewrites the jars that the fault suite runs. The
# virtual-thread job writes its reports to target/surefire-reports-vt.
set -uo pipefail
cd "$(dirname "$0")/.."

# name:expected seconds[:heavy] (from the last CI dry run in 4 lanes, 2026-11-26): the lanes are planned with
# these, longest first. The Redis and JDBC contract classes (125-205 s each) are jobs of their own, so that
# no lane carries a whole store module's 14-17 minutes. Heavy: the job keeps a core busy for most of its
# time (scripts/test.sh runs the heavy jobs one after another in one lane).
JOBS="jdbc-contract:500 redis-contract-b:490 etcd:410 redis-contract-a:350 core-tck:300 release-chaos:300:heavy
  cli-bench:300:heavy zookeeper:270 jdbc:270 redis:250 shedlock:220 model-check:210:heavy spin:170:heavy
  starter-example-micrometer-chaos:90 vt:70:heavy integration:60"

# What a job adds to `mvn test` so that it only runs tests: the build's checks and classes are reused, and the
# compiler's up-to-date check writes nothing (the incremental one rewrites its file lists in every module of
# the reactor, which jobs running at the same time share).
NO_BUILD=(-Dspotless.check.skip=true -Denforcer.skip=true -Dmaven.main.skip=true
  -Dmaven.compiler.useIncrementalCompilation=false -Dsurefire.failIfNoSpecifiedTests=false)

mvn_test() { # modules, test patterns (empty: every test of the modules), reports directory (optional)
  local modules=$1 tests=$2 reports=${3:-}
  local args=(-B test -pl "$modules" "${NO_BUILD[@]}")
  [ -n "$tests" ] && args+=(-am -Dtest="$tests")
  # Jobs that run one module's classes at the same time write their reports to directories of their own.
  [ -n "$reports" ] && args+=(-Ddlock.surefire.reports="$reports")
  mvn "${args[@]}"
}

# Test classes of a package and its sub-packages, as surefire's default includes name them.
pkg() { printf 'dev/dlock/%s/**/*Test' "$1"; }

# Named test classes of a package, comma-separated: contracts PACKAGE CLASS...
contracts() {
  local package=$1 out="" class
  shift
  for class in "$@"; do out+="${out:+,}dev/dlock/$package/$class"; done
  printf '%s' "$out"
}

# Runs a command at a low CPU priority (nice 15): for jobs that only compute (the bench's fixed-time cells, the
# Promela and Lincheck model checks), so that they take the cores the other lanes leave idle and never delay
# a waiting test's timer (a dry run saw ShedLock's 50 ms lock case miss its round trip next to them).
# Not for jobs that time store calls themselves (the virtual-thread case, the fault suite).
nicely() (
  renice -n 15 -p "$BASHPID" >/dev/null
  "$@"
)

job() {
  case $1 in
    core-tck) mvn_test dlock-core,dlock-test-support,dlock-tck \
      "dev/dlock/**/*Test,!dev/dlock/internal/*ModelCheckTest" ;;
    model-check) nicely mvn_test dlock-core "dev/dlock/internal/*ModelCheckTest" surefire-reports-model-check ;;
    redis) mvn_test dlock-redis "$(pkg redis),!dev/dlock/redis/**/*ContractTest" ;;
    redis-contract-a) mvn_test dlock-redis "$(contracts redis RedisContractTest RedisSentinelContractTest)" \
      surefire-reports-contract-a ;;
    redis-contract-b) mvn_test dlock-redis \
      "$(contracts redis RedisClusterContractTest RedlockContractTest RedlockFiveContractTest)" \
      surefire-reports-contract-b ;;
    zookeeper) mvn_test dlock-zookeeper "$(pkg zookeeper)" ;;
    jdbc) mvn_test dlock-jdbc "$(pkg jdbc),!$(contracts jdbc PostgresContractTest PostgresAutoCommitOffContractTest \
      MariaDbContractTest | sed 's/,/,!/g')" ;;
    jdbc-contract) mvn_test dlock-jdbc \
      "$(contracts jdbc PostgresContractTest PostgresAutoCommitOffContractTest MariaDbContractTest)" \
      surefire-reports-contract ;;
    etcd) mvn_test dlock-etcd "$(pkg etcd)" ;;
    shedlock) mvn_test dlock-shedlock "$(pkg shedlock)" ;;
    cli-bench) mvn_test dlock-cli "$(pkg cli)" && nicely mvn_test dlock-bench "$(pkg bench)" ;;
    starter-example-micrometer-chaos)
      mvn_test dlock-spring-boot-starter,dlock-example,dlock-micrometer,dlock-chaos \
        "$(pkg spring),$(pkg example),$(pkg micrometer),$(pkg chaos)" ;;
    integration) mvn_test dlock-spring-integration "$(pkg integration)" ;;
    vt) virtual_threads ;;
    release-chaos) scripts/check-release.sh && chaos_quick ;;
    spin) nicely scripts/spin.sh ;;
    *) echo "[test-jobs] unknown job $1 (scripts/test-jobs.sh --list)" >&2; return 2 ;;
  esac
}

# Virtual threads: the contract case that runs 2,000 callers on every store uses virtual threads and
# checks with JFR that no carrier is pinned, on a JDK >= 21 (the machine's Temurin 25). The default JDK
# runs the same case with platform threads in the module jobs.
virtual_threads() {
  local jdk21="" home v
  for home in /usr/lib/jvm/*; do
    # Not every entry is a JDK (Debian ships e.g. /usr/lib/jvm/openjdk-17 without a release file).
    [ -f "$home/release" ] && [ -x "$home/bin/java" ] || continue
    v=$(sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$home/release" || true)
    if [ -n "$v" ] && [ "$v" -ge 21 ]; then jdk21=$home; fi
  done
  [ -n "$jdk21" ] || { echo "[test-jobs] no JDK 21+ under /usr/lib/jvm for the virtual-thread case (install Temurin 21+)" >&2; return 1; }
  echo "[test-jobs] virtual-thread contract case on every store with $jdk21"
  local modules=dlock-tck,dlock-redis,dlock-zookeeper,dlock-jdbc,dlock-etcd
  rm -rf dlock-*/target/surefire-reports-vt
  # The case lives in the section LockContractTest$Fuzz: surefire matches a nested case by its section's
  # class name, hence the second '*' (without it the filter matches no case and the step passes empty).
  JAVA_HOME="$jdk21" mvn -B -q test -pl "$modules" -am "${NO_BUILD[@]}" -Ddlock.surefire.reports=surefire-reports-vt \
    -Dtest='*ContractTest*#twoThousandCallers*' || return 1
  # A filter that stops matching would pass empty: require a report with the case from every module.
  local ran
  ran=$(find dlock-tck dlock-redis dlock-zookeeper dlock-jdbc dlock-etcd -path '*/surefire-reports-vt/TEST-*.xml' \
    -exec grep -l 'twoThousandCallers' {} + | sed 's|/.*||' | sort -u | wc -l)
  [ "$ran" -eq 5 ] || { echo "[test-jobs] the virtual-thread case ran in $ran of 5 modules (did the -Dtest filter stop matching?)" >&2; return 1; }
}

# Fault-injection suite, quick mode: every store under a few real faults; fails on a stale fenced write
# accepted or a lock no longer granted after faults heal. A fixed seed keeps the fault schedule the same
# from run to run, so CI fails for a regression, not for a new random schedule; explore with other seeds
# (scripts/chaos.sh --quick --seed N, or none).
chaos_quick() {
  echo "[test-jobs] fault-injection suite: scripts/chaos.sh --quick --seed ${DLOCK_CHAOS_SEED:-10}"
  CHAOS_SKIP_BUILD=1 scripts/chaos.sh --quick --seed "${DLOCK_CHAOS_SEED:-10}"
}

# Every module with tests must be in a job: a module added to the parent pom and to no job would pass
# unseen in lanes (the sequential mode runs it anyway).
if [ "${1:-}" = "--check-coverage" ]; then
  missing=()
  for module in $(sed -n 's|.*<module>\(.*\)</module>.*|\1|p' pom.xml); do
    [ -d "$module/src/test" ] || continue
    grep -Eq "mvn_test ([^ ]*,)?$module[, ]" "$0" || missing+=("$module")
  done
  [ ${#missing[@]} -eq 0 ] || { echo "[test-jobs] modules with tests in no job: ${missing[*]}" >&2; exit 1; }
  exit 0
fi
if [ "${1:-}" = "--list" ]; then
  printf '%s\n' $JOBS
  exit 0
fi
log_dir=""
if [ "${1:-}" = "--log" ]; then
  log_dir=$2
  shift 2
  mkdir -p "$log_dir"
fi
[ $# -gt 0 ] || { echo "usage: scripts/test-jobs.sh [--log DIR] JOB... (--list names them)" >&2; exit 2; }

failed=()
for name in "$@"; do
  start=$SECONDS
  if [ -z "$log_dir" ]; then
    job "$name"
  else
    job "$name" >"$log_dir/$name.log" 2>&1
  fi
  status=$?
  took=$((SECONDS - start))
  if [ $status -eq 0 ]; then
    echo "[test-jobs] $name passed in ${took} s" >&2
  else
    failed+=("$name")
    if [ -n "$log_dir" ]; then
      # One job's log at a time, so that lanes failing together do not interleave their lines; from the
      # tests on when it has them (the lines before are Maven walking the modules the job depends on).
      flock "$log_dir/.print" sh -c 'grep -q "T E S T S" "$1" && sed -n "/T E S T S/,\$p" "$1" || cat "$1"
        echo "[test-jobs] $2 FAILED in $3 s (whole log: $1)"' _ "$log_dir/$name.log" "$name" "$took" >&2
    else
      echo "[test-jobs] $name FAILED in ${took} s" >&2
    fi
  fi
done
[ ${#failed[@]} -eq 0 ] || { echo "[test-jobs] failed: ${failed[*]}" >&2; exit 1; }
