//! Benchmarks and contention sweeps for `tripword`, side by side with the
//! baselines that make a number meaningful on a noisy machine and with the
//! circuit breakers people use today.
//!
//! This crate is not published. It holds what the criterion benches
//! (`benches/fast_path.rs`, `benches/contended.rs`, `benches/services.rs`:
//! `tripword-std`'s `call`, `call_async` and tower layer), the binaries (the
//! contention sweep `contention`, `criterion-table`, `per-call`,
//! `no-store-probe`) and the no-store check (`tests/no_store.rs`) share:
//!
//! - [`mutex_breaker`]: the `Mutex` baseline, the same state machine behind a
//!   lock;
//! - [`subjects`]: every implementation measured (baselines, `tripword` in
//!   both word widths and through `tripword-std`'s `call`, `call_async` and
//!   tower layer, the peers `failsafe`, `recloser` and
//!   `tower-resilience-circuitbreaker`) behind one [`subjects::Subject`]
//!   trait, configured per [`subjects::Scenario`];
//! - [`pool`]: pre-spawned workers released by a `Barrier`, for criterion's
//!   `iter_custom`;
//! - [`exec`]: a `block_on` that polls once on the current thread, so an
//!   async peer (and a tower layer) is measured without a scheduler in the
//!   way, and `now` for futures that are ready at once;
//! - [`report`]: CSV, tables and the hand-written SVG plot of the sweep;
//! - [`probe`]: non-generic, never-inlined entry points whose machine code
//!   `docs/performance.md` inspects.
//!
//! See `docs/performance.md` for the results and how to reproduce them.

pub mod exec;
pub mod mutex_breaker;
pub mod pool;
pub mod probe;
pub mod report;
pub mod subjects;
