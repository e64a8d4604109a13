#!/usr/bin/env bash
# The public API of each published library crate, committed as a listing so
# that a change to it shows in review: api/<crate>.txt, one public item a
# line, as cargo-public-api prints it from nightly rustdoc JSON with every
# feature on (blanket impls such as `impl<T> From<T> for T` left out; the
# nightly-only auto traits `Freeze` and `UnsafeUnpin` dropped, so that the
# listing does not change with the nightly; `Send`, `Sync`, `Unpin` and the
# unwind-safety traits stay).
#
#   bash api/check.sh           regenerate, diff against api/*.txt, exit 1 on
#                               any difference (the diff is printed)
#   bash api/check.sh --bless   regenerate and rewrite api/*.txt
#
# Needs a nightly toolchain and cargo-public-api at `tool_version`:
#   cargo install --locked cargo-public-api --version <tool_version>
# (.ci/stages/37-package.sh installs it and runs this script).
set -euo pipefail
cd "$(dirname "$0")/.."

tool_version=0.52.0
crates=(tripword tripword-std tripword-redis)

bless=0
case "${1:-}" in
  "") ;;
  --bless) bless=1 ;;
  *) echo "usage: bash api/check.sh [--bless]" >&2; exit 2 ;;
esac

if ! have=$(cargo public-api --version 2>/dev/null); then
  echo "api/check.sh: cargo-public-api is not installed:" >&2
  echo "  cargo install --locked cargo-public-api --version $tool_version" >&2
  exit 2
fi
if [ "$have" != "cargo-public-api $tool_version" ]; then
  echo "api/check.sh: found '$have', the listings are made with $tool_version:" >&2
  echo "  cargo install --locked cargo-public-api --version $tool_version" >&2
  exit 2
fi

# Nightly rustdoc builds apart from the stable build (nothing to share).
export CARGO_TARGET_DIR="$PWD/target/api"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

changed=0
for crate in "${crates[@]}"; do
  if ! cargo public-api --color never -p "$crate" --all-features -s >"$out/$crate.raw" 2>"$out/$crate.err"; then
    cat "$out/$crate.err" >&2
    echo "api/check.sh: cargo public-api failed for $crate ($(rustc +nightly --version 2>/dev/null || echo 'no nightly'))" >&2
    exit 2
  fi
  grep -Ev '^impl(<.*>)? !?core::marker::(Freeze|UnsafeUnpin) for ' "$out/$crate.raw" >"$out/$crate.txt" || true
  if [ "$bless" = 1 ]; then
    cp "$out/$crate.txt" "api/$crate.txt"
    echo "api/$crate.txt: $(wc -l <"api/$crate.txt") lines"
  else
    committed="api/$crate.txt"
    [ -f "$committed" ] || { echo "api/$crate.txt is missing"; committed=/dev/null; }
    if ! diff -u --label "api/$crate.txt (committed)" --label "api/$crate.txt (this tree)" \
        "$committed" "$out/$crate.txt"; then
      changed=1
    fi
  fi
done

if [ "$changed" = 1 ]; then
  echo >&2
  echo "api/check.sh: the public API differs from api/*.txt (diff above)." >&2
  echo "If the change is intended: bash api/check.sh --bless, and commit api/." >&2
  exit 1
fi
[ "$bless" = 1 ] || echo "api/check.sh: public API of ${crates[*]} matches api/*.txt"
