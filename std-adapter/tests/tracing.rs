//! `TracingObserver`'s events, levels and fields, caught by a recording
//! subscriber layer, on a hand-moved clock.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use std::time::Duration;
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};

use tripword::clock::ManualClock;
use tripword::{Breaker, Config, Outcome, W64};
use tripword_std::observe::TracingObserver;
use tripword_std::{ManualTime, MillisClock, RealClock, Settings};

#[derive(Debug, Clone, PartialEq)]
struct Seen {
    level: Level,
    target: String,
    fields: BTreeMap<String, String>,
}

impl Seen {
    fn message(&self) -> &str {
        &self.fields["message"]
    }
}

#[derive(Clone, Default)]
struct Catch(Arc<Mutex<Vec<Seen>>>);

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0
            .insert(field.name().to_string(), format!("{value:?}"));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_string(), value.to_string());
    }
}

impl<S: Subscriber> Layer<S> for Catch {
    fn on_event(&self, event: &Event<'_>, _: Context<'_, S>) {
        let mut fields = BTreeMap::new();
        event.record(&mut Fields(&mut fields));
        self.0.lock().unwrap().push(Seen {
            level: *event.metadata().level(),
            target: event.metadata().target().to_string(),
            fields,
        });
    }
}

impl Catch {
    fn take(&self) -> Vec<Seen> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

fn field<'a>(seen: &'a Seen, name: &str) -> &'a str {
    seen.fields.get(name).map_or("<absent>", String::as_str)
}

#[test]
fn levels_and_fields() {
    let catch = Catch::default();
    let subscriber = tracing_subscriber::registry().with(catch.clone());
    let clock = ManualClock::new(0);
    let config = Config::new()
        .failure_threshold(1)
        .open_for(100)
        .probe_timeout(50)
        .horizon(0)
        .check::<W64>()
        .unwrap();
    // A clock with no stated tick length: waits in ticks.
    let b = Breaker::from_parts(config, &clock, TracingObserver::new("payments").in_ticks());
    tracing::subscriber::with_default(subscriber, || {
        // Admission and record at TRACE; the trip at WARN.
        let late = b.acquire().unwrap();
        b.release(b.acquire().unwrap(), Outcome::Failure);
        b.release(late, Outcome::Success);
        clock.advance(40);
        assert!(b.acquire().is_err());
        let seen = catch.take();
        let summary: Vec<(Level, &str)> = seen.iter().map(|s| (s.level, s.message())).collect();
        assert_eq!(
            summary,
            [
                (Level::TRACE, "call admitted"),
                (Level::TRACE, "call admitted"),
                (Level::WARN, "circuit breaker opened"),
                (Level::TRACE, "call recorded"),
                (Level::DEBUG, "stale release ignored"),
                (Level::DEBUG, "call rejected"),
            ]
        );
        assert!(seen.iter().all(|s| s.target == "tripword"));
        assert!(seen.iter().all(|s| field(s, "breaker") == "payments"));
        let trip = &seen[2];
        assert_eq!(
            (
                field(trip, "from"),
                field(trip, "to"),
                field(trip, "counter"),
                field(trip, "forced")
            ),
            ("closed", "open", "1", "false")
        );
        assert_eq!(field(&seen[3], "outcome"), "failure");
        assert_eq!(field(&seen[4], "outcome"), "success");
        assert_eq!(field(&seen[5], "cause"), "open");
        assert_eq!(field(&seen[5], "retry_after_ticks"), "60");
        assert_eq!(field(&seen[5], "retry_after_ms"), "<absent>");

        // The probe (two DEBUG transitions), its success: recovery at INFO.
        clock.advance(60);
        let probe = b.acquire().unwrap();
        b.release(probe, Outcome::Success);
        let seen = catch.take();
        let summary: Vec<(Level, &str, &str)> = seen
            .iter()
            .map(|s| (s.level, s.message(), field(s, "to")))
            .collect();
        assert_eq!(
            summary,
            [
                (Level::DEBUG, "circuit breaker half-open", "half_open"),
                (Level::DEBUG, "circuit breaker probing", "probing"),
                (Level::TRACE, "call admitted", "<absent>"),
                (Level::INFO, "circuit breaker closed", "closed"),
                (Level::TRACE, "call recorded", "<absent>"),
            ]
        );
        assert_eq!(field(&seen[2], "probe"), "true");

        // Forced open: WARN, forced; its rejections carry no wait.
        b.force_open();
        assert!(b.acquire().is_err());
        let seen = catch.take();
        assert_eq!(
            (seen[0].level, field(&seen[0], "forced")),
            (Level::WARN, "true")
        );
        assert_eq!(field(&seen[1], "cause"), "forced_open");
        assert_eq!(field(&seen[1], "retry_after_ticks"), "<absent>");
    });
}

/// A rejection's wait is `retry_after_ms`: whole milliseconds, rounded up
/// (never early), on the 1 µs tick `new` assumes (`ManualTime`, as
/// `MonotonicClock`) or the tick given with `tick`; absent when forced open.
#[test]
fn waits_are_in_milliseconds_rounded_up() {
    let catch = Catch::default();
    let subscriber = tracing_subscriber::registry().with(catch.clone());
    let time = ManualTime::new();
    let micros: Breaker<&ManualTime, W64, TracingObserver> = Settings::new()
        .failure_threshold(1)
        .open_for(Duration::from_millis(1_500))
        .build_on(&time, TracingObserver::new("payments"))
        .unwrap();
    let ticks = ManualClock::new(0);
    let config = Config::new().failure_threshold(1).open_for(100).horizon(0);
    let millis = Breaker::from_parts(
        config.check::<W64>().unwrap(),
        &ticks,
        TracingObserver::new("search").tick(MillisClock::TICK),
    );
    tracing::subscriber::with_default(subscriber, || {
        micros.release(micros.acquire().unwrap(), Outcome::Failure);
        time.advance(Duration::from_millis(400));
        assert!(micros.acquire().is_err());
        // 1.5 s and a tick (`RealClock::ticks`) less 0.4 s: 1 100 001 µs.
        time.advance_ticks(1);
        assert!(micros.acquire().is_err()); // 1 100 000 µs: exactly 1 100 ms
        millis.release(millis.acquire().unwrap(), Outcome::Failure);
        ticks.advance(1);
        assert!(millis.acquire().is_err()); // 99 ticks of 1 ms
        micros.force_open();
        assert!(micros.acquire().is_err());
    });
    let seen = catch.take();
    let rejections: Vec<[&str; 3]> = seen
        .iter()
        .filter(|s| s.message() == "call rejected")
        .map(|s| {
            [
                field(s, "breaker"),
                field(s, "retry_after_ms"),
                field(s, "retry_after_ticks"),
            ]
        })
        .collect();
    assert_eq!(
        rejections,
        [
            ["payments", "1101", "<absent>"],
            ["payments", "1100", "<absent>"],
            ["search", "99", "<absent>"],
            ["payments", "<absent>", "<absent>"],
        ]
    );
}

/// With the usual production filter (INFO), the per-call events are not
/// emitted at all: only the transitions an operator wants.
#[test]
fn an_info_filter_keeps_the_transitions_only() {
    use tracing_subscriber::filter::LevelFilter;
    let catch = Catch::default();
    let subscriber =
        tracing_subscriber::registry().with(catch.clone().with_filter(LevelFilter::INFO));
    let clock = ManualClock::new(0);
    let config = Config::new().failure_threshold(1).check::<W64>().unwrap();
    let b = Breaker::from_parts(config, &clock, TracingObserver::new("search"));
    tracing::subscriber::with_default(subscriber, || {
        for _ in 0..3 {
            if let Ok(t) = b.acquire() {
                b.release(t, Outcome::Failure);
            }
        }
        b.force_close();
    });
    let levels: Vec<Level> = catch.take().iter().map(|s| s.level).collect();
    assert_eq!(levels, [Level::WARN, Level::INFO]);
}

/// A corrupt word (spec I8), met by the next admission, is one `ERROR`
/// event with the raw word and the counter the repaired word starts at.
/// The word is loaded through the core's hidden `__verification`
/// constructor, as a stray write or retained RAM would leave it. Mutation
/// testing found the event unpinned (an empty `on_corrupt_word` survived).
#[test]
fn a_corrupt_word_is_an_error_event() {
    let catch = Catch::default();
    let subscriber = tracing_subscriber::registry().with(catch.clone());
    let clock = ManualClock::new(0);
    let config = Config::new().failure_threshold(1).check::<W64>().unwrap();
    // A `Closed` word (tag 0), counter 12, with a bit set above its
    // failure field (every tag is a state with the core's `recovery`
    // feature, which this crate turns on).
    let garbage: u64 = (1 << 63) | (12 << 3);
    let b = tripword::__verification::breaker_with_word(
        config,
        &clock,
        TracingObserver::new("ledger"),
        garbage,
    );
    tracing::subscriber::with_default(subscriber, || {
        let t = b.acquire().expect("a corrupt word fails open");
        b.release(t, Outcome::Success);
    });
    let seen = catch.take();
    let errors: Vec<&Seen> = seen.iter().filter(|s| s.level == Level::ERROR).collect();
    assert_eq!(errors.len(), 1, "{seen:#?}");
    let e = errors[0];
    assert_eq!(e.message(), "corrupt breaker word replaced by closed");
    assert_eq!(e.target, "tripword");
    assert_eq!(
        (field(e, "breaker"), field(e, "raw"), field(e, "counter")),
        ("ledger", "9223372036854775904", "13")
    );
}
