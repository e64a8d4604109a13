#!/usr/bin/env bash
# The test firmware (verification/on-target) on emulated Cortex-M0, M3 and
# M4F under QEMU: scenarios, single-probe election, stale rejection, force
# open/close, a fixed-seed random run against a reference model, and a
# breaker shared with the SysTick exception on the SysTick clock. Output and
# exit code come through semihosting; every run is bounded by `timeout`, so a
# failed check or a hang fails the stage. Then the footprint of
# acquire + release + status on a 32-bit breaker with its config in a
# `static` (the form docs/embedded.md recommends) on thumbv7em
# (docs/embedded.md, "Footprint"): reported against the 1 KiB goal, and the
# stage fails if it grows past FOOTPRINT_CEILING (a regression guard set just
# above today's size; lower it as the core shrinks).
set -euo pipefail
source .ci/lib.sh
FOOTPRINT_GOAL=1024
FOOTPRINT_CEILING=1900
rm -f "target/ci-notes/$(basename "$0" .sh)"   # this stage's note, when run alone

if ! command -v qemu-system-arm >/dev/null 2>&1; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq qemu-system-arm >/dev/null
fi
ensure_targets thumbv6m-none-eabi thumbv7m-none-eabi thumbv7em-none-eabihf
rustup component add llvm-tools >/dev/null 2>&1 || rustup component add llvm-tools

root=$(pwd)
logs="$root/target/ci-on-target"
mkdir -p "$logs"
failed=0
results=()

# Lints for the two firmware crates (outside the workspace, so stage 20
# does not see them).
for crate in on-target footprint; do
  (cd "$root/verification/$crate" && cargo fmt -- --check)
done
(cd "$root/verification/on-target" && cargo clippy --release --locked --target thumbv7em-none-eabihf -- -D warnings)

cd "$root/verification/on-target"
for target in thumbv6m-none-eabi thumbv7m-none-eabi thumbv7em-none-eabihf; do
  cargo build --release --locked --target "$target"
  log="$logs/$target.log"
  # The runner in .cargo/config.toml is `timeout 120 qemu-system-arm ...`;
  # the outer timeout also bounds cargo itself.
  if timeout 150 cargo run --release --locked --target "$target" >"$log" 2>&1; then
    status=ok
  else
    status="FAILED (exit $?)"
    failed=1
  fi
  cat "$log"
  counts=$(grep -Eo '[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1 || true)
  results+=("${target%%-*} ${counts:-no summary} ${status}")
done

# Footprint: the binary with the breaker minus the baseline binary.
cd "$root/verification/footprint"
size="$(rustc --print sysroot)/lib/rustlib/$(rustc -vV | sed -n 's/^host: //p')/bin/llvm-size"
text() {
  cargo build --release --locked --target thumbv7em-none-eabihf ${1:+--features "$1"} >&2
  "$size" -A target/thumbv7em-none-eabihf/release/tripword-footprint | awk '$1 == ".text" { print $2 }'
}
base=$(text "")
w32=$(text w32-static)
flash=$((w32 - base))
echo "footprint: W32 (config in a static) acquire+release+status: $flash B of .text on thumbv7em, opt-level s (goal $FOOTPRINT_GOAL B, ceiling $FOOTPRINT_CEILING B)"
if [ "$flash" -gt "$FOOTPRINT_CEILING" ]; then
  echo "footprint regression: $flash B > ceiling $FOOTPRINT_CEILING B"
  failed=1
fi
cd "$root"
if [ "$flash" -le "$FOOTPRINT_GOAL" ]; then goal="goal met"; else goal="goal ${FOOTPRINT_GOAL} B missed by $((flash - FOOTPRINT_GOAL)) B"; fi

joined=$(printf '%s; ' "${results[@]}")
note "${joined}W32 breaker (config in a static) code ${flash} B on thumbv7em ($goal)"
exit $failed
