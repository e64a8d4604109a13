//! The checks behind tripword's cargo-fuzz targets, as a library so the
//! targets stay one line each and a crashing input can be replayed as a plain
//! test.
//!
//! - [`differential`]: operation lists run on real breakers of both word
//!   widths and on the reference model (`tripword_verification::model`), which
//!   must agree after every operation.
//! - [`word`]: any bit pattern through the pure layer (SPEC I8, I10, I9's quiet
//!   path, and the transition table from any valid state).
//! - [`config`]: any config values through validation; every accepted one runs
//!   an operation list at the edges of its ranges.
//! - [`rate`]: the failure-rate policy against its reference model.
//! - [`input`]: the `Arbitrary` building blocks the three share.
//! - [`seed`]: encodes inputs back into the bytes `arbitrary` decodes them
//!   from, for the seed corpus (`gen_seeds.rs`).

#![forbid(unsafe_code)]

pub mod config;
pub mod differential;
pub mod input;
pub mod rate;
pub mod seed;
pub mod word;
