//! `cargo +nightly fuzz run differential`: see `tripword_fuzz::differential` for what it checks.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tripword_fuzz::differential::DiffCase;

fuzz_target!(|case: DiffCase| case.run());
