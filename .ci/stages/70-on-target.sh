#!/usr/bin/env bash
# The test firmware (verification/on-target) on emulated Cortex-M0, M3, M4F
# and RISC-V (riscv32imac, QEMU virt): scenarios, single-probe election,
# stale rejection, force open/close, a fixed-seed random run against a
# reference model, sparse and periodic callers (a W32 breaker at its
# default horizon, callers every 2^15 ticks, every 30 s and every 65 s), a
# breaker on the hardware clock, and a breaker shared with a timer interrupt
# (SysTick on Cortex-M, the machine timer on RISC-V), and a `static` table of
# named breakers tripped by that interrupt whose transition log (feature
# heapless) the main loop drains. Then the two RTOS examples
# (verification/embassy on mps2-an386, verification/rtic on lm3s6965evb),
# each a firmware whose checks exit non-zero through semihosting on failure.
# Output and exit code come through semihosting; every run is bounded by
# `timeout`, so a failed check or a hang fails the stage. Then the footprint of
# acquire + release + status on a 32-bit breaker on thumbv7em
# (docs/embedded.md, "Footprint"), with the config in a `static`
# (StaticBreaker) and as a compile-time constant (ConstBreaker), the two forms
# that guide recommends: the stage fails if either passes the 1 KiB goal
# (docs/embedded.md, "Footprint", has the ledger of what fills it). The same
# two forms with the core's `recovery` feature on, options unused and used,
# are printed beside them (information only).
set -euo pipefail
source .ci/lib.sh
FOOTPRINT_GOAL=1024
rm -f "target/ci-notes/$(basename "$0" .sh)"   # this stage's note, when run alone

# QEMU from the system, or unpacked into a private prefix where apt cannot
# install it beside the image's packages (.ci/qemu.sh says how).
source .ci/qemu.sh
t_qemu=$(date +%s)
ensure_qemu
qemu_note="qemu $(qemu-system-arm --version | grep -Eo 'version [0-9.]+' | head -n 1 | cut -d' ' -f2) from ${QEMU_SOURCE} in $(( $(date +%s) - t_qemu ))s"
echo "$qemu_note"
ensure_targets thumbv6m-none-eabi thumbv7m-none-eabi thumbv7em-none-eabihf riscv32imac-unknown-none-elf
rustup component add llvm-tools >/dev/null 2>&1 || rustup component add llvm-tools

root=$(pwd)
logs="$root/target/ci-on-target"
mkdir -p "$logs"
failed=0
results=()

# Lints for the firmware crates (outside the workspace, so stage 20
# does not see them); the RTOS examples build for the one target their
# .cargo/config.toml names.
for crate in on-target footprint embassy rtic; do
  (cd "$root/verification/$crate" && cargo fmt -- --check)
done
for target in thumbv7em-none-eabihf riscv32imac-unknown-none-elf; do
  (cd "$root/verification/on-target" && cargo clippy --release --locked --target "$target" -- -D warnings)
done
# The two RTOS examples share one target directory: their common
# dependencies (cortex-m, the proc-macro stack) are built once.
rtos_target="$root/target/ci-rtos-examples"
for crate in embassy rtic; do
  (cd "$root/verification/$crate" && CARGO_TARGET_DIR="$rtos_target" cargo clippy --release --locked -- -D warnings)
done

cd "$root/verification/on-target"
for target in thumbv6m-none-eabi thumbv7m-none-eabi thumbv7em-none-eabihf riscv32imac-unknown-none-elf; do
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

# The RTOS examples: an embassy task with a SysTick time driver (Cortex-M4F,
# mps2-an386) and an RTIC 2 app whose async task and hardware task share one
# breaker (Cortex-M3, lm3s6965evb). Each runner is `timeout 60 qemu-system-arm
# ...`; the outer timeout also bounds cargo.
rtos=()
for crate in embassy rtic; do
  cd "$root/verification/$crate"
  CARGO_TARGET_DIR="$rtos_target" cargo build --release --locked
  log="$logs/$crate.log"
  if CARGO_TARGET_DIR="$rtos_target" timeout 90 cargo run --release --locked >"$log" 2>&1; then
    status=ok
  else
    status="FAILED (exit $?)"
    failed=1
  fi
  cat "$log"
  counts=$(grep -Eo '[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1 || true)
  rtos+=("${crate}: ${status} (${counts:-no summary})")
done

# Footprint: the binary with the breaker minus the baseline binary, for the
# two forms docs/embedded.md recommends: config in a `static`
# (StaticBreaker::from_parts(&CONFIG, ..)) and config a compile-time constant
# (ConstBreaker::from_parts(Const::new(), ..)). Both must stay within the
# 1 KiB goal.
cd "$root/verification/footprint"
size="$(rustc --print sysroot)/lib/rustlib/$(rustc -vV | sed -n 's/^host: //p')/bin/llvm-size"
text() {
  cargo build --release --locked --target thumbv7em-none-eabihf ${1:+--features "$1"} >&2
  "$size" -A target/thumbv7em-none-eabihf/release/tripword-footprint | awk '$1 == ".text" { print $2 }'
}
base=$(text "")
static_b=$(( $(text w32-static) - base ))
const_b=$(( $(text w32-const) - base ))
# What jitter adds for a firmware that uses it; information only.
jitter_b=$(( $(text w32-static,jitter) - base ))
rate_b=$(( $(text w32-rate) - base ))
# The core's `recovery` feature on (information only; the goal is judged
# on the default build above): with the options unused (one probe, no
# ramp) and used (3 probes, a 2-stage ramp), config in a static and a const.
rec_static_b=$(( $(text w32-static,recovery) - base ))
rec_static_used_b=$(( $(text w32-static,recovery-used) - base ))
rec_const_b=$(( $(text w32-const,recovery) - base ))
rec_const_used_b=$(( $(text w32-const,recovery-used) - base ))
echo "footprint: W32 acquire+release+status on thumbv7em, opt-level s: config in a static $static_b B, config a const $const_b B (goal $FOOTPRINT_GOAL B)"
footprint="W32 acquire+release+status on thumbv7em: ${static_b} B (static config), ${const_b} B (const config), ${jitter_b} B (static, jittered), ${rate_b} B (RateBreaker W32, inline); feature recovery on: ${rec_static_b}/${rec_static_used_b} B (static, options unused/used), ${rec_const_b}/${rec_const_used_b} B (const, unused/used)"
for b in "$static_b" "$const_b"; do
  if [ "$b" -gt "$FOOTPRINT_GOAL" ]; then
    echo "footprint over the goal: $b B > $FOOTPRINT_GOAL B"
    failed=1
  fi
done
cd "$root"
if [ "$failed" = 0 ]; then goal="1 KiB goal met"; else goal="see log"; fi

joined=$(printf '%s; ' "${results[@]}" "${rtos[@]}")
note "${qemu_note}; ${joined}${footprint} ($goal)"
exit $failed
