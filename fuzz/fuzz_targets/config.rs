//! `cargo +nightly fuzz run config`: see `tripword_fuzz::config` for what it checks.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tripword_fuzz::config::ConfigCase;

fuzz_target!(|case: ConfigCase| case.run());
