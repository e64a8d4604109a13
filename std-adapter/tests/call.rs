//! Running closures through a breaker: how each kind of result counts.
//! Deterministic: these use `ManualClock`.

use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Mutex;

use std::time::Duration;
use tripword::clock::ManualClock;
use tripword::{
    Breaker, Cause, Config, ConstBreaker, ConstConfig, Observer, Outcome, StaticBreaker, Status,
    Transition, ValidConfig, W32, W64,
};
use tripword_std::clock::ManualTime;
use tripword_std::{BreakerExt, CallError, CallPolicy, Settings, classify};

/// Records every transition.
#[derive(Default)]
struct Log(Mutex<Vec<Transition>>);

impl Observer for Log {
    fn on_transition(&self, t: Transition) {
        self.0.lock().unwrap().push(t);
    }
}

impl Log {
    fn phases(&self) -> Vec<(Status, Status)> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .map(|t| (t.from, t.to))
            .collect()
    }
}

fn config(threshold: u32) -> Config {
    Config::new()
        .failure_threshold(threshold)
        .open_for(100)
        .probe_timeout(50)
}

fn valid(config: Config) -> ValidConfig<W64> {
    config.check().expect("in range")
}

#[test]
fn ok_is_a_success_and_resets_the_failure_run() {
    let clock = ManualClock::new(0);
    let b = Breaker::new(config(2), &clock);
    assert_eq!(b.call(|| Ok::<_, ()>("data")), Ok("data"));
    assert_eq!(
        b.call(|| Err::<(), _>("down")),
        Err(CallError::Inner("down"))
    );
    assert_eq!(b.call(|| Ok::<_, &str>(1)), Ok(1)); // resets the run
    assert_eq!(
        b.call(|| Err::<(), _>("down")),
        Err(CallError::Inner("down"))
    );
    assert_eq!(b.status(), Status::Closed, "consecutive, not total");
    let _ = b.call(|| Err::<(), _>("down"));
    assert_eq!(b.status(), Status::Open);
}

#[test]
fn err_is_a_failure_and_trips_exactly_at_the_threshold() {
    let clock = ManualClock::new(0);
    let b = Breaker::from_parts(valid(config(3)), &clock, Log::default());
    for i in 1..=3 {
        assert_eq!(b.status(), Status::Closed, "before failure {i}");
        assert_eq!(b.call(|| Err::<(), _>(i)), Err(CallError::Inner(i)));
    }
    assert_eq!(b.status(), Status::Open);
    assert_eq!(b.observer().phases(), [(Status::Closed, Status::Open)]);
}

#[test]
fn open_rejects_without_calling_the_function() {
    let clock = ManualClock::new(0);
    let b = Breaker::new(config(1), &clock);
    let calls = Cell::new(0);
    let service = || {
        calls.set(calls.get() + 1);
        Err::<(), _>("down")
    };
    let _ = b.call(service);
    assert_eq!(calls.get(), 1);
    for _ in 0..5 {
        let r = b.call(service);
        assert!(matches!(r, Err(CallError::Open(_))), "{r:?}");
        assert!(r.unwrap_err().is_open());
    }
    clock.advance(99);
    assert!(b.call(service).unwrap_err().is_open());
    assert_eq!(calls.get(), 1, "not called while open");
}

#[test]
fn panic_is_a_failure_and_keeps_unwinding() {
    let clock = ManualClock::new(0);
    // Even with abandoned permits ignored, a panic is a failure.
    let b = Breaker::from_parts(
        valid(config(1).abandon_as(Outcome::Ignored)),
        &clock,
        Log::default(),
    );
    let unwound = catch_unwind(AssertUnwindSafe(|| {
        b.call(|| -> Result<(), ()> { panic!("boom") })
    }));
    let payload = unwound.expect_err("the panic propagates");
    assert_eq!(payload.downcast_ref::<&str>(), Some(&"boom"));
    assert_eq!(b.status(), Status::Open, "the panic counted as a failure");
    assert_eq!(b.observer().phases(), [(Status::Closed, Status::Open)]);
}

#[test]
fn panicking_probe_reopens() {
    let clock = ManualClock::new(0);
    let b = Breaker::new(config(1), &clock);
    let _ = b.call(|| Err::<(), _>(()));
    clock.advance(100);
    let unwound = catch_unwind(AssertUnwindSafe(|| {
        b.call(|| -> Result<(), ()> { panic!("probe crashed") })
    }));
    assert!(unwound.is_err());
    assert_eq!(
        b.status(),
        Status::Open,
        "a crashed probe is a failed probe"
    );
}

#[test]
fn panicking_classifier_is_a_failure_too() {
    let clock = ManualClock::new(0);
    let b = Breaker::new(config(1), &clock);
    let unwound = catch_unwind(AssertUnwindSafe(|| {
        // The classifier's return type says what it returns when it does.
        let bad = CallPolicy::new()
            .classify(|_: &Result<(), ()>| -> Outcome { panic!("bad classifier") });
        b.call_with(&bad, || Ok(()))
    }));
    assert!(unwound.is_err());
    assert_eq!(b.status(), Status::Open);
}

#[test]
fn ignored_result_changes_nothing() {
    let clock = ManualClock::new(0);
    let b = Breaker::from_parts(valid(config(2)), &clock, Log::default());
    let not_found = CallPolicy::new().classify(classify::by_error(|code: &u16| {
        if *code == 404 {
            Outcome::Ignored
        } else {
            Outcome::Failure
        }
    }));

    // In Closed with one failure counted: the word does not move.
    let _ = b.call(|| Err::<(), _>(503));
    let word = tripword::__verification::load_word(&b);
    for _ in 0..10 {
        assert_eq!(
            b.call_with(&not_found, || Err::<(), _>(404)),
            Err(CallError::Inner(404))
        );
    }
    assert_eq!(
        tripword::__verification::load_word(&b),
        word,
        "an ignored outcome stores nothing"
    );
    assert_eq!(b.status(), Status::Closed);

    // A probe that ends Ignored: back to half-open, the next caller probes.
    let _ = b.call(|| Err::<(), _>(503));
    assert_eq!(b.status(), Status::Open);
    clock.advance(100);
    let _ = b.call_with(&not_found, || Err::<(), _>(404));
    assert_eq!(b.status(), Status::HalfOpen);
    assert_eq!(b.call_with(&not_found, || Ok::<(), u16>(())), Ok(()));
    assert_eq!(b.status(), Status::Closed);
}

#[test]
fn classifier_can_fail_an_ok_value() {
    let clock = ManualClock::new(0);
    let b = Breaker::new(config(1), &clock);
    // An HTTP client that returns Ok for every response, 5xx included.
    let by_status = CallPolicy::new().classify(|r: &Result<u16, ()>| match r {
        Ok(s) if *s >= 500 => Outcome::Failure,
        Ok(_) => Outcome::Success,
        Err(()) => Outcome::Failure,
    });
    assert_eq!(b.call_with(by_status, || Ok(503)), Ok(503));
    assert_eq!(b.status(), Status::Open);
}

#[test]
fn late_failure_after_the_breaker_opened_is_stale() {
    let clock = ManualClock::new(0);
    let b = Breaker::from_parts(valid(config(2)), &clock, Log::default());
    // A slow call admitted in Closed, during which other calls trip the
    // breaker; its failure then changes nothing.
    let slow = b.call(|| {
        let _ = b.call(|| Err::<(), _>("fast fail"));
        let _ = b.call(|| Err::<(), _>("fast fail"));
        assert_eq!(b.status(), Status::Open);
        Err::<(), _>("slow fail")
    });
    assert_eq!(slow, Err(CallError::Inner("slow fail")));
    assert_eq!(b.observer().phases(), [(Status::Closed, Status::Open)]);
    // The open time was not extended by the late failure.
    clock.advance(100);
    assert_eq!(b.status(), Status::HalfOpen);
}

#[test]
fn works_on_the_32_bit_word_too() {
    let clock = ManualClock::new(0);
    // `horizon(0)`: whole ticks on the narrow word, so 100 ticks are exact.
    let valid = config(2).horizon(0).check::<W32>().unwrap();
    let b: Breaker<&ManualClock, W32> = Breaker::from_parts(valid, &clock, ());
    assert_eq!(b.call(|| Ok::<_, ()>(1)), Ok(1));
    let _ = b.call(|| Err::<(), _>(()));
    let _ = b.call(|| Err::<(), _>(()));
    assert!(b.call(|| Ok::<_, ()>(1)).unwrap_err().is_open());
    clock.advance(100);
    assert_eq!(b.call(|| Ok::<_, ()>(2)), Ok(2)); // the probe
    assert_eq!(b.status(), Status::Closed);
}

static CLOCK_S: ManualClock = ManualClock::new(0);
static CONFIG_S: ValidConfig<W32> = ValidConfig::new(
    Config::new()
        .failure_threshold(1)
        .open_for(100)
        .probe_timeout(50)
        .horizon(0),
);
static STATIC: StaticBreaker<&ManualClock, W32> =
    StaticBreaker::from_parts(&CONFIG_S, &CLOCK_S, ());

/// `call` and `call_with` on a breaker whose config is a `static`.
#[test]
fn call_works_on_a_static_breaker() {
    assert_eq!(STATIC.call(|| Ok::<_, ()>(1)), Ok(1));
    let ignore_all = CallPolicy::new().classify(|_: &Result<(), u16>| Outcome::Ignored);
    assert_eq!(
        STATIC.call_with(ignore_all, || Err(404)),
        Err(CallError::Inner(404))
    );
    assert_eq!(STATIC.status(), Status::Closed);
    assert_eq!(
        STATIC.call(|| Err::<(), _>("down")),
        Err(CallError::Inner("down"))
    );
    let r = STATIC.call(|| Ok::<_, ()>(2)).unwrap_err();
    assert_eq!(r.rejected().map(|r| r.cause()), Some(Cause::Open));
    CLOCK_S.advance(100);
    assert_eq!(STATIC.call(|| Ok::<_, ()>(3)), Ok(3));
    assert_eq!(STATIC.status(), Status::Closed);
}

struct Uplink;
impl ConstConfig for Uplink {
    const CONFIG: Config = Config::new()
        .failure_threshold(2)
        .open_for(100)
        .probe_timeout(50);
}

/// `call` and `call_with` on a breaker whose config is compiled in.
#[test]
fn call_works_on_a_const_breaker() {
    let clock = ManualClock::new(0);
    let b: ConstBreaker<Uplink, &ManualClock> =
        ConstBreaker::from_parts(Default::default(), &clock, ());
    assert_eq!(b.config().failure_threshold(), 2);
    assert_eq!(b.call(|| Ok::<_, ()>(1)), Ok(1));
    let fail_all = CallPolicy::new().classify(|_: &Result<u8, ()>| Outcome::Failure);
    assert_eq!(b.call_with(fail_all, || Ok(7)), Ok(7));
    assert_eq!(b.call(|| Err::<(), _>(())), Err(CallError::Inner(())));
    assert_eq!(b.status(), Status::Open);
    clock.advance(40);
    let err = b.call(|| Ok::<_, ()>(2)).unwrap_err();
    assert_eq!(err.rejected().and_then(|r| r.retry_after_ticks()), Some(60));
    clock.advance(60);
    assert_eq!(b.call(|| Ok::<_, ()>(3)), Ok(3));
    assert_eq!(b.status(), Status::Closed);
}

/// A rejection's cause and wait come through `CallError::Open`.
#[test]
fn rejections_carry_the_cause_and_the_wait() {
    let clock = ManualClock::new(0);
    let b = Breaker::new(config(1), &clock);
    let _ = b.call(|| Err::<(), _>(()));
    clock.advance(25);
    let open = b.call(|| Ok::<_, ()>(())).unwrap_err();
    let r = *open.rejected().unwrap();
    assert_eq!((r.cause(), r.retry_after_ticks()), (Cause::Open, Some(75)));
    // The probe is running: a second caller learns when it times out.
    clock.advance(75);
    let _ = b.call(|| {
        clock.advance(10);
        let probing = b.call(|| Ok::<_, ()>(())).unwrap_err();
        let r = probing.rejected().unwrap();
        assert_eq!(
            (r.cause(), r.retry_after_ticks()),
            (Cause::Probing, Some(40))
        );
        Ok::<_, ()>(())
    });
    assert_eq!(b.status(), Status::Closed);
    b.force_open();
    let forced = b.call(|| Ok::<_, ()>(())).unwrap_err();
    assert_eq!(
        forced.rejected().map(|r| r.cause()),
        Some(Cause::ForcedOpen)
    );
    assert_eq!(forced.rejected().unwrap().retry_after(), None);
    assert_eq!(
        forced.map_inner(|()| "unit").to_string(),
        "circuit forced open: call not admitted"
    );
}

#[derive(Debug)]
struct Outer(std::io::Error);

impl std::fmt::Display for Outer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("request failed")
    }
}

impl std::error::Error for Outer {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.0)
    }
}

#[test]
fn call_error_display_source_and_accessors() {
    use std::error::Error;

    let clock = ManualClock::new(0);
    let b = Breaker::new(config(1), &clock);
    let inner = b
        .call(|| -> Result<(), Outer> { Err(Outer(std::io::Error::other("reset"))) })
        .unwrap_err();
    assert_eq!(inner.to_string(), "request failed");
    // One error for every call form, tower's `BoxError` included: the
    // function's error is read with `inner()`, its chain from there.
    assert!(inner.source().is_none());
    assert_eq!(
        inner.inner().and_then(|e| e.source()).unwrap().to_string(),
        "reset"
    );
    assert!(!inner.is_open());
    assert_eq!(
        inner.inner().map(|e| e.to_string()).as_deref(),
        Some("request failed")
    );

    let open = b
        .call(|| -> Result<(), Outer> { unreachable!() })
        .unwrap_err();
    assert!(open.is_open());
    assert_eq!(
        open.to_string(),
        "circuit open: call not admitted (retry after 100 ticks)"
    );
    assert!(open.source().is_none());
    assert!(open.into_inner().is_none());

    // Usable with `?` into a boxed error.
    fn run(b: &Breaker<&ManualClock>) -> Result<(), Box<dyn Error>> {
        b.call(|| Ok::<_, Outer>(()))?;
        Ok(())
    }
    assert_eq!(
        run(&b).unwrap_err().to_string(),
        "circuit open: call not admitted (retry after 100 ticks)"
    );
}

/// A fallback's `Rejection` is the core's `Rejected` with the clock's tick
/// and the breaker's name: on a clock of unknown tick it reads in ticks, and
/// two rejections with another cause or wait differ.
#[test]
fn rejection_on_a_clock_of_unknown_tick_reads_in_ticks() {
    use tripword_std::Rejection;
    let clock = ManualClock::new(0);
    let b = Breaker::new(config(1), &clock);
    let _ = b.call(|| Err::<(), _>(()));
    clock.advance(25);
    let seen = std::cell::Cell::new(None);
    let keep = CallPolicy::new().fallback(|open| {
        seen.set(Some(open));
        Ok(())
    });
    let _ = b.call_with(&keep, || Ok::<_, ()>(()));
    let open: Rejection = seen.take().expect("the fallback ran");
    let core = open.rejected();
    assert_eq!(open, Rejection::new(core));
    assert_eq!(open, Rejection::from(core));
    assert_eq!(
        (open.name(), open.tick_period(), open.retry_after()),
        (None, None, None)
    );
    assert_eq!(open.retry_after_ticks(), Some(75));
    assert_eq!(
        format!("{open:?}"),
        "Rejection { cause: Open, retry_after_ticks: 75 }"
    );
    assert_eq!(open.to_string(), core.to_string());
    assert_eq!(
        open.to_string(),
        "circuit open: call not admitted (retry after 75 ticks)"
    );
    // Five ticks later the wait is shorter: another rejection.
    clock.advance(5);
    let _ = b.call_with(&keep, || Ok::<_, ()>(()));
    let later = seen.take().expect("the fallback ran");
    assert_eq!(later.cause(), Cause::Open);
    assert_ne!(open, later);
    assert_ne!(format!("{open:?}"), format!("{later:?}"));
}

/// On a real clock a rejection reads in a duration, rounded up, with the
/// breaker's name when it has one; the tick and the name are part of what
/// it is.
#[test]
fn rejection_reads_in_durations_with_the_breakers_name() {
    use tripword_std::Rejection;
    let clock = ManualTime::new();
    let b: Breaker<&ManualTime> = Settings::new()
        .failure_threshold(1)
        .open_for(Duration::from_secs(30))
        .build_on(&clock, ())
        .unwrap();
    let _ = b.call(|| Err::<(), _>("down"));
    clock.advance(Duration::from_millis(100));
    let err = b.call(|| Ok::<_, &str>(())).unwrap_err();
    let r = *err.rejected().unwrap();
    assert_eq!(r.tick_period(), Some(Duration::from_micros(1)));
    assert_eq!(r.retry_after(), Some(Duration::from_micros(29_900_001)));
    assert_eq!(err.retry_after(), r.retry_after());
    assert_eq!(
        err.to_string(),
        "circuit open: call not admitted (retry after 29.9s)"
    );
    assert_eq!(
        format!("{r:?}"),
        "Rejection { cause: Open, retry_after: 29.900001s }"
    );
    // The same core rejection without the tick is another rejection.
    assert_ne!(r, Rejection::new(r.rejected()));
    assert_eq!(r, Rejection::on_clock::<ManualTime>(r.rejected()));
    // Every unit, to the nearest tenth of a second, millisecond or
    // microsecond (the tick of rounding the bound adds does not show).
    let at = |wait: Duration| {
        clock.advance(Duration::from_secs(30) - wait);
        let s = b.call(|| Ok::<_, &str>(())).unwrap_err().to_string();
        clock.advance(wait + Duration::from_micros(1)); // and the tick
        assert_eq!(b.status(), tripword::Status::HalfOpen);
        let _ = b.call(|| Err::<(), _>("down")); // the probe fails: open again
        s
    };
    let _ = at(Duration::from_secs(1));
    assert_eq!(
        at(Duration::from_millis(1_500)),
        "circuit open: call not admitted (retry after 1.5s)"
    );
    assert_eq!(
        at(Duration::from_millis(250)),
        "circuit open: call not admitted (retry after 250ms)"
    );
    assert_eq!(
        at(Duration::from_micros(40)),
        "circuit open: call not admitted (retry after 41µs)"
    );
    // To the nearest, not down: 1.26 s reads 1.3 s, 250.6 ms reads 251 ms.
    assert_eq!(
        at(Duration::from_millis(1_260)),
        "circuit open: call not admitted (retry after 1.3s)"
    );
    assert_eq!(
        at(Duration::from_micros(250_600)),
        "circuit open: call not admitted (retry after 251ms)"
    );
    // A tick under a microsecond, shown in nanoseconds; a zero tick is 1 ns.
    let nanos = Rejection::new(r.rejected()).with_tick(Some(Duration::from_nanos(1)));
    assert_eq!(nanos.retry_after(), Some(Duration::from_nanos(29_900_001)));
    assert_eq!(
        nanos.to_string(),
        "circuit open: call not admitted (retry after 30ms)"
    );
    // Under a microsecond: nanoseconds (40 ticks of 1 ns left).
    let ticks = ManualClock::new(0);
    let short = Breaker::new(config(1).open_for(40), &ticks);
    let _ = short.call(|| Err::<(), _>(()));
    let left = short.call(|| Ok::<_, ()>(())).unwrap_err();
    let left = Rejection::new(left.rejected().unwrap().rejected());
    assert_eq!(
        left.with_tick(Some(Duration::from_nanos(1))).to_string(),
        "circuit open: call not admitted (retry after 40ns)"
    );
    let zero = Rejection::new(r.rejected()).with_tick(Some(Duration::ZERO));
    assert_eq!(zero, nanos);
    let huge = Rejection::new(r.rejected()).with_tick(Some(Duration::MAX));
    assert_eq!(huge.tick_period(), Some(Duration::from_nanos(u64::MAX)));
}

/// A declared breaker's rejection names it (`NamedBreaker`: feature
/// `macros`); forced open, it has no wait.
#[cfg(feature = "macros")]
#[test]
fn a_declared_breakers_rejection_names_it() {
    use tripword_std::{NamedBreaker, Rejection};
    static PAYMENTS: NamedBreaker<(), ManualTime> = NamedBreaker::new(
        "payments",
        Settings::new().failure_threshold(1),
        ManualTime::new(),
        (),
    );
    PAYMENTS.force_open();
    let err = PAYMENTS.call(|| Ok::<_, &str>(())).unwrap_err();
    assert_eq!(err.rejected().unwrap().name(), Some("payments"));
    assert_eq!(
        err.to_string(),
        "circuit 'payments' forced open: call not admitted"
    );
    assert_eq!(
        format!("{:?}", err.rejected().unwrap()),
        "Rejection { name: \"payments\", cause: ForcedOpen, retry_after: None }"
    );
    let named = Rejection::new(err.rejected().unwrap().rejected()).named(Some("payments"));
    assert_eq!(named.name(), Some("payments"));
}

/// A policy with a function-pointer classifier (`FnPolicy`, from
/// `classify_fn`) or a capturing closure (`DynPolicy`, from `classify_dyn`)
/// has a type a struct field can name, and counts as its classifier says.
#[test]
fn policies_with_a_classifier_fit_in_a_struct_field() {
    use tripword_std::policy::{DynPolicy, FnPolicy};

    fn by_code(r: &Result<u16, ()>) -> Outcome {
        match r {
            Ok(code) if *code >= 500 => Outcome::Failure,
            Ok(code) if *code >= 400 => Outcome::Ignored,
            Ok(_) => Outcome::Success,
            Err(()) => Outcome::Failure,
        }
    }
    struct Client<'c> {
        breaker: Breaker<&'c ManualClock>,
        by_fn: FnPolicy<u16, ()>,
        by_closure: DynPolicy<u16, ()>,
    }
    let clock = ManualClock::new(0);
    let fatal = 418;
    let client = Client {
        breaker: Breaker::new(Config::new().failure_threshold(1), &clock),
        by_fn: CallPolicy::new().classify_fn(by_code),
        by_closure: CallPolicy::new().classify_dyn(move |r: &Result<u16, ()>| match r {
            Ok(code) if *code == fatal => Outcome::Failure,
            _ => Outcome::Success,
        }),
    };
    let by_closure = client.by_closure.clone(); // clones the `Arc`
    assert_eq!(client.breaker.call_with(&client.by_fn, || Ok(404)), Ok(404));
    assert_eq!(client.breaker.status(), Status::Closed, "404: ignored");
    assert_eq!(client.breaker.call_with(&by_closure, || Ok(503)), Ok(503));
    assert_eq!(
        client.breaker.status(),
        Status::Closed,
        "503: a success here"
    );
    assert_eq!(
        client.breaker.call_with(&client.by_closure, || Ok(418)),
        Ok(418)
    );
    assert_eq!(client.breaker.status(), Status::Open);
    assert_eq!(
        format!("{:?}", client.by_closure.classifier()),
        "DynClassifier(..)"
    );
}
