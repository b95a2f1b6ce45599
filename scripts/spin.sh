#!/usr/bin/env bash
# Model-checks the Promela models of the store recipes (every */src/test/promela/*.pml) with spin: each
# must verify with no error (assertions and invalid end states), and each seeded bug its header lists
# (" *   -DBUG_NAME  what it breaks") must make the same check fail, so a model that stopped biting fails
# here too. Run by scripts/test.sh; alone: scripts/spin.sh [MODEL.pml ...]. Needs spin and gcc
# (apt-get install spin gcc). Seconds per model.
set -euo pipefail
cd "$(dirname "$0")/.."

die() { printf '[spin] ERROR: %s\n' "$*" >&2; exit 1; }
command -v spin >/dev/null || die "spin is not installed (apt-get install spin)"
command -v gcc >/dev/null || die "gcc is not installed (apt-get install gcc)"

models=("$@")
if [ ${#models[@]} -eq 0 ]; then
  mapfile -t models < <(find . -path '*/src/test/promela/*.pml' -not -path './.git/*' | sort)
fi
[ ${#models[@]} -gt 0 ] || die "no models found under */src/test/promela/"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Prints pan's error count for MODEL with the extra spin options; fails on a model that does not compile.
# OPT is gcc's optimisation: -O2 for a model's whole search, -O0 for a seeded bug's (it stops at the first
# error, usually within a second, so compiling is most of its time: -O0 compiles 3-6 times faster).
errors() {
  local opt=$1 model=$2; shift 2
  (cd "$work" && rm -f pan pan.* ./*.trail \
    && spin -a "$@" "$model" >spin.out 2>&1 || { cat spin.out >&2; exit 1; }
   gcc "$opt" -w -DSAFETY -o pan pan.c || exit 1
   ./pan -m1000000 >pan.out 2>&1 || true
   grep -q 'Search not completed' pan.out && ! grep -q 'errors: [1-9]' pan.out && { cat pan.out >&2; exit 2; }
   sed -n 's/.*errors: \([0-9]*\).*/\1/p' pan.out | head -1)
}

for model in "${models[@]}"; do
  path=$(realpath "$model")
  start=$(date +%s)
  found=$(errors -O2 "$path") || die "$model: spin or pan failed (output above)"
  [ "$found" = "0" ] || die "$model: $found error(s) on the model itself (run: spin -a $model; gcc -DSAFETY -o pan pan.c; ./pan; spin -t -p $model)"
  bugs=$(sed -n 's/^ \*   -D\(BUG_[A-Z_]*\).*/\1/p' "$model")
  [ -n "$bugs" ] || die "$model lists no seeded bug (' *   -DBUG_NAME  what it breaks' in its header)"
  for bug in $bugs; do
    found=$(errors -O0 "$path" "-D$bug") || die "$model with $bug: spin or pan failed"
    [ "$found" != "0" ] || die "$model: the seeded bug $bug is not found (the model no longer bites)"
  done
  printf '[spin] %s: verified; seeded bugs found: %s (%ss)\n' "$model" "$(echo $bugs | tr ' ' ,)" $(( $(date +%s) - start )) >&2
done
