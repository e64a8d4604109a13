//! `cargo +nightly fuzz run rate`: see `tripword_fuzz::rate` for what it checks.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tripword_fuzz::rate::RateCase;

fuzz_target!(|case: RateCase| case.run());
