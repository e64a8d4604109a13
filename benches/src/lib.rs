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
//! - [`lab`]: the contention sweep as a library: add a breaker of your own
//!   (implement [`subjects::Subject`]), pick schedulers and scenarios from
//!   the command line, get Markdown, CSV and SVG (`docs/lab.md`);
//! - [`mutex_breaker`]: the `Mutex` baseline, the same state machine behind a
//!   lock;
//! - [`subjects`]: every implementation measured (baselines, `tripword` in
//!   both word widths and through `tripword-std`'s `call`, `call_async` and
//!   tower layer, the peers `failsafe`, `recloser`, `seatbelt` and
//!   `tower-resilience-circuitbreaker`) behind one [`subjects::Subject`]
//!   trait, configured per [`subjects::Scenario`];
//! - [`pool`]: pre-spawned workers released by a `Barrier` (unpinned or
//!   pinned to cores), for criterion's `iter_custom` and the sweep, and the
//!   sweep's tokio and `smol` task runners;
//! - [`exec`]: a `block_on` that polls once on the current thread, so an
//!   async peer (and a tower layer) is measured without a scheduler in the
//!   way, and `now` for futures that are ready at once;
//! - [`report`]: the sweep's CSV (`csv`), Markdown tables and SVG plots
//!   (`plotters`);
//! - [`hot_loop`]: the closed call inlined into a caller's own loop, next to
//!   the same loop around a bare pair of atomic loads (criterion's
//!   `hot_loop` group, `per-call`'s `loop_*` rows);
//! - [`probe`]: non-generic, never-inlined entry points whose machine code
//!   `docs/performance/no-store.md` inspects.
//!
//! See `docs/performance.md` for the results and how to reproduce them.

pub mod exec;
pub mod hot_loop;
pub mod lab;
pub mod mutex_breaker;
pub mod pool;
pub mod probe;
pub mod report;
pub mod subjects;
