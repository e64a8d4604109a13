//! A tiny check harness: counts checks per suite, prints each failure with
//! where it was made, and a closing `N passed, N failed` line.

use core::fmt::Debug;

/// Failures printed in full; past this only counted.
const PRINTED_FAILURES: u32 = 20;

pub struct Checks {
    suite: &'static str,
    suite_passed: u32,
    suite_failed: u32,
    passed: u32,
    failed: u32,
}

impl Checks {
    pub const fn new() -> Self {
        Checks {
            suite: "",
            suite_passed: 0,
            suite_failed: 0,
            passed: 0,
            failed: 0,
        }
    }

    /// Starts a suite; closes the previous one with its own counts.
    pub fn suite(&mut self, name: &'static str) {
        self.end_suite();
        self.suite = name;
    }

    fn end_suite(&mut self) {
        if !self.suite.is_empty() {
            crate::out!(
                "  {:<28} {:>6} passed, {} failed",
                self.suite,
                self.suite_passed,
                self.suite_failed
            );
        }
        self.suite = "";
        self.suite_passed = 0;
        self.suite_failed = 0;
    }

    /// Records one check; prints it when it fails.
    #[track_caller]
    pub fn check(&mut self, ok: bool, what: &str) -> bool {
        if ok {
            self.passed += 1;
            self.suite_passed += 1;
        } else {
            self.failed += 1;
            self.suite_failed += 1;
            if self.failed <= PRINTED_FAILURES {
                let at = core::panic::Location::caller();
                crate::out!(
                    "FAIL [{}] {} ({}:{})",
                    self.suite,
                    what,
                    at.file(),
                    at.line()
                );
            }
        }
        ok
    }

    /// Records `got == want`; prints both when they differ.
    #[track_caller]
    pub fn eq<T: PartialEq + Debug>(&mut self, got: T, want: T, what: &str) -> bool {
        let ok = got == want;
        if !ok && self.failed < PRINTED_FAILURES {
            crate::out!("  got  {:?}\n  want {:?}", got, want);
        }
        self.check(ok, what)
    }

    pub fn failed(&self) -> u32 {
        self.failed
    }

    /// Closes the last suite and prints the totals.
    pub fn finish(&mut self) -> (u32, u32) {
        self.end_suite();
        (self.passed, self.failed)
    }
}
