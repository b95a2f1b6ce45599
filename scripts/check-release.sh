#!/usr/bin/env bash
# Checks that the release profile packages every published module without signing keys (gpg skipped):
# a sources jar and a javadoc jar each. Published modules are those dlock-bom lists; every module of the
# root pom must be in the BOM or in UNPUBLISHED below, so a new module cannot be forgotten in the BOM.
# Run by scripts/test.sh after the tests; alone: scripts/check-release.sh (about a minute).
set -euo pipefail
cd "$(dirname "$0")/.."

UNPUBLISHED="dlock-bom dlock-bench dlock-cli dlock-chaos"   # the BOM itself (a pom), applications, harnesses

die() { printf '[check-release] ERROR: %s\n' "$*" >&2; exit 1; }

published=$(sed -n 's:.*<artifactId>\(dlock-[a-z0-9-]*\)</artifactId>.*:\1:p' dlock-bom/pom.xml | grep -vx dlock-parent | grep -vx dlock-bom | sort -u)
for module in $(sed -n 's:.*<module>\([^<]*\)</module>.*:\1:p' pom.xml); do
  printf '%s\n' $published $UNPUBLISHED | grep -qx "$module" \
    || die "module $module is neither listed in dlock-bom/pom.xml nor in UNPUBLISHED of $0"
done
for module in $published; do
  [ -d "$module" ] || die "dlock-bom lists $module, which is not a module"
done

mvn -B -q -Prelease -Dgpg.skip -DskipTests -Dspotless.check.skip package \
  -pl "dlock-bom,$(printf '%s\n' $published | paste -sd, -)"
for module in $published; do
  for kind in sources javadoc; do
    ls "$module"/target/"$module"-*-"$kind".jar >/dev/null 2>&1 || die "$module has no $kind jar"
  done
done
printf '[check-release] release packaging OK for: %s\n' "$(printf '%s ' $published)" >&2
