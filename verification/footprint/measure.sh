#!/usr/bin/env bash
# Prints the footprint table of docs/embedded.md: for each target, profile and
# word width, the flash (.text, .rodata) and RAM (.data + .bss) this firmware
# takes beyond the baseline build (no breaker), and the size of the breaker
# `static` itself. Needs cargo-binutils (`cargo install --locked
# cargo-binutils`, `rustup component add llvm-tools`).
# Usage: bash measure.sh [--symbols]   (run from verification/footprint)
set -euo pipefail
cd "$(dirname "$0")"

sections() { # target profile features -> "text rodata data bss"
  cargo size -q --profile "$2" --target "$1" ${3:+--features "$3"} -- -A 2>/dev/null |
    awk '$1==".text"{t=$2} $1==".rodata"{r=$2} $1==".data"{d=$2} $1==".bss"{b=$2} END{print t+0, r+0, d+0, b+0}'
}
symbol_size() { # target profile features symbol
  cargo nm -q --profile "$2" --target "$1" --features "$3" -- --print-size --radix=d 2>/dev/null |
    awk -v s="$4" '$4==s{print $2+0}'
}

echo "| target | profile (opt-level) | breaker | code (.text) | .rodata | RAM (.data + .bss) | breaker static |"
echo "|---|---|---|---:|---:|---:|---:|"
for target in thumbv6m-none-eabi thumbv7em-none-eabihf; do
  for profile in release release-z release-o3; do
    case $profile in release) opt=s ;; release-z) opt=z ;; release-o3) opt=3 ;; esac
    read -r t0 r0 d0 b0 <<<"$(sections "$target" "$profile" "")"
    for word in w32 w32-static w32-const w64 w64-static w64-const; do
      read -r t r d b <<<"$(sections "$target" "$profile" "$word")"
      case $word in
        w32) sym=BREAKER_W32 label="W32, config inline" ;;
        w32-static) sym=BREAKER_W32S label="W32, config in a static" ;;
        w64) sym=BREAKER_W64 label="W64, config inline" ;;
        w64-static) sym=BREAKER_W64S label="W64, config in a static" ;;
        w32-const) sym=BREAKER_W32K label="W32, config a const (ConstBreaker)" ;;
        w64-const) sym=BREAKER_W64K label="W64, config a const (ConstBreaker)" ;;
      esac
      static=$(symbol_size "$target" "$profile" "$word" "$sym")
      echo "| $target | $profile ($opt) | $label | $((t - t0)) B | $((r - r0)) B | $((d + b - d0 - b0)) B | ${static} B |"
    done
  done
done

echo
echo "| target | what one async call adds (\`tripword::future::guard\` polled to completion, beside the W32 static breaker) | code (.text) | .rodata |"
echo "|---|---|---:|---:|"
for target in thumbv6m-none-eabi thumbv7em-none-eabihf; do
  read -r t0 r0 _ _ <<<"$(sections "$target" release w32-static)"
  read -r t r _ _ <<<"$(sections "$target" release w32-static-future)"
  echo "| $target | release (s) | $((t - t0)) B | $((r - r0)) B |"
done

echo
echo "| target | profile (opt-level) | breaker, core feature \`recovery\` on | code (.text) | .rodata | RAM (.data + .bss) |"
echo "|---|---|---|---:|---:|---:|"
for target in thumbv6m-none-eabi thumbv7em-none-eabihf; do
  read -r t0 r0 d0 b0 <<<"$(sections "$target" release "")"
  for word in w32-static w32-const; do
    for use in recovery recovery-used; do
      read -r t r d b <<<"$(sections "$target" release "$word,$use")"
      case $word in w32-static) form="config in a static" ;; w32-const) form="config a const (ConstBreaker)" ;; esac
      case $use in recovery) opts="options unused" ;; recovery-used) opts="3 probes (2 to close), a 2-stage ramp" ;; esac
      echo "| $target | release (s) | W32, $form, $opts | $((t - t0)) B | $((r - r0)) B | $((d + b - d0 - b0)) B |"
    done
  done
done

if [ "${1:-}" = "--symbols" ]; then
  for target in thumbv6m-none-eabi thumbv7em-none-eabihf; do
    for word in w32-static w32-const w64-static; do
      echo
      echo "largest symbols, $target, release (s), $word:"
      cargo nm -q --release --target "$target" --features "$word" -- --print-size --size-sort --radix=d -C 2>/dev/null |
        tail -n 12
    done
  done
fi
