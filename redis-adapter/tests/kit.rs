//! The fleet's breaker through the kit's open trait: `tripword-std`'s
//! `call`, `call_async` and tower layer run calls through a `RedisBreaker`
//! on a real redis-server, and what they record reaches the shared word.

mod common;

use common::*;
use std::sync::Arc;
use tower::{Layer, Service, ServiceExt, service_fn};
use tripword::{Cause, CircuitBreaker, Status};
use tripword_std::BreakerExt;
use tripword_std::classify::OkOrFailure;
use tripword_std::tower::BreakerLayer;

#[test]
fn call_through_the_trait_trips_the_fleet() {
    let Some(server) = server() else { return };
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
}

#[tokio::test(flavor = "current_thread")]
async fn call_async_and_the_tower_layer_take_the_fleet_breaker() {
    let Some(server) = server() else { return };
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
