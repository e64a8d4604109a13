//! The fleet snippet of `docs/services.md` and `docs/distributed.md`, run:
//! a `Fleet`, a breaker per upstream host behind the per-key tower layer,
//! and one breaker by hand, against a redis-server of its own.
//!
//! ```sh
//! cargo run -p tripword-redis --example fleet_registry_layer
//! ```
use std::sync::Arc;
use std::time::Duration;
use tower::{Service, ServiceBuilder, ServiceExt, service_fn};
use tripword_redis::Fleet;
use tripword_redis::server::RedisServer;
use tripword_std::observe::TracingObserver;
use tripword_std::tower::RegistryLayer;
use tripword_std::{BreakerExt, CallError, Settings};

struct Request {
    host: &'static str,
}

fn host_of(req: &Request) -> String {
    req.host.to_owned()
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let redis = RedisServer::start()?; // stopped when dropped
    // --8<-- [start:fleet]
    let settings = Settings::new()
        .failure_threshold(5)
        .open_for(Duration::from_secs(30));
    let fleet = Arc::new(
        Fleet::builder(redis.url())
            .settings(&settings)
            .observer_per_key(|key| TracingObserver::new(key.to_owned()))
            .build()?,
    );
    // One breaker per upstream host, shared by every replica; a rejection
    // names the host: `circuit 'down.example.com' open: ... (retry after 29.9s)`.
    let layer = RegistryLayer::new(fleet.clone(), |req: &Request| host_of(req));
    // Or by hand:
    let payments = fleet.breaker("payments");
    let receipt = payments.call_async(async { Ok::<_, String>("paid") }).await;
    // --8<-- [end:fleet]
    assert_eq!(receipt?, "paid");

    // The backend: "down.example.com" fails, the rest answer.
    let backend = service_fn(|req: Request| async move {
        match req.host {
            "down.example.com" => Err("502"),
            host => Ok(host),
        }
    });
    let mut client = ServiceBuilder::new().layer(layer).service(backend);
    for _ in 0..5 {
        let reply = client
            .ready()
            .await?
            .call(Request {
                host: "down.example.com",
            })
            .await;
        assert!(matches!(reply, Err(CallError::Inner("502"))));
    }
    let rejected = client
        .ready()
        .await?
        .call(Request {
            host: "down.example.com",
        })
        .await;
    let Err(rejected @ CallError::Open(_)) = rejected else {
        panic!("the fifth failure trips the host's breaker: {rejected:?}")
    };
    println!("{rejected}");
    assert!(
        rejected
            .to_string()
            .starts_with("circuit 'down.example.com' open")
    );
    let up = client
        .ready()
        .await?
        .call(Request {
            host: "api.example.com",
        })
        .await?;
    assert_eq!(up, "api.example.com");
    assert_eq!(fleet.keys().len(), 3, "payments and two hosts");
    println!("FLEET-REGISTRY-LAYER: keys={} ok", fleet.keys().len());
    Ok(())
}
