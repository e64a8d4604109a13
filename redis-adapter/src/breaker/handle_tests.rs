//! The handle's accessors and forces against a server: unit tests, so
//! that the crate's first stage of mutation testing (`--lib`) judges them.

use super::*;
use crate::DEFAULT_CONFIG;
use std::time::Duration;
use tripword::ValidConfig;

/// The handle's own accessors, against a server: a clone is the same
/// breaker and another build is not; the mirror holds the stored word,
/// and `Debug` shows it; the estimate of the server's time is a time of
/// the server's clock; the config is the one built with, and its
/// fingerprint tells it from another; each force stores its word and is
/// counted; the key, its channel and the kit's name of the breaker.
#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn the_handle_reads_the_shared_word_and_holds_it() {
    use tripword::word::State;
    let server = crate::server::tests::server();
    let client = redis::Client::open(server.url()).unwrap();
    let mut con = client
        .get_connection_with_timeout(Duration::from_secs(5))
        .unwrap();
    let stored = Snapshot {
        state: State::Closed { failures: 2 },
        counter: 77,
    }
    .encode::<W64>();
    let () = redis::cmd("SET")
        .arg("k")
        .arg(stored)
        .query(&mut con)
        .unwrap();
    let three = crate::DEFAULT_CONFIG
        .failure_threshold(3)
        .check::<W64>()
        .unwrap();
    let build = |key: &str, config: ValidConfig<W64>| {
        RedisBreaker::builder(server.url(), key)
            .config(config)
            .build()
            .unwrap()
    };
    let a = build("k", three);
    let b = a.clone();
    let other = build("k", three);
    assert!(RedisBreaker::ptr_eq(&a, &b), "a clone is the same breaker");
    assert!(!RedisBreaker::ptr_eq(&a, &other), "another build is not");
    assert_eq!(a.mode(), Mode::Shared);
    assert_eq!(a.word(), stored);
    let debug = format!("{a:?}");
    for part in [
        "RedisBreaker {",
        "key: \"k\"",
        "mode: Shared",
        "counter: 77",
        "failures: 2",
    ] {
        assert!(debug.contains(part), "{part} in {debug}");
    }
    // Microseconds of the server's clock: after 2020 (the mutants'
    // `None`, `Some(0)` and `Some(1)` are not).
    let now = a.fleet_now().expect("sampled by the build's read");
    assert!(now > 1_577_836_800_000_000, "{now}");
    assert_eq!(a.config().failure_threshold(), 3);
    let fingerprint = a.config_fingerprint();
    assert_eq!(fingerprint, other.config_fingerprint());
    let default = build("k2", ValidConfig::new(DEFAULT_CONFIG));
    assert_ne!(fingerprint, default.config_fingerprint());
    let mut stored = || -> State {
        let word: String = redis::cmd("GET").arg("k").query(&mut con).unwrap();
        Snapshot::decode::<W64>(word.parse().unwrap())
            .unwrap()
            .state
    };
    a.force_open().unwrap();
    assert_eq!(stored(), State::ForcedOpen);
    assert_eq!(
        Snapshot::decode::<W64>(a.word()).unwrap().state,
        State::ForcedOpen
    );
    a.force_open_for(Duration::from_secs(600)).unwrap();
    assert!(
        matches!(stored(), State::OpenUntil { .. }),
        "{:?}",
        stored()
    );
    a.force_close().unwrap();
    assert!(matches!(stored(), State::Closed { failures: 0 }));
    assert!(a.stats().call_round_trips >= 3, "one or more a force");
    assert_eq!(a.key(), "k");
    assert_eq!(a.channel(), "tripword:k");
    assert_eq!(CircuitBreaker::name(&a), Some("k"));
}
