//! Test firmware for tripword on emulated Cortex-M and RISC-V cores (QEMU).
//! Output and the exit code go through semihosting: exit 0 only if every check
//! passed.
//!
//! `cargo run --release --target thumbv7m-none-eabi` (or `thumbv6m-none-eabi`,
//! `thumbv7em-none-eabihf`, `riscv32imac-unknown-none-elf`) from this
//! directory builds it and runs it on the QEMU machine named in
//! `.cargo/config.toml`. Both architectures run the same suites (lock
//! freedom, scenarios, a random run against a model, the issue-9 sparse and
//! periodic callers, interrupts); the interrupt suite (`interrupts.rs`)
//! shares a breaker with the SysTick exception on Cortex-M and with the
//! machine-timer interrupt on RISC-V (see `riscv.rs`).

#![no_std]
#![no_main]

/// `println!` through semihosting, on either architecture.
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => {{
        #[cfg(target_arch = "arm")]
        cortex_m_semihosting::hprintln!($($arg)*);
        #[cfg(target_arch = "riscv32")]
        riscv_semihosting::hprintln!($($arg)*);
    }};
}

mod check;
mod fixture;
#[cfg(target_arch = "arm")]
mod hw_clock;
mod interrupts;
mod lock_free;
mod model;
mod prng;
mod random_run;
mod recorder;
mod recovery;
mod recovery_random;
#[cfg(target_arch = "riscv32")]
mod riscv;
mod scenarios;
mod sparse;
mod table_log;

#[cfg(target_arch = "arm")]
use check::Checks;
#[cfg(target_arch = "arm")]
use cortex_m_rt::{ExceptionFrame, entry, exception};
#[cfg(target_arch = "arm")]
use cortex_m_semihosting::{debug, hprintln};
#[cfg(target_arch = "arm")]
use hw_clock::SysTickClock;

/// The hardware clock of this core (a `use`, not a type alias, so that the
/// unit struct's name is also its value).
#[cfg(target_arch = "arm")]
pub use hw_clock::SysTickClock as HwClock;
#[cfg(target_arch = "riscv32")]
pub use riscv::MtimeClock as HwClock;

#[cfg(target_arch = "arm")]
#[entry]
fn main() -> ! {
    let Some(mut peripherals) = cortex_m::Peripherals::take() else {
        fail("core peripherals already taken")
    };
    hprintln!(
        "tripword on-target: {} on QEMU {}",
        env!("TRIPWORD_TARGET"),
        env!("TRIPWORD_QEMU_MACHINE"),
    );
    let mut checks = Checks::new();
    lock_free::run(&mut checks);
    scenarios::run(&mut checks);
    recovery::run(&mut checks);
    recovery_random::run(&mut checks);
    random_run::run(&mut checks);
    sparse::run(&mut checks);
    SysTickClock::start(&mut peripherals.SYST);
    interrupts::run(&mut checks);
    table_log::run(&mut checks);

    finish(&mut checks);
    halt()
}

/// Prints the summary line and ends the QEMU run through semihosting, with
/// success only if every check passed. Shared by both architectures.
fn finish(checks: &mut check::Checks) {
    let (passed, failed) = checks.finish();
    out!(
        "{}: {} passed, {} failed",
        env!("TRIPWORD_TARGET"),
        passed,
        failed
    );
    #[cfg(target_arch = "arm")]
    use cortex_m_semihosting::debug;
    #[cfg(target_arch = "riscv32")]
    use riscv_semihosting::debug;
    debug::exit(if failed == 0 {
        debug::EXIT_SUCCESS
    } else {
        debug::EXIT_FAILURE
    });
}

#[cfg(target_arch = "arm")]
#[exception]
fn SysTick() {
    static mut RNG: prng::XorShift = prng::XorShift::new(0x1357_9BDF);
    SysTickClock::on_systick();
    interrupts::on_timer_interrupt(RNG);
}

#[cfg(target_arch = "arm")]
fn fail(why: &str) -> ! {
    hprintln!("FAIL: {}", why);
    debug::exit(debug::EXIT_FAILURE);
    halt()
}

#[cfg(target_arch = "arm")]
#[exception]
unsafe fn HardFault(frame: &ExceptionFrame) -> ! {
    hprintln!("FAIL: hard fault at pc {:#010x}", frame.pc());
    debug::exit(debug::EXIT_FAILURE);
    halt()
}

#[cfg(target_arch = "arm")]
#[exception]
unsafe fn DefaultHandler(irqn: i16) {
    hprintln!("FAIL: unexpected exception {}", irqn);
    debug::exit(debug::EXIT_FAILURE);
}

#[cfg(target_arch = "arm")]
/// After a semihosting exit (QEMU has already stopped); on a board without a
/// debugger attached, sleep.
fn halt() -> ! {
    loop {
        cortex_m::asm::wfi();
    }
}

#[cfg(target_arch = "arm")]
#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    hprintln!("FAIL: panic: {}", info);
    debug::exit(debug::EXIT_FAILURE);
    halt()
}
