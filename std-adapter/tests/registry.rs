//! `Registry`: one breaker per key, made once, named by its key, idle keys
//! evicted, the bound kept. Hand-moved clock; no timing assertions.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use std::hash::Hash;

use tripword::clock::ManualClock;
use tripword::{Breaker, Config, Observer, OnTransition, Outcome, Status, Transition, W64};
use tripword_std::{BreakerExt, Registry};

static CLOCK: ManualClock = ManualClock::new(0);

/// Breakers from `config()` on `CLOCK`, each with the observer `observer`
/// makes from its key.
fn from_parts<K, O>(
    observer: impl Fn(&K) -> O + Send + Sync + 'static,
) -> Registry<K, Breaker<&'static ManualClock, W64, O>>
where
    K: Hash + Eq + Clone + Send + Sync + 'static,
    O: Observer + Send + Sync + 'static,
{
    Registry::new(move |key: &K| Breaker::from_parts(config(), &CLOCK, observer(key)))
}

fn config() -> tripword::ValidConfig<W64> {
    Config::new()
        .failure_threshold(1)
        .open_for(100)
        .check::<W64>()
        .unwrap()
}

type Plain = Registry<String, Breaker<&'static ManualClock>>;

/// On a fresh thread, whose snapshot list starts empty: a registry with
/// the entry `x` made and this thread's snapshot of it taken (generation
/// 1), handed to `f` with a weak handle on the entry.
fn on_a_fresh_thread_holding_x(
    f: impl FnOnce(
        Plain,
        std::sync::Weak<tripword_std::registry::Entry<String, Breaker<&'static ManualClock>>>,
    ) + Send
    + 'static,
) {
    std::thread::spawn(|| {
        let a: Plain = from_parts(|_| ());
        a.with("x", |_| ()); // made: generation 1
        let x = Arc::downgrade(&a.get("x")); // a refresh: this thread keeps generation 1
        f(a, x);
    })
    .join()
    .unwrap();
}

#[test]
fn one_breaker_per_key_made_on_first_use() {
    let made = Arc::new(AtomicUsize::new(0));
    let counter = made.clone();
    let r = from_parts(move |_: &String| {
        counter.fetch_add(1, Ordering::Relaxed);
    });
    assert!(r.is_empty());
    let a1 = r.get("a");
    let a2 = r.get("a");
    assert!(Arc::ptr_eq(&a1, &a2));
    assert_eq!(a1.key(), "a");
    r.with("b", |_| ());
    assert_eq!((r.len(), made.load(Ordering::Relaxed)), (2, 2));
    // Each key's breaker is its own.
    let _ = r.with("a", |b| b.call(|| Err::<(), _>("down")));
    assert_eq!(r.with("a", |b| b.status()), Status::Open);
    assert!(
        r.with("a", |b| b.call(|| Ok::<_, ()>(1)))
            .unwrap_err()
            .is_open()
    );
    assert_eq!(r.with("b", |b| b.call(|| Ok::<_, ()>(1))), Ok(1));
    assert!(r.peek("c").is_none());
    assert_eq!(r.len(), 2);
}

#[test]
fn racing_first_uses_make_one_breaker() {
    let made = Arc::new(AtomicUsize::new(0));
    let counter = made.clone();
    let r = from_parts(move |_: &String| {
        counter.fetch_add(1, Ordering::Relaxed);
    });
    let r = &r;
    let addresses: Vec<usize> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|_| s.spawn(move || r.with("hot", |e| std::ptr::from_ref(e.breaker()) as usize)))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(made.load(Ordering::Relaxed), 1);
    assert!(addresses.windows(2).all(|w| w[0] == w[1]));
}

#[test]
fn each_breaker_is_named_in_its_events() {
    type Log = Arc<std::sync::Mutex<Vec<(String, Transition)>>>;
    let log: Log = Arc::default();
    let sink = log.clone();
    let r = from_parts(move |host: &String| {
        let (sink, host) = (sink.clone(), host.clone());
        OnTransition(move |t| sink.lock().unwrap().push((host.clone(), t)))
    });
    r.with("db-1", |b| b.force_open());
    r.with("db-2", |b| {
        b.release(b.acquire().unwrap(), Outcome::Failure)
    });
    let log = log.lock().unwrap();
    let names: Vec<(&str, Status)> = log.iter().map(|(n, t)| (n.as_str(), t.to)).collect();
    assert_eq!(names, [("db-1", Status::Open), ("db-2", Status::Open)]);
}

#[test]
fn idle_closed_keys_are_evicted() {
    let r: Registry<String, Breaker<&ManualClock>> = from_parts(|_| ());
    for k in ["used", "idle", "open", "held"] {
        r.with(k, |_| ());
    }
    r.with("open", |b| b.force_open());
    let held = r.get("held");
    assert_eq!(r.evict_idle(), 0); // all used in this period
    r.with("used", |_| ());
    assert_eq!(r.evict_idle(), 2); // "idle" and "held"
    assert!(r.peek("idle").is_none() && r.peek("held").is_none());
    // Not "open": an open breaker is not forgotten.
    assert!(r.peek("open").is_some());
    // The evicted handle goes on working, detached; the key gets a new one.
    held.force_open();
    assert!(!Arc::ptr_eq(&held, &r.get("held")));
    assert_eq!(r.with("held", |b| b.status()), Status::Closed);
    r.with("open", |b| b.force_close()); // a use in this period
    assert_eq!(r.evict_idle(), 1); // "used", idle a period
    assert_eq!(r.evict_idle(), 2); // "open" (closed now) and "held"
    assert!(r.is_empty());
}

/// A lookup from inside another's closure (the thread's snapshot is
/// borrowed then) and lookups of two registries in turn.
#[test]
fn nested_lookups_and_many_registries() {
    let a: Registry<String, Breaker<&ManualClock>> = from_parts(|_| ());
    let b: Registry<String, Breaker<&ManualClock>> = from_parts(|_| ());
    a.with("x", |_| ());
    let inner = a.with("x", |outer| {
        a.with("y", |inner| std::ptr::eq(outer.breaker(), inner.breaker()))
    });
    assert!(!inner);
    assert_eq!(a.len(), 2);
    for _ in 0..3 {
        a.with("x", |e| e.force_open());
        b.with("x", |e| assert_eq!(e.status(), Status::Closed));
        a.with("x", |e| e.force_close());
    }
    // Many registries on one thread (more than it keeps snapshots of).
    let many: Vec<Registry<String, Breaker<&ManualClock>>> =
        (0..20).map(|_| from_parts(|_| ())).collect();
    for (i, r) in many.iter().enumerate() {
        r.with("k", |e| {
            if i % 2 == 0 {
                e.force_open()
            }
        });
    }
    for (i, r) in many.iter().enumerate() {
        let open = r.with("k", |e| e.status() == Status::Open);
        assert_eq!(open, i % 2 == 0);
        assert_eq!(r.len(), 1);
    }
}

#[test]
fn the_bound_holds_and_evicts_least_recently_used_closed_first() {
    let r: Registry<u32, Breaker<&ManualClock>> = from_parts(|_| ()).with_capacity(4);
    for k in 0..4 {
        r.with(&k, |_| ());
    }
    // Every key used in this period; key 0 open.
    r.with(&0, |b| b.force_open());
    r.evict_idle(); // a new period; nothing idle yet
    for k in [0, 3, 1] {
        r.with(&k, |_| ());
    }
    // A fifth key: key 2 was idle through the period, the sweep frees it.
    r.with(&4, |_| ());
    assert_eq!(r.len(), 4);
    assert!(r.peek(&2).is_none());
    // All used now: the least recently used closed key goes (1 and 3 were
    // seen in the same period as 0, but 0 is open).
    for k in [0, 1, 3, 4] {
        r.with(&k, |_| ());
    }
    r.with(&5, |_| ());
    assert_eq!(r.len(), 4);
    assert!(r.peek(&0).is_some(), "the open breaker is kept");
    for k in 0..100 {
        r.with(&(100 + k), |_| ());
        assert!(r.len() <= 4);
    }
}

/// A `Local` handle follows the registry: keys made elsewhere, evictions,
/// and keys it makes itself.
#[test]
fn local_handles_follow_the_registry() {
    let r: Registry<String, Breaker<&ManualClock>> = from_parts(|_| ());
    let mut local = r.local();
    local.with("a", |b| b.force_open()); // made through the handle
    assert_eq!(r.with("a", |b| b.status()), Status::Open);
    r.with("b", |b| b.force_open()); // made elsewhere: the handle's snapshot is stale
    assert_eq!(local.with("b", |b| b.status()), Status::Open);
    assert!(std::ptr::eq(
        local.with("b", |e| std::ptr::from_ref(e.breaker())),
        std::ptr::from_ref(r.get("b").breaker())
    ));
    r.with("a", |b| b.force_close());
    r.with("b", |b| b.force_close());
    r.evict_idle();
    r.evict_idle();
    assert!(r.is_empty());
    // Evicted: the handle gets the key's new breaker, not its old snapshot's.
    assert_eq!(local.with("a", |b| b.status()), Status::Closed);
    assert_eq!(r.len(), 1);
    assert!(std::ptr::eq(
        local.with("a", |e| std::ptr::from_ref(e.breaker())),
        std::ptr::from_ref(r.get("a").breaker())
    ));
}

/// An `Entry`'s `Debug` shows its key and its breaker (state and config).
/// Mutation testing found it untested (an empty `fmt` survived).
#[test]
fn entry_debug_shows_the_key_and_the_breaker() {
    let r: Registry<String, Breaker<&ManualClock>> = from_parts(|_| ());
    let entry = r.get("db");
    let shown = format!("{entry:?}");
    assert!(
        shown.starts_with("Entry { key: \"db\", breaker: Breaker { word: "),
        "{shown}"
    );
    assert!(shown.contains("config: "), "{shown}");
    assert!(shown.contains("Closed"), "{shown}");
    entry.force_open();
    let shown = format!("{entry:?}");
    assert!(shown.contains("Open"), "{shown}");
    assert!(shown.ends_with('}'), "{shown}");
}

/// The accessors: `capacity` is the bound given (at least 1; 1024 by
/// default), `is_empty` is false once a key is made, an entry's `config`
/// is the one its breaker was made from, and `for_each` visits every entry
/// once. Mutation testing
/// found them untested (`capacity` as 0 or 1, `is_empty` as `true`, a
/// default `config`, an empty `for_each` survived).
#[test]
fn accessors_report_the_bound_the_template_and_every_entry() {
    let r: Registry<String, Breaker<&ManualClock>> = from_parts(|_| ());
    assert_eq!(r.capacity(), tripword_std::registry::DEFAULT_CAPACITY);
    assert_eq!(r.capacity(), 1024);
    assert!(r.is_empty());
    let mut seen = Vec::new();
    r.for_each(|e| seen.push(e.key().clone()));
    assert!(seen.is_empty());
    for k in ["a", "b", "c"] {
        r.with(k, |_| ());
    }
    assert!(!r.is_empty());
    let a = r.get("a");
    assert_eq!(a.config().config(), config().config());
    assert_eq!(
        (a.config().failure_threshold(), a.config().open_for()),
        (1, 100)
    );
    r.with("b", |b| b.force_open());
    let mut seen = Vec::new();
    r.for_each(|e| seen.push((e.key().clone(), e.status())));
    seen.sort_by(|x, y| x.0.cmp(&y.0));
    assert_eq!(
        seen,
        [
            ("a".to_string(), Status::Closed),
            ("b".to_string(), Status::Open),
            ("c".to_string(), Status::Closed)
        ]
    );
    let small = from_parts(|_: &u32| ()).with_capacity(3);
    assert_eq!(small.capacity(), 3);
    let least = from_parts(|_: &u32| ()).with_capacity(0);
    assert_eq!(least.capacity(), 1);
    least.with(&1, |_| ());
    least.with(&2, |_| ());
    assert_eq!(least.len(), 1);
    assert!(least.peek(&2).is_some());
}

/// `evict_idle` on an empty registry evicts nothing (and does not
/// underflow sizing the swept copy). Mutation testing found it untested
/// (`current.len() - 1` in `swept` survived).
#[test]
fn evicting_from_an_empty_registry_evicts_nothing() {
    let r: Registry<String, Breaker<&ManualClock>> = from_parts(|_| ());
    assert_eq!(r.evict_idle(), 0);
    assert_eq!(r.evict_idle(), 0);
    assert!(r.is_empty());
    r.with("a", |_| ());
    assert_eq!(r.evict_idle(), 0);
    assert_eq!(r.evict_idle(), 1);
    assert!(r.is_empty());
    assert_eq!(r.evict_idle(), 0);
}

/// A sweep that evicts nothing leaves the map as it was: its generation
/// (shown by a `Local` handle's `Debug`) does not move, so no thread's or
/// handle's snapshot goes stale. Mutation testing found it untested
/// (`evicted >= 0`, republishing an unchanged map, survived).
#[test]
fn a_sweep_that_evicts_nothing_publishes_nothing() {
    let r: Registry<String, Breaker<&ManualClock>> = from_parts(|_| ());
    let mut local = r.local();
    assert_eq!(format!("{local:?}"), "Local { generation: 0, .. }");
    local.with("a", |_| ()); // made: generation 1
    assert_eq!(format!("{local:?}"), "Local { generation: 1, .. }");
    assert_eq!(r.evict_idle(), 0); // "a" used in the period that ended
    local.with("a", |_| ());
    assert_eq!(format!("{local:?}"), "Local { generation: 1, .. }");
    assert_eq!(r.evict_idle(), 0); // "a" used in the period that ended
    assert_eq!(r.evict_idle(), 1); // idle a whole period: generation 2
    local.with("b", |_| ()); // made: generation 3
    assert_eq!(format!("{local:?}"), "Local { generation: 3, .. }");
}

/// A `Local` handle's `Debug` shows the generation of its snapshot, and a
/// `Registry`'s its size and bound. Mutation testing
/// found them untested (empty `fmt`s survived).
#[test]
fn local_and_registry_debug_show_their_state() {
    let r: Registry<String, Breaker<&ManualClock>> = from_parts(|_| ()).with_capacity(7);
    r.with("a", |_| ());
    r.with("b", |_| ());
    let shown = format!("{r:?}");
    assert_eq!(shown, "Registry { len: 2, capacity: 7, .. }");
    let mut local = r.local();
    assert_eq!(format!("{local:?}"), "Local { generation: 2, .. }");
    local.with("c", |_| ());
    assert_eq!(format!("{local:?}"), "Local { generation: 3, .. }");
}

/// A thread keeps its snapshot of a registry while it uses others, and
/// drops it at that registry's next refresh: seen through an evicted
/// entry, which the thread's stale snapshot keeps alive until then (the
/// module docs). Run on a fresh thread, whose snapshot list starts empty.
/// Mutation testing found the list's bookkeeping untested (`remember` as
/// `()`, and in its filter `c.registry == self.id`, `||` for `&&`,
/// `strong_count() < 0` or `== 0` survived).
#[test]
fn a_thread_keeps_one_snapshot_per_registry_until_it_refreshes() {
    on_a_fresh_thread_holding_x(|a, x| {
        let b: Plain = from_parts(|_| ());
        assert_eq!((a.evict_idle(), a.evict_idle()), (0, 1));
        assert!(a.peek("x").is_none());
        // Evicted, but this thread's snapshot of `a` still holds it.
        assert!(
            x.upgrade().is_some(),
            "the thread's snapshot of `a` is kept"
        );
        b.with("y", |_| ()); // a refresh of `b`'s snapshot keeps `a`'s
        b.with("y", |_| ());
        assert!(x.upgrade().is_some(), "using `b` keeps the snapshot of `a`");
        // `a`'s next refresh replaces its stale snapshot: the entry goes.
        a.with("z", |_| ());
        assert!(
            x.upgrade().is_none(),
            "the stale snapshot of `a` is dropped"
        );
    });
}

/// The snapshot a thread keeps of a registry dropped since goes at the
/// thread's next refresh of any registry, with the entries it held.
/// Mutation testing found it untested (`remember` as `()`, and in its
/// filter `||` for `&&`, `>=` or `==` for `>` survived).
#[test]
fn a_dropped_registrys_snapshot_goes_at_the_next_refresh() {
    on_a_fresh_thread_holding_x(|a, x| {
        drop(a);
        assert!(
            x.upgrade().is_some(),
            "the thread's snapshot of `a` is kept"
        );
        let b: Plain = from_parts(|_| ());
        b.with("y", |_| ());
        assert!(x.upgrade().is_none(), "dropped at the next refresh");
    });
}

/// `Registry::from_settings` and `from_settings_on` make the registry
/// `Registry::new` would, from the settings' config on their clock and
/// word: no turbofish, no config to convert first. Out of range, the
/// settings' own error.
#[test]
fn a_registry_from_settings_without_a_template() {
    use std::time::Duration;
    use tripword_std::{ManualTime, MonotonicClock, RealClock, Settings, StdBreaker, W32};

    let settings = Settings::new()
        .failure_threshold(2)
        .open_for(Duration::from_secs(10));
    let plain: Registry<String> = Registry::from_settings(&settings.into()).unwrap();
    assert_eq!(
        plain.get("db").config(),
        &settings.config::<MonotonicClock, W64>().unwrap()
    );

    let named: Registry<String, StdBreaker<W64, _>> =
        Registry::from_settings_on(&settings.into(), MonotonicClock, |host: &String| {
            OnTransition(drop_transition(host.clone()))
        })
        .unwrap();
    named.with("db", |b| b.force_open());
    assert_eq!(named.get("db").status(), Status::Open);

    static TIME: ManualTime = ManualTime::new();
    let narrow: Registry<&'static str, Breaker<&ManualTime, W32>> =
        Registry::from_settings_on(&settings.into(), &TIME, |_| ()).unwrap();
    assert_eq!(
        narrow.get(&"db").config().open_for(),
        ManualTime::ticks(Duration::from_secs(10))
    );
    for _ in 0..2 {
        let _ = narrow.with(&"db", |b| b.call(|| Err::<(), _>("down")));
    }
    assert_eq!(narrow.with(&"db", |b| b.status()), Status::Open);

    let err = Registry::<String>::from_settings(&settings.failure_threshold(0).into()).unwrap_err();
    assert_eq!(
        err.settings_error().field(),
        tripword::Field::FailureThreshold
    );
}

fn drop_transition(_host: String) -> impl Fn(Transition) + Send + Sync {
    move |_| ()
}

/// The core's common types are re-exported by `tripword-std`, and the
/// core itself, so a service needs no `tripword` dependency: these are the
/// very same types.
#[test]
fn the_core_types_are_reexported() {
    fn same<T>(_: T, _: T) {}
    same(tripword_std::Status::Open, tripword::Status::Open);
    same(tripword_std::Cause::Probing, tripword::Cause::Probing);
    same(tripword_std::Outcome::Ignored, tripword::Outcome::Ignored);
    same(
        tripword_std::Config::new(),
        tripword_std::tripword::Config::new(),
    );
    let config: tripword_std::ValidConfig<tripword_std::W32> =
        tripword::Config::new().check::<tripword::W32>().unwrap();
    let _: tripword_std::Breaker<&ManualClock, tripword_std::W32> =
        tripword::Breaker::from_parts(config, &CLOCK, ());
    let _ = <tripword_std::W64 as tripword_std::Word>::LAYOUT;
}
