//! `cargo +nightly fuzz run word`: see `tripword_fuzz::word` for what it checks.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tripword_fuzz::word::WordCase;

fuzz_target!(|case: WordCase| case.run());
