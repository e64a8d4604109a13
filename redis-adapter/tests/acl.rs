//! A fleet as a Redis ACL user that may do only what a fleet needs (the
//! rule in `docs/distributed-security.md`): its keys under one prefix, its
//! channels `tripword:*`, and the commands the crate sends or its scripts
//! call. The fleet trips, rejects, elects one probe and recovers as that
//! user, with a quorum too; the user can read or write no other key,
//! publish on no other channel, and run no other command.

mod common;
mod life;

use common::{LONG, config, eventually, raw, server};
use life::{OPEN_FOR, shared, trip_reject_probe_recover};
use std::time::Duration;
use tripword::{Outcome, Status};
use tripword_redis::server::RedisServer;
use tripword_redis::{Fleet, RedisBreaker, Release};

/// The fleet's user, as `docs/distributed-security.md` gives it (one
/// Redis; no Sentinel, no Cluster), for breakers keyed `breaker:*`.
const RULE: &[&str] = &[
    "fleet",
    "on",
    ">pw",
    "resetkeys",
    "resetchannels",
    "~breaker:*",
    "&tripword:*",
    "-@all",
    "+evalsha",
    "+script|load",
    "+get",
    "+set",
    "+publish",
    "+time",
    "+zadd",
    "+zremrangebyscore",
    "+zcard",
    "+pexpire",
    "+zrem",
    "+del",
    "+wait",
    "+psubscribe",
    "+punsubscribe",
    "+unsubscribe",
];

/// The server, with the fleet's user made as the default user.
fn with_user() -> RedisServer {
    let server = server();
    let mut setuser = redis::cmd("ACL");
    setuser.arg("SETUSER").arg(RULE);
    let _: () = setuser.query(&mut raw(&server)).unwrap();
    server
}

fn url(server: &RedisServer) -> String {
    format!("redis://fleet:pw@127.0.0.1:{}/", server.port())
}

fn fleet(server: &RedisServer) -> Fleet {
    Fleet::builder(url(server))
        .config(config(1, OPEN_FOR, 60_000_000))
        .op_timeout(Duration::from_secs(2))
        .refresh(Duration::from_millis(200))
        .retry(Duration::from_millis(50))
        .build()
        .unwrap()
}

/// Whether `cmd`, sent as the fleet's user, is refused for want of a
/// permission.
fn refused(server: &RedisServer, cmd: &redis::Cmd) -> bool {
    let mut con = redis::Client::open(url(server))
        .unwrap()
        .get_connection_with_timeout(Duration::from_secs(5))
        .unwrap();
    match cmd.query::<redis::Value>(&mut con) {
        Ok(v) => panic!("{cmd:?} allowed: {v:?}"),
        Err(e) => {
            let noperm = e.code() == Some("NOPERM") || e.to_string().contains("NOPERM");
            assert!(noperm, "{cmd:?}: {e}");
            noperm
        }
    }
}

#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn a_fleet_runs_as_a_user_that_may_do_only_what_it_needs() {
    let server = with_user();
    let fleets: Vec<Fleet> = (0..3).map(|_| fleet(&server)).collect();
    let instances: Vec<RedisBreaker> = fleets.iter().map(|f| f.breaker("breaker:acl")).collect();
    trip_reject_probe_recover(&instances);
    // The watchers' pattern subscription (one pattern), as the fleet's
    // user.
    assert_eq!(common::numpat(&server), 1);
    // The config fingerprint, claimed as the fleet's user.
    assert!(common::stored(&server, "breaker:acl:config").is_some());

    // A quorum of two: the votes under `<key>:votes`.
    let voters: Vec<RedisBreaker> = (0..3)
        .map(|i| {
            RedisBreaker::builder(url(&server), "breaker:quorum")
                .config(config(1, 60_000_000, 60_000_000))
                .quorum(2)
                .quorum_id(format!("voter-{i}"))
                .op_timeout(Duration::from_secs(2))
                .build()
                .unwrap()
        })
        .collect();
    assert!(eventually(LONG, || voters.iter().all(shared)));
    let t = voters[0].acquire().unwrap();
    voters[0].release(t, Outcome::Failure);
    let votes: usize = redis::cmd("ZCARD")
        .arg("breaker:quorum:votes")
        .query(&mut raw(&server))
        .unwrap();
    assert_eq!(votes, 1, "one vote, as the fleet's user");
    assert!(voters[2].sync().is_ok());
    assert_eq!(voters[2].status(), Status::Closed, "one vote of two");
    let t = voters[1].acquire().unwrap();
    assert_eq!(voters[1].release(t, Outcome::Failure), Release::Recorded);
    // Open for a minute: no descheduling outlasts it.
    assert!(eventually(LONG, || voters
        .iter()
        .all(|v| v.status() == Status::Open)));

    // Nothing the fleet sent was refused.
    let log: Vec<redis::Value> = redis::cmd("ACL")
        .arg("LOG")
        .query(&mut raw(&server))
        .unwrap();
    assert!(log.is_empty(), "refused: {log:?}");

    // Nothing else.
    assert!(refused(&server, redis::cmd("GET").arg("other:key")));
    assert!(refused(&server, redis::cmd("SET").arg("other:key").arg(1)));
    assert!(refused(&server, &redis::cmd("FLUSHALL")));
    assert!(refused(
        &server,
        redis::cmd("CONFIG").arg("GET").arg("maxmemory")
    ));
    assert!(refused(&server, redis::cmd("KEYS").arg("*")));
    assert!(refused(
        &server,
        redis::cmd("PUBLISH").arg("other:channel").arg("x")
    ));
    assert!(refused(
        &server,
        redis::cmd("EVAL")
            .arg("return redis.call('GET', KEYS[1])")
            .arg(1)
            .arg("breaker:acl")
    ));
    // A script may touch only the keys the user may: not another through
    // a key it names (`EVALSHA` of a loaded script that reads `other:key`).
    let sha: String = redis::cmd("SCRIPT")
        .arg("LOAD")
        .arg("return redis.call('GET', 'other:key')")
        .query(&mut raw(&server))
        .unwrap();
    let mut con = redis::Client::open(url(&server))
        .unwrap()
        .get_connection()
        .unwrap();
    let e = redis::cmd("EVALSHA")
        .arg(&sha)
        .arg(0)
        .query::<redis::Value>(&mut con)
        .unwrap_err();
    assert!(
        e.to_string().contains("NOPERM") || e.to_string().contains("can't access"),
        "{e}"
    );
}
