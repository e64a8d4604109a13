//! The checks: each prints `ok` or `FAIL` with what it checked and where,
//! and the run closes with `N passed, N failed` and exits through
//! semihosting, 0 only if every check passed.

use core::sync::atomic::{AtomicU32, Ordering};
use cortex_m_semihosting::{debug, hprintln};

static PASSED: AtomicU32 = AtomicU32::new(0);
static FAILED: AtomicU32 = AtomicU32::new(0);

/// Records one check and prints it.
#[track_caller]
pub fn check(ok: bool, what: &str) {
    if ok {
        PASSED.fetch_add(1, Ordering::Relaxed);
        hprintln!("  ok    {}", what);
    } else {
        FAILED.fetch_add(1, Ordering::Relaxed);
        let at = core::panic::Location::caller();
        hprintln!("  FAIL  {} ({}:{})", what, at.file(), at.line());
    }
}

/// Prints the closing line and ends the emulation with the exit code.
pub fn finish() -> ! {
    let (passed, failed) = (
        PASSED.load(Ordering::Relaxed),
        FAILED.load(Ordering::Relaxed),
    );
    hprintln!("{} passed, {} failed", passed, failed);
    exit(failed == 0 && passed > 0)
}

/// Ends the emulation: exit code 0 on success, 1 otherwise.
pub fn exit(success: bool) -> ! {
    debug::exit(if success {
        debug::EXIT_SUCCESS
    } else {
        debug::EXIT_FAILURE
    });
    // Semihosting exit does not return under QEMU; on a probe without a
    // host, stay here.
    loop {
        cortex_m::asm::bkpt();
    }
}
