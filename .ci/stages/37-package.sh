#!/usr/bin/env bash
# Packaging and the public API. `cargo package` for every crate that would be
# published (each workspace member whose `publish` is not false), all in one
# command so that tripword-std and tripword-redis resolve `tripword` (and
# tripword-std its `tripword-macros`) from the packages just made, through
# cargo's local registry overlay, not from crates.io; each package is built
# from its own tarball (cargo's verification). Then each package's file list
# is printed and checked: no target/ directory, no file over 256 KiB (test
# data, a stray binary), no package over 512 KiB compressed (max_file_kib,
# max_crate_kib below), both license files present. Last,
# api/check.sh: the public API of tripword, tripword-std and tripword-redis
# against the committed listings in api/ (cargo-public-api, installed here,
# on nightly rustdoc JSON), and the docs.rs build (nightly rustdoc with
# `--cfg docsrs`, every feature) so that the feature badges compile.
set -euo pipefail
source .ci/lib.sh
mkdir -p target

max_file_kib=256
max_crate_kib=512

# name<TAB>version of each member that would be published.
cargo metadata --no-deps --format-version 1 --locked | python3 -c '
import json, sys
for p in json.load(sys.stdin)["packages"]:
    if p["publish"] is None or p["publish"]:
        print(p["name"] + "\t" + p["version"])
' >target/ci-package-crates.tsv
mapfile -t crates < <(cut -f1 target/ci-package-crates.tsv)
[ "${#crates[@]}" -gt 0 ] || { echo "no publishable crate found" >&2; exit 1; }
args=()
for crate in "${crates[@]}"; do args+=(-p "$crate"); done

# --allow-dirty: CI packages a fresh clone; a developer's uncommitted edits
# should not stop the stage from checking what the packages would hold.
# `cargo package` asks crates.io's index once per package: a failed fetch is
# tried again (three tries), and the stage's note carries the error, so that
# the summary says why a failure happened.
# cargo extracts the packages it verifies against each other (the local
# registry overlay) under $CARGO_HOME/registry/src/<hash of the registry's
# path>/<crate>-<version>, and reuses a directory left there by an earlier
# run from the same checkout path: tripword-std was then verified against
# an old tripword. Our crates are not on crates.io, so those directories
# are only ever such leftovers: removed first.
# Likewise the verification builds: cargo takes a registry crate's build
# as final for its name and version, so a `tripword` built by an earlier
# run from its package was reused whatever the sources said now. The
# packages are made and verified in a target directory of their own, made
# afresh.
while IFS=$'\t' read -r crate version; do
  rm -rf "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/"$crate-$version"
done <target/ci-package-crates.tsv
pkg_target=target/ci-package-build
rm -rf "$pkg_target" target/package
package_ok=0
for try in 1 2 3; do
  if CARGO_TARGET_DIR="$pkg_target" cargo package --locked --allow-dirty "${args[@]}" 2>&1 | tee target/ci-package.log; then
    package_ok=1; break
  fi
  echo "cargo package failed (try $try of 3)" >&2
  sleep $((try * 10))
done
if [ "$package_ok" != 1 ]; then
  note "cargo package failed: $(grep -m1 -E '^(error|caused by)' target/ci-package.log || tail -n1 target/ci-package.log)"
  exit 1
fi

problems=0
summary=()
while IFS=$'\t' read -r crate version; do
  file="$pkg_target/package/$crate-$version.crate"
  [ -f "$file" ] || { echo "missing $file" >&2; problems=1; continue; }
  echo "== $crate $version: files"
  # size<TAB>path, the path without the `crate-version/` prefix.
  tar tzvf "$file" | awk -v p="$crate-$version/" '{ n = $6; sub("^" p, "", n); print $3 "\t" n }' \
    >"target/ci-package-$crate.files"
  awk -F'\t' '{ printf "%9d  %s\n", $1, $2 }' "target/ci-package-$crate.files"
  if grep -E $'\t(.*/)?target/' "target/ci-package-$crate.files"; then
    echo "FAIL: $crate packages a target/ directory (above)" >&2; problems=1
  fi
  big=$(awk -F'\t' -v max=$((max_file_kib * 1024)) '$1 > max { print $2 " (" int($1 / 1024) " KiB)" }' \
    "target/ci-package-$crate.files")
  if [ -n "$big" ]; then
    echo "FAIL: $crate packages files over $max_file_kib KiB (exclude them in its Cargo.toml):" >&2
    echo "$big" >&2; problems=1
  fi
  for required in Cargo.toml LICENSE-MIT LICENSE-APACHE; do
    if ! cut -f2 "target/ci-package-$crate.files" | grep -qx "$required"; then
      echo "FAIL: $crate's package has no $required" >&2; problems=1
    fi
  done
  kib=$(( ($(stat -c %s "$file") + 1023) / 1024 ))
  if [ "$kib" -gt "$max_crate_kib" ]; then
    echo "FAIL: $file is $kib KiB, over $max_crate_kib KiB" >&2; problems=1
  fi
  count=$(wc -l <"target/ci-package-$crate.files")
  summary+=("$crate $count files ${kib} KiB")
done <target/ci-package-crates.tsv
[ "$problems" = 0 ] || { note "package contents: see the FAIL lines in the log"; exit 1; }
note "packaged and built from their tarballs: $(IFS=,; echo "${summary[*]}" | sed 's/,/, /g');"

# The public API listings, with cargo-public-api at the version api/check.sh
# pins (a no-op when that version is installed already).
if ! rustup run nightly rustc --version >/dev/null 2>&1; then
  rustup toolchain install nightly --profile minimal || true
fi
if ! rustup run nightly rustc --version >/dev/null 2>&1; then
  note "public API and docs.rs build SKIPPED: no nightly toolchain on this machine"
  exit 0
fi
tool_version=$(sed -n 's/^tool_version=//p' api/check.sh)
cargo install --locked cargo-public-api --version "$tool_version" ||
  { sleep 10; cargo install --locked cargo-public-api --version "$tool_version"; } ||
  { note "cargo install cargo-public-api $tool_version failed"; exit 1; }
bash api/check.sh || { note "public API differs from the listings in api/ (the diff is in the log)"; exit 1; }
note "public API of tripword, tripword-std, tripword-redis matches api/ (cargo-public-api $tool_version, $(rustc +nightly --version | cut -d' ' -f2-));"

# docs.rs's build: nightly rustdoc, every feature, `--cfg docsrs` (the
# feature badges). Shares api/check.sh's nightly target directory.
RUSTDOCFLAGS="--cfg docsrs -D rustdoc::broken_intra_doc_links" CARGO_TARGET_DIR=target/api \
  cargo +nightly doc --locked --no-deps --all-features -p tripword -p tripword-std -p tripword-redis -p tripword-lab ||
  { note "docs.rs build (--cfg docsrs, all features) failed"; exit 1; }
note "docs.rs build (--cfg docsrs, all features) ok"
