//! The fleet's breaker through the kit's open trait: `tripword-std`'s
//! `call`, `call_async` and tower layer run calls through a `RedisBreaker`
//! on a real redis-server, and what they record reaches the shared word.

mod common;

use common::*;
use std::sync::Arc;
use std::time::Duration;
use tower::{Layer, Service, ServiceExt, service_fn};
use tripword::{Cause, CircuitBreaker, Status};
use tripword_std::BreakerExt;
use tripword_std::classify::OkOrFailure;
use tripword_std::tower::BreakerLayer;

#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn call_through_the_trait_trips_the_fleet() {
    let server = server();
    let cfg = config(2, 60_000_000, 1_000_000);
    let a = builder(&server, "kit", cfg).build().unwrap();
    let b = builder(&server, "kit", cfg).build().unwrap();
    assert_eq!(BreakerExt::call(&a, || Ok::<_, ()>(1)), Ok(1));
    for _ in 0..2 {
        assert!(BreakerExt::call(&a, || Err::<(), _>("down")).is_err());
    }
    assert_eq!(CircuitBreaker::status(&a), Status::Open);
    // The trip is in Redis: the other instance rejects once it has read it.
    b.sync().unwrap();
    let err = BreakerExt::call(&b, || Ok::<_, ()>(())).unwrap_err();
    assert_eq!(err.cause(), Some(Cause::Open));
    // Named by its key, the wait as a duration: at most the open time.
    let r = err.rejected().unwrap();
    assert_eq!(r.name(), Some("kit"));
    assert!(
        r.retry_after()
            .is_some_and(|w| w <= Duration::from_secs(60)),
        "{r:?}"
    );
    let text = r.to_string();
    assert!(
        text.starts_with("circuit 'kit' open: call not admitted (retry after ")
            && text.ends_with("s)"),
        "{text}"
    );
}

/// A fleet breaker's name is its key, interned once per distinct key:
/// breakers made again for a key share its copy.
#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn the_name_is_the_key_interned_once() {
    let server = server();
    let cfg = config(2, 60_000_000, 1_000_000);
    let a = builder(&server, "kit-name", cfg).build().unwrap();
    let b = builder(&server, "kit-name", cfg).build().unwrap();
    let other = builder(&server, "kit-other", cfg).build().unwrap();
    let (na, nb) = (a.name().unwrap(), b.name().unwrap());
    assert_eq!(na, "kit-name");
    assert!(std::ptr::eq(na, nb), "one copy per key");
    assert_eq!(other.name(), Some("kit-other"));
    let fleet = tripword_redis::Fleet::builder(server.url())
        .config(cfg)
        .build()
        .unwrap();
    let first = fleet.breaker("kit-name").name().unwrap();
    assert!(std::ptr::eq(first, na));
    fleet.evict_idle();
    fleet.evict_idle();
    assert!(fleet.is_empty());
    let again = fleet.breaker("kit-name");
    assert!(std::ptr::eq(again.name().unwrap(), na));
}

#[tokio::test(flavor = "current_thread")]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
async fn call_async_and_the_tower_layer_take_the_fleet_breaker() {
    let server = server();
    let cfg = config(1, 60_000_000, 1_000_000);
    let shared = Arc::new(builder(&server, "kit-tower", cfg).build().unwrap());
    assert_eq!(shared.call_async(async { Ok::<_, ()>(7) }).await, Ok(7));
    let mut svc = BreakerLayer::new(shared.clone())
        .classify(OkOrFailure)
        .layer(service_fn(|n: u32| async move {
            if n == 0 {
                Err("zero")
            } else {
                Ok::<_, &str>(n)
            }
        }));
    assert_eq!(svc.ready().await.unwrap().call(3).await.unwrap(), 3);
    assert!(
        svc.ready()
            .await
            .unwrap()
            .call(0)
            .await
            .unwrap_err()
            .inner()
            .is_some()
    );
    assert_eq!(shared.status(), Status::Open);
    let rejected = svc.ready().await.unwrap().call(3).await.unwrap_err();
    assert_eq!(rejected.cause(), Some(Cause::Open));
    let fresh = builder(&server, "kit-tower", cfg).build().unwrap();
    assert_eq!(fresh.status(), Status::Open, "the trip is the fleet's");
}

/// A local clock the test sets.
#[derive(Clone, Default)]
struct SetClock(Arc<std::sync::atomic::AtomicU64>);

impl tripword_redis::LocalClock for SetClock {
    fn micros(&self) -> u64 {
        self.0.load(std::sync::atomic::Ordering::Relaxed)
    }
}

#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn the_trait_names_the_instance_clock_and_the_abandon_outcome() {
    let server = server();
    let clock = SetClock::default();
    clock.0.store(1_234, std::sync::atomic::Ordering::Relaxed);
    let cfg = tripword::Config::new()
        .failure_threshold(3)
        .abandon_as(tripword::Outcome::Ignored)
        .check()
        .unwrap();
    let b = builder(&server, "kit-clock", cfg)
        .local_clock(clock.clone())
        .build()
        .unwrap();
    use tripword::Clock;
    assert_eq!(CircuitBreaker::clock(&b).now(), 1_234);
    clock.0.store(98_765, std::sync::atomic::Ordering::Relaxed);
    assert_eq!(CircuitBreaker::clock(&b).now(), 98_765);
    assert_eq!(format!("{:?}", CircuitBreaker::clock(&b)), "LocalTicks");
    assert_eq!(
        CircuitBreaker::abandon_outcome(&b),
        tripword::Outcome::Ignored
    );
    let t = CircuitBreaker::acquire(&b).unwrap();
    assert_eq!(
        CircuitBreaker::release(&b, t, tripword::Outcome::Failure),
        tripword::Release::Recorded
    );
    // A ticket from before a forced close is stale through the trait too.
    let t = CircuitBreaker::acquire(&b).unwrap();
    b.force_close().unwrap();
    assert_eq!(
        CircuitBreaker::release(&b, t, tripword::Outcome::Failure),
        tripword::Release::Stale
    );
}

/// A fleet key in shadow mode (`tripword::kit::Shadow` around the fleet's
/// breaker): with the fleet's word open, every call through it is admitted
/// and runs, the shared word is left as it was (the shadow calls' outcomes
/// record nothing), and switched off it rejects at once; another instance
/// sees the word unchanged throughout.
#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn a_fleet_key_in_shadow_mode_admits_and_leaves_the_shared_word_alone() {
    use tripword::kit::Shadow;
    let server = server();
    let cfg = config(1, 60_000_000, 1_000_000);
    let shadowed = Shadow::new(builder(&server, "shadow", cfg).build().unwrap());
    let other = builder(&server, "shadow", cfg).build().unwrap();
    assert!(BreakerExt::call(&shadowed, || Err::<(), _>("down")).is_err());
    assert!(eventually(Duration::from_secs(5), || other.sync().unwrap()
        == Status::Open));
    let word = stored(&server, "shadow");
    let mut ran = 0;
    for _ in 0..5 {
        let r = BreakerExt::call(&shadowed, || {
            ran += 1;
            Err::<(), _>("still down")
        });
        assert!(matches!(r, Err(tripword_std::CallError::Inner(_))));
    }
    assert_eq!(ran, 5, "every call ran");
    assert_eq!(
        CircuitBreaker::status(&shadowed),
        Status::Open,
        "the real state"
    );
    assert_eq!(stored(&server, "shadow"), word, "the shared word as it was");
    shadowed.set_shadow(false);
    let rejected = BreakerExt::call(&shadowed, || Ok::<_, ()>(())).unwrap_err();
    assert_eq!(rejected.cause(), Some(Cause::Open));
    assert_eq!(other.sync().unwrap(), Status::Open);
}
