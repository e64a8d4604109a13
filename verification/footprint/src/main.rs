//! A firmware that does nothing but call a static breaker, so its size can be
//! measured: `acquire`, `release` and `status` as separate non-generic,
//! never-inlined functions per word width, on a zero-sized tick-counter clock
//! and no observer. Built without features it is the baseline (vector table,
//! reset handler, an idle loop); the difference is what the breaker costs.
//!
//! Not run anywhere: `cargo size` / `cargo nm` read it (see
//! `docs/embedded.md`, "Footprint").

#![no_std]
#![no_main]

// The critical-section implementation (cortex-m, single core) must be linked.
use core::hint::black_box;
use core::sync::atomic::{AtomicU32, Ordering};
use cortex_m as _;
use cortex_m_rt::{entry, exception};

/// Milliseconds, counted by the SysTick exception: the usual firmware tick.
static TICKS: AtomicU32 = AtomicU32::new(0);

/// The clock: zero-sized, reads the tick counter.
pub struct Ticks;

impl tripword::Clock for Ticks {
    #[inline]
    fn now(&self) -> u64 {
        u64::from(TICKS.load(Ordering::Relaxed))
    }
}

#[exception]
fn SysTick() {
    // Single writer: a load and a store (Cortex-M0 has no atomic add).
    TICKS.store(
        TICKS.load(Ordering::Relaxed).wrapping_add(1),
        Ordering::Relaxed,
    );
}

/// The config every measured breaker uses (unused in the baseline build).
#[allow(dead_code)]
#[cfg(not(feature = "jitter"))]
const PLAIN: tripword::Config = tripword::Config::new()
    .failure_threshold(5)
    .open_for(1_000)
    .probe_timeout(500);
/// The same config with equal jitter (feature `jitter`).
#[allow(dead_code)]
#[cfg(feature = "jitter")]
const PLAIN: tripword::Config = tripword::Config::new()
    .failure_threshold(5)
    .open_for(1_000)
    .probe_timeout(500)
    .jitter(tripword::Jitter::Equal { seed: 0x5eed });
/// The measured config: [`PLAIN`], or with feature `recovery-used` three
/// probes (two to close) and a ramp of two 20 s stages (25 %, 50 %).
#[allow(dead_code)]
#[cfg(not(feature = "recovery-used"))]
const CONFIG: tripword::Config = PLAIN;
#[allow(dead_code)]
#[cfg(feature = "recovery-used")]
const CONFIG: tripword::Config = PLAIN
    .probes(3)
    .probes_to_close(2)
    .ramp(tripword::Ramp::stages(20_000, &[2_500, 5_000]));

/// A `static` breaker and its three measured calls, in a module of its own:
/// `measured!(module, BREAKER: Type = init; acquire, release, status)`.
#[allow(unused_macros)]
macro_rules! measured {
    ($module:ident, $breaker:ident: $ty:ty = $init:expr; $acquire:ident, $release:ident, $status:ident) => {
        mod $module {
            #[allow(unused_imports)]
            use super::{CONFIG, Ticks};
            #[allow(unused_imports)]
            use tripword::{
                Breaker, Breaker32, Config, Const, ConstBreaker, StaticBreaker, ValidConfig, W32,
                W64,
            };
            use tripword::{Outcome, Rejected, Release, Status, Ticket};

            #[unsafe(no_mangle)]
            pub static $breaker: $ty = $init;

            #[inline(never)]
            #[unsafe(no_mangle)]
            pub fn $acquire() -> Result<Ticket, Rejected> {
                $breaker.acquire()
            }

            #[inline(never)]
            #[unsafe(no_mangle)]
            pub fn $release(ticket: Ticket, outcome: Outcome) -> Release {
                $breaker.release(ticket, outcome)
            }

            #[inline(never)]
            #[unsafe(no_mangle)]
            pub fn $status() -> Status {
                $breaker.status()
            }
        }
    };
}

/// The validated configs of the `*-static` breakers: `static`s, so in flash.
#[cfg(feature = "w32-static")]
static STATIC_CONFIG_W32: tripword::ValidConfig<tripword::W32> = tripword::ValidConfig::new(CONFIG);
#[cfg(feature = "w64-static")]
static STATIC_CONFIG_W64: tripword::ValidConfig<tripword::W64> = tripword::ValidConfig::new(CONFIG);

// Config inline (the default `P = ValidConfig<W>`): the whole breaker is in
// RAM.
#[cfg(feature = "w32")]
measured!(w32, BREAKER_W32: Breaker32<Ticks> =
    Breaker32::from_parts(ValidConfig::new(CONFIG), Ticks, ());
    w32_acquire, w32_release, w32_status);
#[cfg(feature = "w64")]
measured!(w64, BREAKER_W64: Breaker<Ticks> = Breaker::new(CONFIG, Ticks);
    w64_acquire, w64_release, w64_status);
// Config in a `static` (`StaticBreaker`): RAM holds the word and a pointer.
#[cfg(feature = "w32-static")]
measured!(w32s, BREAKER_W32S: StaticBreaker<Ticks, W32> =
    StaticBreaker::from_parts(&super::STATIC_CONFIG_W32, Ticks, ());
    w32s_acquire, w32s_release, w32s_status);
#[cfg(feature = "w64-static")]
measured!(w64s, BREAKER_W64S: StaticBreaker<Ticks, W64> =
    StaticBreaker::from_parts(&super::STATIC_CONFIG_W64, Ticks, ());
    w64s_acquire, w64s_release, w64s_status);
// Config a compile-time constant (`ConstBreaker`): RAM holds the word alone.
#[cfg(any(feature = "w32-const", feature = "w64-const"))]
struct Fixed;
#[cfg(any(feature = "w32-const", feature = "w64-const"))]
impl tripword::ConstConfig for Fixed {
    const CONFIG: tripword::Config = CONFIG;
}
#[cfg(feature = "w32-const")]
measured!(w32k, BREAKER_W32K: ConstBreaker<super::Fixed, Ticks, W32> =
    ConstBreaker::from_parts(Const::new(), Ticks, ());
    w32k_acquire, w32k_release, w32k_status);
#[cfg(feature = "w64-const")]
measured!(w64k, BREAKER_W64K: ConstBreaker<super::Fixed, Ticks, W64> =
    ConstBreaker::from_parts(Const::new(), Ticks, ());
    w64k_acquire, w64k_release, w64k_status);

// The failure-rate policy: 8 buckets beside the word, config inline.
#[cfg(feature = "w32-rate")]
measured!(w32r, BREAKER_W32R: tripword::rate::RateBreaker<Ticks, W32, (), 8> =
    tripword::rate::RateBreaker::from_parts(
        ValidConfig::new(CONFIG),
        tripword::rate::ValidRate::new(
            tripword::rate::Rate::new().failure_rate(50).minimum_calls(20).window(8_000),
        ),
        Ticks,
        (),
    );
    w32r_acquire, w32r_release, w32r_status);

/// One call through `tripword::future::guard` on the W32 static breaker: a
/// future that is ready with an opaque result, polled once with a waker
/// that does nothing (what an executor does, less the executor).
#[cfg(feature = "w32-static-future")]
mod w32s_future {
    use core::future::Future;
    use core::hint::black_box;
    use core::pin::pin;
    use core::task::{Context, Poll, Waker};

    /// A read that completes at once, with a result the optimiser cannot see.
    struct Read;
    impl Future for Read {
        type Output = Result<u8, ()>;
        fn poll(self: core::pin::Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Result<u8, ()>> {
            Poll::Ready(black_box(Ok(7)))
        }
    }

    #[inline(never)]
    #[unsafe(no_mangle)]
    pub fn w32s_guarded() -> Poll<Result<Result<u8, ()>, tripword::Rejected>> {
        let call = pin!(tripword::future::guard(&super::w32s::BREAKER_W32S, Read));
        call.poll(&mut Context::from_waker(Waker::noop()))
    }

    pub fn run() {
        let _ = black_box(w32s_guarded());
    }
}

/// acquire, release if admitted, status.
#[allow(unused_macros)]
macro_rules! call {
    ($module:ident, $acquire:ident, $release:ident, $status:ident, $outcome:expr) => {{
        if let Ok(t) = $module::$acquire() {
            black_box($module::$release(t, $outcome));
        }
        black_box($module::$status());
    }};
}

#[entry]
fn main() -> ! {
    loop {
        // The outcome is opaque to the optimiser, so every path is kept.
        let outcome = black_box(tripword::Outcome::Failure);
        #[cfg(feature = "w32")]
        call!(w32, w32_acquire, w32_release, w32_status, outcome);
        #[cfg(feature = "w64")]
        call!(w64, w64_acquire, w64_release, w64_status, outcome);
        #[cfg(feature = "w32-static")]
        call!(w32s, w32s_acquire, w32s_release, w32s_status, outcome);
        #[cfg(feature = "w32-static-future")]
        w32s_future::run();
        #[cfg(feature = "w64-static")]
        call!(w64s, w64s_acquire, w64s_release, w64s_status, outcome);
        #[cfg(feature = "w32-const")]
        call!(w32k, w32k_acquire, w32k_release, w32k_status, outcome);
        #[cfg(feature = "w64-const")]
        call!(w64k, w64k_acquire, w64k_release, w64k_status, outcome);
        #[cfg(feature = "w32-rate")]
        call!(w32r, w32r_acquire, w32r_release, w32r_status, outcome);
        black_box(outcome);
    }
}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    loop {
        cortex_m::asm::wfi();
    }
}
