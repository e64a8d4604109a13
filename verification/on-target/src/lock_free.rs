//! Which words are lock-free on this core, asserted where it matters.

use crate::check::Checks;
use core::mem::size_of;
use tripword::{
    Breaker, Breaker32, Config, ConstBreaker, ConstConfig, StaticBreaker, ValidConfig, W32, W64,
    Word,
};

/// A compile-time config, for the size of a `ConstBreaker`.
struct Fixed;
impl ConstConfig for Fixed {
    const CONFIG: Config = Config::new();
}

// Cortex-M3/M4 (`thumbv7m`, `thumbv7em`) have 32-bit LDREX/STREX, RISC-V
// with the A extension (`riscv32imac`) has LR/SC and AMOs: a 32-bit breaker
// must be lock-free there, or the build fails.
#[cfg(target_has_atomic = "32")]
const _: () = assert!(
    <W32 as Word>::IS_ALWAYS_LOCK_FREE,
    "W32 must be lock-free on this target"
);

// No 32-bit Arm or RISC-V core has a 64-bit compare-and-swap: a 64-bit word
// there goes through portable-atomic's fallback (a global lock, or a critical
// section).
#[cfg(not(target_has_atomic = "64"))]
const _: () = assert!(
    !<W64 as Word>::IS_ALWAYS_LOCK_FREE,
    "W64 cannot be lock-free without 64-bit CAS"
);

pub fn run(c: &mut Checks) {
    c.suite("lock-freedom");
    let w32 = <W32 as Word>::IS_ALWAYS_LOCK_FREE;
    let w64 = <W64 as Word>::IS_ALWAYS_LOCK_FREE;
    crate::out!(
        "  W32 lock-free: {}, W64 lock-free: {} ({})",
        w32,
        w64,
        if cfg!(cs_atomics) {
            "no CAS on this core: both words use the critical-section backend the firmware chose"
        } else {
            "W64 falls back to portable-atomic's global lock"
        }
    );
    c.eq(
        w32,
        cfg!(target_has_atomic = "32"),
        "W32 lock-free exactly where 32-bit CAS is native",
    );
    c.eq(w64, false, "W64 is never lock-free on a 32-bit MCU");
    // RAM per breaker with a zero-sized clock and no observer.
    type Clock = crate::HwClock;
    crate::out!(
        "  RAM per breaker: config inline: W32 {} B, W64 {} B (ValidConfig is {} B); config in a static: W32 {} B, W64 {} B; config a const: W32 {} B, W64 {} B",
        size_of::<Breaker32<Clock>>(),
        size_of::<Breaker<Clock>>(),
        size_of::<ValidConfig<W32>>(),
        size_of::<StaticBreaker<Clock, W32>>(),
        size_of::<StaticBreaker<Clock, W64>>(),
        size_of::<ConstBreaker<Fixed, Clock, W32>>(),
        size_of::<ConstBreaker<Fixed, Clock, W64>>(),
    );
    c.eq(
        size_of::<ConstBreaker<Fixed, Clock, W32>>(),
        4,
        "a W32 breaker with a const config is its word",
    );
    c.eq(
        size_of::<StaticBreaker<Clock, W32>>(),
        8,
        "a W32 breaker with its config in a static is its word and a pointer",
    );
}
