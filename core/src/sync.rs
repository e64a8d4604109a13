//! Where atomics come from: loom's under `cfg(loom)` so the verification
//! crate can model-check the breaker, `portable-atomic`'s otherwise (native
//! instructions where the target has them; on targets without
//! compare-and-swap the final binary picks a backend).

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicU32, AtomicU64, Ordering};
#[cfg(not(loom))]
pub(crate) use portable_atomic::{AtomicU32, AtomicU64, Ordering};
