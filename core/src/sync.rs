//! Where atomics come from: loom's under `cfg(tripword_loom)` (the crate's own cfg, so a
//! downstream crate's `--cfg loom` changes nothing here) so the verification
//! crate can model-check the breaker, `portable-atomic`'s otherwise (native
//! instructions where the target has them; on targets without
//! compare-and-swap the final binary picks a backend).

#[cfg(tripword_loom)]
pub(crate) use loom::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
#[cfg(not(tripword_loom))]
pub(crate) use portable_atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
