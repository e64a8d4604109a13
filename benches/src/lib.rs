//! Benchmarks and contention sweeps for `tripword`, side by side with the
//! baselines that make a number meaningful on a noisy machine and with the
//! circuit breakers people use today.
//!
//! This crate is not published. The criterion benches
//! (`benches/fast_path.rs`, `benches/contended.rs`, `benches/services.rs`),
//! the binaries (`contention`: the lab with tripword's goals,
//! `criterion-table`, `per-call`, `no-store-probe`) and the no-store check
//! (`tests/no_store.rs`) share what is here and the contention lab, the
//! `tripword-lab` crate (`lab/`, `docs/lab.md`), whose modules are
//! re-exported under their old names:
//!
//! - [`subjects`], [`pool`], [`exec`], [`mutex_breaker`]: from
//!   `tripword-lab` (every implementation measured, the pre-spawned
//!   workers, the `block_on` of async peers, the `Mutex` baseline);
//! - [`hot_loop`]: the closed call inlined into a caller's own loop, next to
//!   the same loop around a bare pair of atomic loads (criterion's
//!   `hot_loop` group, `per-call`'s `loop_*` rows);
//! - [`probe`]: non-generic, never-inlined entry points whose machine code
//!   `docs/performance/no-store.md` inspects.
//!
//! See `docs/performance.md` for the results and how to reproduce them.

pub mod hot_loop;
pub mod probe;
pub use tripword_lab::{exec, mutex_breaker, pool, subjects};
