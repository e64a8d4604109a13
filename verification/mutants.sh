#!/usr/bin/env bash
# Mutation testing of the core in two tiers (docs/verification-mutants.md,
# "Mutation testing").
#
#   bash verification/mutants.sh full [-j N]   every mutant of `tripword`
#   bash verification/mutants.sh diff BASE     only the mutants in core code
#                                              changed since BASE (CI)
#   bash verification/mutants.sh std [-j N]    every mutant of `tripword-std`,
#                                              judged by its own tests with
#                                              every feature on (one tier)
#   bash verification/mutants.sh redis [-j N]  every mutant of `tripword-redis`,
#                                              in two stages: its unit tests,
#                                              then every test of it (they
#                                              start redis-server) on what
#                                              the unit tests missed
#   bash verification/mutants.sh std-diff BASE, redis-diff BASE
#                                              only the adapter's mutants in
#                                              code changed since BASE (CI)
#
# Tier 1 judges every mutant by the core's own tests (`.cargo/mutants-core.toml`,
# about 7 s a mutant on an idle 2-core machine). Tier 2 judges only what tier 1
# missed (or timed out on) by the core's tests and every verification suite
# (`.cargo/mutants.toml`: reference model, proptest, the exhaustive search,
# fast paths on every word, linearizability, mutant killers; about 50 s a
# mutant, because each rebuilds nine optimised test binaries). A mutant is
# missed only if both tiers miss it; the exit status is non-zero then.
#
# An adapter with a `.cargo/mutants-<adapter>-unit.toml` (tripword-redis) is
# judged in two stages the same way: stage one by its unit tests alone
# (`--lib`, seconds a mutant), stage two by all its tests (the Redis ones
# start redis-server: about a minute a mutant) only on what stage one missed.
# A timeout in stage one is detected (a unit test hung), as cargo-mutants
# counts it.
#
# MUTANTS_MAX (default 40): in `diff` mode, more mutants than this are tested
# as a shard of that size, chosen by the commit, so CI stays bounded and
# successive commits cover different shards.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:?usage: mutants.sh full|diff BASE|std|redis|std-diff BASE|redis-diff BASE}
shift
out=${MUTANTS_OUT:-target/mutants}
rm -rf "$out"
mkdir -p "$out"
# Shards a run of $1 mutants to MUTANTS_MAX (default 40) by the commit: sets
# `shard`.
shard=()
shard_of() {
  local n=$1 max=${MUTANTS_MAX:-40}
  if [ "$n" -gt "$max" ]; then
    local shards=$(((n + max - 1) / max))
    local k=$((0x$(git rev-parse --short=6 HEAD) % shards))
    echo "mutants: $n in the change; testing shard $k of $shards"
    shard=(--shard "$k/$shards")
  fi
}
case $mode in std | redis | std-diff | redis-diff)
  # One tier: the adapter's own tests judge its mutants.
  adapter=${mode%-diff}
  case $adapter in
    std) pkg=tripword-std dir=std-adapter features=(--all-features) ;;
    # A missing redis-server fails the tests instead of skipping them: a
    # mutant that hides the binary must not pass as "skipped".
    redis) pkg=tripword-redis dir=redis-adapter features=() && export TRIPWORD_REDIS_REQUIRE=1 ;;
  esac
  config=".cargo/mutants-$adapter.toml"
  select=()
  if [ -n "${MUTANTS_RE:-}" ]; then
    select=(-F "$MUTANTS_RE")
  fi
  if [ "$mode" != "$adapter" ]; then
    base=${1:?usage: mutants.sh $mode BASE}
    shift
    git diff "$base" -- "$dir/src" >"$out/change.diff"
    if [ ! -s "$out/change.diff" ]; then
      echo "mutants: no $pkg code changed since $base" | tee "$out/summary"
      exit 0
    fi
    select+=(--in-diff "$out/change.diff")
    n=$(cargo mutants -p "$pkg" "${features[@]}" --config "$config" "${select[@]}" --list | wc -l)
    if [ "$n" -eq 0 ]; then
      echo "mutants: the $pkg change since $base has no mutants" | tee "$out/summary"
      exit 0
    fi
    shard_of "$n"
  fi
  status=0
  # MUTANTS_IN_PLACE=1: mutate the working tree itself and build in its
  # target dir (`--in-place`, one job), so the adapter's test binaries are
  # rebuilt from an earlier build instead of from nothing in a scratch copy
  # per job. For CI's clone; a tree left mutated by an interrupted run is
  # restored with `git checkout`.
  place=()
  if [ "${MUTANTS_IN_PLACE:-0}" = 1 ]; then
    place=(--in-place)
  fi
  # Servers of test processes killed by a timeout, or of mutants of the
  # server handle's `Drop`.
  reap() { if [ "$adapter" = redis ]; then bash verification/reap-redis.sh; fi; }
  n() { if [ -f "$1" ]; then wc -l <"$1"; else echo 0; fi; }
  unit=".cargo/mutants-$adapter-unit.toml"
  if [ ! -f "$unit" ]; then
    cargo mutants -p "$pkg" "${features[@]}" --config "$config" "${select[@]}" "${shard[@]}" \
      "${place[@]}" -o "$out/$adapter" "$@" || status=$?
    reap
    case $status in 0 | 2 | 3) ;; *) echo "mutants: $pkg run failed ($status)"; exit "$status" ;; esac
    o="$out/$adapter/mutants.out"
    echo "mutants: $pkg caught $(n "$o/caught.txt"), unviable $(n "$o/unviable.txt"), timeouts $(n "$o/timeout.txt") (detected), missed $(n "$o/missed.txt")" | tee "$out/summary"
    if [ -s "$o/missed.txt" ]; then
      cat "$o/missed.txt"
      exit 2
    fi
    exit 0
  fi
  # Two stages. Both configs must select the same mutants (the same
  # exclusions), or stage one would judge mutants stage two leaves out, or
  # drop some that stage two never sees.
  if ! cmp -s <(cargo mutants -p "$pkg" --config "$unit" --list) <(cargo mutants -p "$pkg" --config "$config" --list); then
    echo "mutants: $unit and $config select different mutants (their exclusions differ)"
    exit 1
  fi
  cargo mutants -p "$pkg" "${features[@]}" --config "$unit" "${select[@]}" "${shard[@]}" \
    "${place[@]}" -o "$out/$adapter-unit" "$@" || status=$?
  reap
  case $status in 0 | 2 | 3) ;; *) echo "mutants: $pkg stage one failed to run ($status)"; exit "$status" ;; esac
  o1="$out/$adapter-unit/mutants.out"
  o2="$out/$adapter/mutants.out"
  if [ -s "$o1/missed.txt" ]; then
    # The names, as regexes matching exactly (with their places).
    re="^($(sed -e 's/[][\\.^$*+?(){}|/]/\\&/g' "$o1/missed.txt" | paste -sd'|'))\$"
    # The caller's arguments less a `--shard`: stage one's shard already
    # chose these mutants, and the same shard of the names alone would
    # drop most of them.
    rest=()
    while [ $# -gt 0 ]; do
      case $1 in
        --shard) shift ;;
        --shard=*) ;;
        *) rest+=("$1") ;;
      esac
      shift
    done
    status=0
    cargo mutants -p "$pkg" "${features[@]}" --config "$config" -F "$re" \
      "${place[@]}" -o "$out/$adapter" "${rest[@]}" || status=$?
    reap
    case $status in 0 | 2 | 3) ;; *) echo "mutants: $pkg stage two failed to run ($status)"; exit "$status" ;; esac
  fi
  echo "mutants: $pkg stage one (unit tests) caught $(n "$o1/caught.txt"), unviable $(n "$o1/unviable.txt"), timeouts $(n "$o1/timeout.txt") (detected); stage two (every test) caught $(n "$o2/caught.txt") of $(n "$o1/missed.txt"), timeouts $(n "$o2/timeout.txt") (detected); missed $(n "$o2/missed.txt")" | tee "$out/summary"
  if [ -s "$o2/missed.txt" ]; then
    cat "$o2/missed.txt"
    exit 2
  fi
  exit 0
  ;;
esac
filter=()
# Tier 1 builds the core with every feature that has code of its own (the
# clocks for embassy-time and fugit, jitter, the heapless log): a mutant in
# code the build leaves out would pass every test, reported as missed.
core_features=jitter,heapless,embassy-time,fugit
if [ "$mode" = diff ]; then
  base=${1:?usage: mutants.sh diff BASE}
  shift
  git diff "$base" -- core/src ':!core/src/tests.rs' ':!core/src/transition/tests.rs' ':!core/src/rate/tests.rs' ':!core/src/kit/tests.rs' ':!core/src/future/tests.rs' >"$out/change.diff"
  if [ ! -s "$out/change.diff" ]; then
    echo "mutants: no core code changed since $base"
    echo "0 mutants" >"$out/summary"
    exit 0
  fi
  filter=(--in-diff "$out/change.diff")
  n=$(cargo mutants -p tripword --features "$core_features" --config .cargo/mutants-core.toml "${filter[@]}" --list | wc -l)
  if [ "$n" -eq 0 ]; then
    # The change touched core code but no line cargo-mutants mutates (a
    # comment, a `.max(1)` on an argument); it then writes no output files.
    echo "mutants: the change since $base has no mutants"
    echo "0 mutants" >"$out/summary"
    exit 0
  fi
  shard_of "$n"
fi
# MUTANTS_RE: only the mutants whose names match it (tier 1 picks them;
# tier 2 judges what tier 1 left): re-judging a run's survivors on a later
# commit.
select=()
if [ -n "${MUTANTS_RE:-}" ]; then
  select=(-F "$MUTANTS_RE")
fi
status=0
cargo mutants -p tripword --features "$core_features" --config .cargo/mutants-core.toml "${filter[@]}" "${shard[@]}" "${select[@]}" \
  --cargo-test-arg=--lib --cargo-test-arg=--tests -o "$out/t1" "$@" || status=$?
t1="$out/t1/mutants.out"
# 0: all caught; 2: some missed; 3: some timed out. Anything else is a failure
# of the run itself.
case $status in 0 | 2 | 3) ;; *) echo "mutants: tier 1 failed to run ($status)"; exit "$status" ;; esac
cat "$t1/missed.txt" "$t1/timeout.txt" >"$out/tier2.txt" 2>/dev/null || true
missed=0
if [ -s "$out/tier2.txt" ]; then
  # The names, as regexes matching exactly.
  re="^($(sed -e 's/[][\\.^$*+?(){}|/]/\\&/g' "$out/tier2.txt" | paste -sd'|'))\$"
  status=0
  # No --features here: with it, cargo-mutants tests the mutated package
  # alone; the verification crate's dependency turns on jitter and heapless.
  # The test packages are named here: cargo-mutants 27.1 did not always apply
  # `test_package` from the config file.
  cargo mutants -p tripword --test-package tripword --test-package tripword-verification --test-package tripword-verification-tokio \
    "${filter[@]}" -F "$re" -o "$out/t2" "$@" || status=$?
  case $status in 0 | 2 | 3) ;; *) echo "mutants: tier 2 failed to run ($status)"; exit "$status" ;; esac
  # A timeout is detected (the mutant hung the tests), as cargo-mutants
  # counts it; it is listed, not counted as missed.
  missed=$(cat "$out/t2/mutants.out/missed.txt" 2>/dev/null | wc -l)
  if [ -s "$out/t2/mutants.out/timeout.txt" ]; then
    echo "mutants: tier 2 timeouts (detected):"
    cat "$out/t2/mutants.out/timeout.txt"
  fi
fi
count() { if [ -f "$1" ]; then wc -l <"$1"; else echo 0; fi; }
caught=$(count "$t1/caught.txt")
unviable=$(count "$t1/unviable.txt")
caught2=$(count "$out/t2/mutants.out/caught.txt")
echo "mutants: tier 1 caught $caught, unviable $unviable; tier 2 caught $caught2 of $(wc -l <"$out/tier2.txt"); missed $missed" | tee "$out/summary"
if [ "$missed" -gt 0 ]; then
  cat "$out/t2/mutants.out/missed.txt"
  exit 2
fi
