//! 1 000 keys in one process: one watcher thread, one pattern
//! subscription, a bounded number of connections. Alone in its test binary,
//! so that the thread count is this test's own.

mod common;

use common::*;
use std::time::Duration;
use tripword::{Outcome, Status};
use tripword_redis::{Fleet, Mode, RedisBreaker};

fn fleet(server: &tripword_redis::server::RedisServer) -> tripword_redis::FleetBuilder {
    Fleet::builder(server.url()).op_timeout(Duration::from_secs(5))
}

fn threads() -> usize {
    std::fs::read_dir("/proc/self/task").map_or(0, Iterator::count)
}

#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn a_thousand_keys_share_one_thread_one_subscription_and_a_bounded_pool() {
    let server = server();
    let threads_before = threads();
    let clients_before = clients(&server);
    let f = fleet(&server)
        .config(config(2, 60_000_000, 1_000_000))
        .build()
        .unwrap();
    let keys: Vec<String> = (0..1_000).map(|i| format!("host-{i}")).collect();
    let breakers: Vec<_> = keys.iter().map(|k| f.breaker(k)).collect();
    assert_eq!(f.len(), 1_000);
    // The watcher subscribes once for all.
    assert!(
        eventually(LONG, || numpat(&server) == 1),
        "one pattern subscription"
    );
    let threads_after = threads();
    assert!(
        threads_after <= threads_before + 1,
        "{threads_before} threads before, {threads_after} with 1 000 breakers"
    );
    // The pool's connection and the subscription's (the count's own one
    // is not the fleet's).
    let opened = clients(&server) - clients_before;
    assert!(opened <= 2 + 1, "{opened} connections for 1 000 breakers");
    // The same breaker for the same key.
    let again = f.breaker("host-7");
    assert!(RedisBreaker::ptr_eq(&again, &breakers[7]));
    // Every one works, and a trip reaches Redis and the other instances.
    let other = fleet(&server)
        .config(config(2, 60_000_000, 1_000_000))
        .build()
        .unwrap();
    for k in ["host-0", "host-999"] {
        let b = f.breaker(k);
        for _ in 0..2 {
            let t = b.acquire().unwrap();
            b.release(t, Outcome::Failure);
        }
        assert_eq!(b.status(), Status::Open);
        let seen = other.breaker(k);
        assert!(
            eventually(LONG, || seen.status() == Status::Open),
            "{k}: the other instance sees the trip"
        );
    }
    assert_eq!(f.breaker("host-500").status(), Status::Closed);
    for b in &breakers[1..999] {
        assert_eq!(b.mode(), Mode::Shared);
    }
}
