//! The fleet snippet of `docs/services.md` and `docs/distributed.md`, run
//! against a redis-server of its own: a `Fleet`, a breaker per upstream host
//! behind the per-key tower layer, one breaker by hand. The lines between
//! the `--8<--` marks are the snippet, word for word (CI stage 85 checks the
//! docs against them). `cargo run -p tripword-redis --example fleet_registry_layer`
// --8<-- [start:fleet]
use std::sync::Arc;
use std::time::Duration;
use tripword_redis::Fleet;
use tripword_std::observe::TracingObserver;
use tripword_std::tower::RegistryLayer;
use tripword_std::{BreakerExt, Settings};
// --8<-- [end:fleet]
use tower::{Service, ServiceBuilder, ServiceExt, service_fn};
use tripword_redis::server::RedisServer;
use tripword_std::CallError;

struct Request {
    host: &'static str,
}

fn host_of(req: &Request) -> String {
    req.host.to_owned()
}

async fn charge(order: u32) -> Result<String, String> {
    Ok(format!("receipt for order {order}"))
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let redis = RedisServer::start()?; // stopped when dropped
    let (url, order) = (redis.url(), 42); // "redis://10.0.0.5:6379/" in production
    // --8<-- [start:fleet]
    let settings = Settings::new()
        .failure_threshold(5)
        .open_for(Duration::from_secs(30));
    let fleet = Arc::new(
        Fleet::builder(url)
            .settings(&settings)
            .observer_per_key(|key| TracingObserver::new(key.to_owned()))
            .build()?,
    );
    // One breaker per upstream host, shared by every replica; a rejection
    // names the host: `circuit 'api.example.com' open: ... (retry after 29.9s)`.
    let layer = RegistryLayer::new(fleet.clone(), |req: &Request| host_of(req));
    // Or by hand:
    let payments = fleet.breaker("payments");
    let receipt = payments.call_async(charge(order)).await;
    // --8<-- [end:fleet]
    assert_eq!(receipt?, "receipt for order 42");
    // The backend: "down.example.com" fails, the rest answer.
    let backend = service_fn(|req: Request| async move {
        match req.host {
            "down.example.com" => Err("502"),
            host => Ok(host),
        }
    });
    let mut client = ServiceBuilder::new().layer(layer).service(backend);
    let mut get = async |host| client.ready().await?.call(Request { host }).await;
    for _ in 0..5 {
        assert!(matches!(
            get("down.example.com").await,
            Err(CallError::Inner("502"))
        ));
    }
    // The fifth failure tripped the host's breaker, fleet-wide.
    let rejected = get("down.example.com").await.unwrap_err();
    println!("{rejected}");
    assert!(
        rejected
            .to_string()
            .starts_with("circuit 'down.example.com' open")
    );
    assert_eq!(get("api.example.com").await?, "api.example.com");
    assert_eq!(fleet.keys().len(), 3, "payments and two hosts");
    println!("FLEET-REGISTRY-LAYER: keys={} ok", fleet.keys().len());
    Ok(())
}
