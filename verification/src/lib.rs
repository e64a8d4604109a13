//! Proofs by test for `tripword` (not published).
//!
//! - [`model`]: the reference model of SPEC.md and `docs/design.md`, the oracle
//!   of the proptest model checking, the exhaustive exploration, the
//!   linearizability checker and the fuzz targets.
//! - [`rate_model`]: the failure-rate policy's model, and the run that
//!   compares it with a `RateBreaker` (proptest and fuzz).
//! - [`every_word`]: every `W32` word, every event, at every reading where
//!   the decision can change, core against model; `W64` by its fields.
//! - [`harness`]: plumbing those share (a clock that counts its reads, a
//!   recording observer, comparisons between the core and the model).
//! - `tests/`: the techniques themselves; `docs/verification.md` maps each
//!   SPEC invariant (I1–I10) to the tests that check it.

pub mod every_word;
pub mod harness;
pub mod model;
pub mod rate_model;
