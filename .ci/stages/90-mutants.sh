#!/usr/bin/env bash
# Mutation testing of the code changed (core, std adapter, Redis adapter)
# since the last commit known to leave no mutant missed (docs/verification-mutants.md,
# "Mutation testing"). The base is the commit named on the line starting
# "The clean commit:" in docs/verification-mutants.md (its section "The
# clean commit": moved, and tagged `mutants-clean-*`, after
# `verification/mutants.sh full` or `diff` showed 0 missed there; in the
# tree because a clone need not carry tags), else the newest such tag, else
# the previous commit. Two tiers (core tests, then every verification suite on
# what they missed), at most MUTANTS_MAX mutants (a shard chosen by the
# commit when the change has more), bounded by a timeout. Fails on a missed
# mutant.
set -euo pipefail
source .ci/lib.sh
if ! command -v cargo-mutants >/dev/null 2>&1; then
  cargo install --locked cargo-mutants@27.1.0 >/dev/null 2>&1 || cargo install --locked cargo-mutants
fi
base=$(git tag --list 'mutants-clean-*' --sort=-creatordate | head -1)
clean=$(sed -n 's/^The clean commit: `\([0-9a-f]\{7,40\}\)`\.\{0,1\}$/\1/p' docs/verification-mutants.md | head -1)
if [ -n "$clean" ] && git rev-parse -q --verify "$clean^{commit}" >/dev/null; then
  base=$clean
fi
base=${MUTANTS_BASE:-${base:-HEAD~1}}
if ! git rev-parse -q --verify "$base^{commit}" >/dev/null; then
  note "no base commit ($base): skipped"
  exit 0
fi
MUTANTS_MAX=${MUTANTS_MAX:-8} timeout 1200 bash verification/mutants.sh diff "$base" -j 2
note "since $base: $(cat target/mutants/summary)"
# The adapters, judged by their own tests (the Redis adapter's start
# redis-server, which stage 10 installed; its unit tests judge first, and
# the whole suite only what they miss): at most 2 mutants each. In
# place, one at a time, when the adapters' sources have no uncommitted
# change (as in CI's clone): stages 35 and 85 built the adapters' tests
# with the same features, so a mutant rebuilds the adapter and relinks its
# tests, where a scratch copy per job built them from nothing (two and a
# half minutes of both cores per job). The sources are restored after, also
# when a timeout stops the run. No baseline run: stage 30 ran the same
# tests, green, on this commit (a baseline of tripword-redis's tests, its
# clusters and Sentinel failovers included, costs two minutes); the
# timeout per mutant is set instead.
adapters=(std-adapter redis-adapter)
for adapter in std redis; do
  if git diff --quiet HEAD -- "${adapters[@]}" && [ -z "$(git status --porcelain -- "${adapters[@]}")" ]; then
    place=1 jobs=()
  else
    place=0 jobs=(-j 2)
  fi
  status=0
  MUTANTS_IN_PLACE=$place MUTANTS_OUT="target/mutants-$adapter" MUTANTS_MAX=${MUTANTS_ADAPTER_MAX:-2} \
    timeout 900 bash verification/mutants.sh "$adapter-diff" "$base" "${jobs[@]}" --baseline skip --timeout 300 ||
    status=$?
  [ "$place" = 1 ] && git checkout -- "${adapters[@]}"
  [ "$status" = 0 ] || exit "$status"
  note "$(cat "target/mutants-$adapter/summary")"
done
