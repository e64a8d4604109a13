//! A fleet across a failover: a primary, its replica and three Redis
//! Sentinels, all on 127.0.0.1 on free ports, each in a folder of its own,
//! all killed and reaped when the test ends (also when it fails). The
//! primary is killed (`SIGKILL`) mid-run; the fleet follows the primary the
//! sentinels promote, and with `replicas(1)` no acknowledged change is
//! lost. The loss a primary's death causes without `replicas` is counted
//! over trials (`TRIPWORD_FAILOVER_TRIALS` of each kind, default 3).

mod common;

use common::{LONG, config, eventually, free_port, raw, server, server_now, stored};
use std::io::{Read, Write};
use std::net::{Ipv4Addr, Shutdown, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use tripword::{CircuitBreaker, Outcome, Status};
use tripword_redis::server::{RedisServer, binary};
use tripword_redis::{Fleet, Mode, RedisBreaker, Release, Scope};

/// The service the sentinels watch.
const SERVICE: &str = "tripword-primary";

/// Generous: a `WAIT` on a loaded machine must not time out by accident.
const OP_TIMEOUT: Duration = Duration::from_secs(2);

/// A failover takes seconds: the limit of waits across one.
const FAILOVER: Duration = Duration::from_secs(120);

/// A redis-server in sentinel mode, with its config file in a folder of its
/// own; killed, reaped and its folder removed when dropped.
struct Sentinel {
    child: Option<Child>,
    port: u16,
    dir: PathBuf,
}

impl Sentinel {
    fn start(primary: u16) -> Sentinel {
        let mut last = None;
        for _ in 0..5 {
            match Sentinel::start_on(free_port(), primary) {
                Ok(s) => return s,
                Err(e) => last = Some(e),
            }
        }
        panic!("cannot start a sentinel: {last:?}");
    }

    fn start_on(port: u16, primary: u16) -> Result<Sentinel, String> {
        let dir =
            std::env::temp_dir().join(format!("tripword-sentinel-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        let conf = dir.join("sentinel.conf");
        std::fs::write(
            &conf,
            format!(
                "port {port}\nbind 127.0.0.1\ndir {}\n\
                 sentinel monitor {SERVICE} 127.0.0.1 {primary} 2\n\
                 sentinel down-after-milliseconds {SERVICE} 500\n\
                 sentinel failover-timeout {SERVICE} 2000\n\
                 sentinel parallel-syncs {SERVICE} 1\n",
                dir.display()
            ),
        )
        .map_err(|e| e.to_string())?;
        let child = Command::new(binary())
            .arg(&conf)
            .arg("--sentinel")
            .current_dir(&dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| e.to_string())?;
        let mut s = Sentinel {
            child: Some(child),
            port,
            dir,
        };
        let until = Instant::now() + LONG;
        loop {
            if s.ping() {
                return Ok(s);
            }
            if let Some(status) = s.child.as_mut().and_then(|c| c.try_wait().ok().flatten()) {
                s.child = None;
                return Err(format!("sentinel exited: {status}"));
            }
            if Instant::now() > until {
                return Err("sentinel did not answer".into());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn ping(&self) -> bool {
        self.connection()
            .and_then(|mut c| redis::cmd("PING").query::<String>(&mut c).ok())
            .is_some()
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    fn connection(&self) -> Option<redis::Connection> {
        let c = redis::Client::open(self.url()).ok()?;
        let con = c.get_connection_with_timeout(Duration::from_secs(5)).ok()?;
        con.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
        Some(con)
    }

    /// How many entries `SENTINEL <what> <service>` lists.
    fn count(&self, what: &str) -> usize {
        self.connection()
            .and_then(|mut c| {
                redis::cmd("SENTINEL")
                    .arg(what)
                    .arg(SERVICE)
                    .query::<Vec<redis::Value>>(&mut c)
                    .ok()
            })
            .map_or(0, |v| v.len())
    }

    /// The port of the primary it names.
    fn primary(&self) -> Option<u16> {
        let mut c = self.connection()?;
        let (_, port): (String, String) = redis::cmd("SENTINEL")
            .arg("GET-MASTER-ADDR-BY-NAME")
            .arg(SERVICE)
            .query(&mut c)
            .ok()?;
        port.parse().ok()
    }
}

impl Drop for Sentinel {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `INFO replication` of `server` as `field:value` lines.
fn replication(server: &RedisServer) -> String {
    redis::cmd("INFO")
        .arg("replication")
        .query(&mut raw(server))
        .unwrap_or_default()
}

fn field(info: &str, name: &str) -> Option<String> {
    info.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
        .map(|v| v.trim().to_owned())
}

/// Full syncs start at once (no wait for more replicas).
fn quick_sync(server: &RedisServer) {
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("repl-diskless-sync-delay")
        .arg(0)
        .query(&mut raw(server))
        .unwrap();
}

/// Makes `replica` a replica of the server on `port` and waits until it is
/// in sync.
fn replicate(replica: &RedisServer, port: u16) {
    let _: () = redis::cmd("REPLICAOF")
        .arg("127.0.0.1")
        .arg(port)
        .query(&mut raw(replica))
        .unwrap();
    assert!(
        eventually(FAILOVER, || {
            let info = replication(replica);
            field(&info, "master_link_status").as_deref() == Some("up")
                && field(&info, "master_sync_in_progress").as_deref() == Some("0")
        }),
        "the replica never synced: {}",
        replication(replica)
    );
}

/// A primary, a replica and three sentinels that agree on both.
struct Deployment {
    primary: Option<RedisServer>,
    replica: RedisServer,
    sentinels: Vec<Sentinel>,
}

impl Deployment {
    fn start() -> Deployment {
        let primary = server();
        let replica = server();
        quick_sync(&primary);
        quick_sync(&replica);
        replicate(&replica, primary.port());
        let sentinels: Vec<Sentinel> = (0..3).map(|_| Sentinel::start(primary.port())).collect();
        // Able to fail over: each knows the replica and the two others.
        assert!(
            eventually(FAILOVER, || sentinels
                .iter()
                .all(|s| s.count("REPLICAS") == 1 && s.count("SENTINELS") == 2)),
            "the sentinels never found each other"
        );
        Deployment {
            primary: Some(primary),
            replica,
            sentinels,
        }
    }

    fn sentinel_urls(&self) -> Vec<String> {
        self.sentinels.iter().map(Sentinel::url).collect()
    }

    /// Kills the primary (`SIGKILL`) and waits until every sentinel names
    /// the replica as the primary and the replica says it is one.
    fn fail_over(&mut self) {
        let mut primary = self.primary.take().expect("a primary");
        primary.stop();
        let port = self.replica.port();
        assert!(
            eventually(FAILOVER, || {
                self.sentinels.iter().all(|s| s.primary() == Some(port))
                    && field(&replication(&self.replica), "role").as_deref() == Some("master")
            }),
            "no failover to the replica"
        );
    }
}

fn fleet(d: &Deployment, replicas: u32) -> Fleet {
    // Only the settings of this URL are used: the sentinels name the host.
    Fleet::builder("redis://127.0.0.1:1/")
        .sentinel(d.sentinel_urls(), SERVICE)
        .replicas(replicas)
        .config(config(1, 1_000_000, 60_000_000))
        .op_timeout(OP_TIMEOUT)
        .refresh(Duration::from_millis(200))
        .retry(Duration::from_millis(50))
        .build()
        .unwrap()
}

fn shared(b: &RedisBreaker) -> bool {
    b.sync().is_ok() && b.mode() == Mode::Shared
}

#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn the_fleet_follows_the_new_primary() {
    follow_the_new_primary(0);
}

#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn with_replicas_the_fleet_follows_the_new_primary_and_keeps_every_acknowledged_trip() {
    follow_the_new_primary(1);
}

/// Two instances (fleets of their own) asking for `replicas`; a trip, the
/// primary killed, the replica promoted; then the fleet on the new primary:
/// the trip is there, a probe election elects one, a new trip reaches
/// both. Without `replicas` the test waits for the trip to reach the
/// replica before the kill (else it may be lost: see
/// `acknowledged_trips_lost_to_a_primary_kill`).
fn follow_the_new_primary(replicas: u32) {
    let mut d = Deployment::start();
    let (fa, fb) = (fleet(&d, replicas), fleet(&d, replicas));
    let (a, b) = (fa.breaker("failover"), fb.breaker("failover"));
    assert!(eventually(LONG, || shared(&a) && shared(&b)));

    // The async path too: one multiplexed connection, to the primary the
    // sentinels name.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let trip_async = |x: &RedisBreaker| {
        rt.block_on(async {
            let ticket = x.acquire_async().get().await.unwrap();
            assert_eq!(ticket.scope(), Scope::Shared);
            x.release_async(ticket, Outcome::Failure.into()).get().await
        })
    };

    // A trip, acknowledged by the replica before the primary's reply is
    // taken.
    assert_eq!(trip_async(&a), tripword::Release::Recorded);
    assert_eq!(a.mode(), Mode::Shared, "recorded in the shared word");
    let tripped = a.word();
    assert_eq!(a.status(), Status::Open);
    if replicas > 0 {
        assert_eq!(
            stored(&d.replica, "failover"),
            Some(tripped.to_string()),
            "acknowledged: on the replica already"
        );
    } else {
        assert!(eventually(LONG, || stored(&d.replica, "failover")
            == Some(tripped.to_string())));
    }
    assert!(eventually(LONG, || b.word() == tripped), "b sees the trip");

    let killed = Instant::now();
    d.fail_over();
    let promoted = killed.elapsed();
    // When replicas are asked for, a new one joins the new primary.
    let spare = (replicas > 0).then(|| {
        let spare = server();
        quick_sync(&d.replica);
        replicate(&spare, d.replica.port());
        spare
    });
    assert!(
        eventually(FAILOVER, || shared(&a) && shared(&b)),
        "the fleet joins the new primary"
    );
    let _ = writeln!(
        std::io::stderr(),
        "failover, replicas({replicas}): replica promoted {promoted:?} after the kill; the fleet joined it {:?} after the kill",
        killed.elapsed()
    );
    assert_eq!(
        stored(&d.replica, "failover"),
        Some(tripped.to_string()),
        "the trip survived"
    );
    assert_eq!((a.word(), b.word()), (tripped, tripped));

    // A probe election on the new primary: one of the two is elected.
    let since = server_now(&d.replica);
    assert!(eventually(LONG, || server_now(&d.replica) > since + 1_200_000));
    let (ra, rb) = (a.acquire(), b.acquire());
    let probes: Vec<_> = [&ra, &rb]
        .into_iter()
        .filter_map(|r| r.as_ref().ok())
        .collect();
    assert_eq!(probes.len(), 1, "one probe: {ra:?} {rb:?}");
    assert!(probes[0].is_probe() && probes[0].scope() == Scope::Shared);
    let (winner, probe) = match (ra, rb) {
        (Ok(t), _) => (&a, t),
        (_, Ok(t)) => (&b, t),
        _ => unreachable!(),
    };
    assert_eq!(winner.release(probe, Outcome::Success), Release::Recorded);

    // A trip after the failover, on the async path (its connection to the
    // old primary was dropped), is seen by both.
    assert!(eventually(LONG, || a.status() == Status::Closed));
    assert_eq!(trip_async(&a), tripword::Release::Recorded);
    assert_eq!(a.mode(), Mode::Shared, "recorded in the shared word");
    let tripped = a.word();
    assert_eq!(a.status(), Status::Open);
    assert!(eventually(LONG, || b.word() == tripped));
    assert_eq!(b.status(), Status::Open);
    let primary = &d.replica;
    assert_eq!(stored(primary, "failover"), Some(tripped.to_string()));
    if let Some(spare) = &spare {
        assert_eq!(stored(spare, "failover"), Some(tripped.to_string()));
    }
}

#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn an_instance_asking_for_more_replicas_than_answer_stays_local() {
    let primary = server();
    quick_sync(&primary);
    let b = RedisBreaker::builder(primary.url(), "lonely")
        .config(config(1, 60_000_000, 60_000_000))
        .replicas(1)
        .op_timeout(OP_TIMEOUT)
        .refresh(Duration::from_millis(100))
        .retry(Duration::from_millis(50))
        .build()
        .unwrap();
    // The word reads, but no claim is acknowledged: not joined.
    assert!(b.sync().is_ok());
    assert_eq!(b.mode(), Mode::Local);
    let ticket = b.acquire().unwrap();
    assert_eq!(ticket.scope(), Scope::Local);
    assert_eq!(b.release(ticket, Outcome::Success), Release::Recorded);
    // A replica comes: the instance joins, and its changes are acknowledged.
    let replica = server();
    replicate(&replica, primary.port());
    assert!(eventually(LONG, || shared(&b)));
    let ticket = b.acquire().unwrap();
    assert_eq!(ticket.scope(), Scope::Shared);
    assert_eq!(b.release(ticket, Outcome::Failure), Release::Recorded);
    assert_eq!(stored(&replica, "lonely"), Some(b.word().to_string()));
    // The replica goes: the next change is not acknowledged; it is
    // reported as such, and the instance goes local.
    drop(replica);
    assert!(eventually(LONG, || {
        field(&replication(&primary), "connected_slaves").as_deref() == Some("0")
    }));
    b.force_close().unwrap_err();
    assert_eq!(b.mode(), Mode::Local);
}

/// A quorum through a failover: with `replicas(1)` a vote is on the replica
/// before it counts, so a vote cast on the old primary still counts on the
/// promoted replica. Instance `a` votes, the primary is killed, and `b`'s
/// vote on the new primary meets `a`'s there: the fleet trips, once.
#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn with_replicas_a_quorums_votes_survive_a_failover() {
    let mut d = Deployment::start();
    let voter = |id: &str| {
        // Only the settings of this URL are used: the sentinels name the host.
        RedisBreaker::builder("redis://127.0.0.1:1/", "quorum-failover")
            .sentinel(d.sentinel_urls(), SERVICE)
            .replicas(1)
            .quorum(2)
            .quorum_id(id)
            .config(config(1, 60_000_000, 60_000_000))
            .op_timeout(OP_TIMEOUT)
            .refresh(Duration::from_millis(200))
            .retry(Duration::from_millis(50))
            .build()
            .unwrap()
    };
    let (a, b) = (voter("a"), voter("b"));
    assert!(eventually(LONG, || shared(&a) && shared(&b)));
    let ticket = a.acquire().unwrap();
    assert_eq!(a.release(ticket, Outcome::Failure), Release::Recorded);
    assert_eq!(a.mode(), Mode::Shared, "a's vote acknowledged");
    assert_eq!(
        b.status(),
        Status::Closed,
        "one vote of two: the fleet is closed"
    );

    d.fail_over();
    // A new replica joins the new primary (with none, no claim is
    // acknowledged and the instances stay local).
    let spare = server();
    quick_sync(&d.replica);
    replicate(&spare, d.replica.port());
    assert!(
        eventually(FAILOVER, || shared(&a) && shared(&b)),
        "both rejoin on the promoted replica"
    );
    let ticket = b.acquire().unwrap();
    assert_eq!(ticket.scope(), Scope::Shared);
    assert_eq!(b.release(ticket, Outcome::Failure), Release::Recorded);
    let word = stored(&d.replica, "quorum-failover").expect("the fleet tripped");
    let snap = tripword::word::Snapshot::decode::<tripword::W64>(word.parse().unwrap()).unwrap();
    assert!(
        matches!(snap.state, tripword::word::State::Open { trips: 1, .. }),
        "{snap:?}"
    );
    assert!(eventually(LONG, || a.status() == Status::Open
        && b.status() == Status::Open));
}

/// A vote is a change like the others: with `replicas(1)` it counts only
/// once a replica acknowledged it (a failover would lose it otherwise), and
/// a vote no replica acknowledged is an error that sends the instance
/// local. A quorum of 3, so that neither vote here is enough to trip.
#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn with_replicas_a_vote_counts_only_once_acknowledged() {
    let primary = server();
    let replica = server();
    quick_sync(&primary);
    replicate(&replica, primary.port());
    let voter = |id: &str| {
        RedisBreaker::builder(primary.url(), "voters")
            .config(config(1, 60_000_000, 60_000_000))
            .quorum(3)
            .quorum_id(id)
            .replicas(1)
            .op_timeout(OP_TIMEOUT)
            .refresh(Duration::from_millis(100))
            .retry(Duration::from_secs(60))
            .build()
            .unwrap()
    };
    let (a, b) = (voter("a"), voter("b"));
    assert!(eventually(LONG, || shared(&a) && shared(&b)));
    let votes = |server: &RedisServer| -> Vec<String> {
        redis::cmd("ZRANGE")
            .arg("voters:votes")
            .arg(0)
            .arg(-1)
            .query(&mut raw(server))
            .unwrap()
    };
    // Acknowledged: the vote is on the replica too.
    let ticket = a.acquire().unwrap();
    assert_eq!(a.release(ticket, Outcome::Failure), Release::Recorded);
    assert_eq!(a.status(), Status::Open, "a's own breaker tripped");
    assert_eq!(a.mode(), Mode::Shared);
    assert!(eventually(LONG, || votes(&replica) == ["a"]));
    // The replica goes: b's vote reaches the primary only, is not
    // acknowledged, and b goes local.
    drop(replica);
    assert!(eventually(LONG, || {
        field(&replication(&primary), "connected_slaves").as_deref() == Some("0")
    }));
    let ticket = b.acquire().unwrap();
    b.release(ticket, Outcome::Failure);
    assert_eq!(b.mode(), Mode::Local, "an unacknowledged vote is an error");
    assert_eq!(votes(&primary), ["a", "b"], "written, not acknowledged");
    assert_eq!(
        stored(&primary, "voters"),
        None,
        "no trip: the word never written"
    );
}

/// A TCP proxy on the replication link: forwards both ways until `hold`
/// is set, then drops what the primary sends (a link that stalls: the
/// primary's changes go nowhere, as in a partition).
struct Link {
    port: u16,
    hold: Arc<AtomicBool>,
}

impl Link {
    fn start(target: u16) -> Link {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let port = listener.local_addr().unwrap().port();
        let hold = Arc::new(AtomicBool::new(false));
        let held = hold.clone();
        std::thread::spawn(move || {
            for replica in listener.incoming() {
                let Ok(replica) = replica else { return };
                let Ok(primary) = TcpStream::connect((Ipv4Addr::LOCALHOST, target)) else {
                    return;
                };
                let (mut r_read, mut r_write) = (replica.try_clone().unwrap(), replica);
                let (mut p_read, mut p_write) = (primary.try_clone().unwrap(), primary);
                std::thread::spawn(move || {
                    let _ = std::io::copy(&mut r_read, &mut p_write);
                    let _ = p_write.shutdown(Shutdown::Both);
                });
                let held = held.clone();
                std::thread::spawn(move || {
                    let mut buf = [0u8; 64 * 1024];
                    loop {
                        let n = match p_read.read(&mut buf) {
                            Ok(0) | Err(_) => break,
                            Ok(n) => n,
                        };
                        if !held.load(Ordering::SeqCst) && r_write.write_all(&buf[..n]).is_err() {
                            break;
                        }
                    }
                    let _ = r_write.shutdown(Shutdown::Both);
                });
            }
        });
        Link { port, hold }
    }
}

/// What trials of one kind found.
#[derive(Debug, Default)]
struct Tally {
    trials: u32,
    acknowledged: u32,
    lost: u32,
}

/// One trial: a primary and its replica (through a [`Link`] that stalls
/// before the trip when `stall`), a breaker asking for `replicas`; a trip,
/// then at once `SIGKILL` to the primary, and a look at the replica (the
/// server a failover would promote): was the acknowledged trip lost?
fn trial(replicas: u32, stall: bool, tally: &mut Tally) {
    let mut primary = server();
    let replica = server();
    quick_sync(&primary);
    let link = Link::start(primary.port());
    replicate(&replica, link.port);
    let breaker = RedisBreaker::builder(primary.url(), "trial")
        .config(config(1, 60_000_000, 60_000_000))
        .replicas(replicas)
        .op_timeout(OP_TIMEOUT)
        .refresh(Duration::from_secs(60))
        .pubsub(false)
        .build()
        .unwrap();
    assert!(eventually(LONG, || shared(&breaker)));
    if stall {
        link.hold.store(true, Ordering::SeqCst);
    }
    let ticket = breaker.acquire().unwrap();
    let release = breaker.release(ticket, Outcome::Failure);
    let word = breaker.word();
    primary.stop();
    tally.trials += 1;
    if release == Release::Recorded {
        tally.acknowledged += 1;
        if stored(&replica, "trial") != Some(word.to_string()) {
            tally.lost += 1;
        }
    }
}

fn trials() -> u32 {
    std::env::var("TRIPWORD_FAILOVER_TRIALS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3)
}

#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn acknowledged_trips_lost_to_a_primary_kill() {
    let n = trials();
    let mut report = String::new();
    for (replicas, stall) in [(0, false), (0, true), (1, false), (1, true)] {
        let mut tally = Tally::default();
        for _ in 0..n {
            trial(replicas, stall, &mut tally);
        }
        let link = if stall { "stalled" } else { "live" };
        report += &format!(
            "replicas({replicas}), {link} replication link: {} trials, {} acknowledged, {} lost\n",
            tally.trials, tally.acknowledged, tally.lost
        );
        if replicas == 1 {
            assert_eq!(tally.lost, 0, "an acknowledged trip was lost: {tally:?}");
        }
        if stall {
            // Nothing reaches the replica: acknowledged only without
            // `replicas`, and then always lost.
            let expect = if replicas == 0 { tally.trials } else { 0 };
            assert_eq!(
                (tally.acknowledged, tally.lost),
                (expect, expect),
                "{tally:?}"
            );
        }
    }
    let _ = writeln!(std::io::stderr(), "{report}");
}

/// Measurement, not a check (`--ignored`): the median time of a force
/// (a load and a compare-and-set) with and without `replicas(1)`, on a
/// primary and a replica of this machine.
#[test]
#[ignore = "a measurement: run with --ignored --nocapture"]
fn the_cost_of_replicas() {
    let primary = server();
    let replica = server();
    quick_sync(&primary);
    replicate(&replica, primary.port());
    let mut report = String::new();
    for replicas in [0, 1] {
        let b = RedisBreaker::builder(primary.url(), format!("cost{replicas}"))
            .replicas(replicas)
            .op_timeout(OP_TIMEOUT)
            .build()
            .unwrap();
        assert!(eventually(LONG, || shared(&b)));
        let mut took: Vec<Duration> = (0..400)
            .map(|i| {
                let start = Instant::now();
                let done = if i % 2 == 0 {
                    b.force_open()
                } else {
                    b.force_close()
                };
                done.unwrap();
                start.elapsed()
            })
            .collect();
        took.sort();
        report += &format!(
            "replicas({replicas}): force (load + compare-and-set) median {:?}, p90 {:?}\n",
            took[took.len() / 2],
            took[took.len() * 9 / 10]
        );
    }
    let _ = writeln!(std::io::stderr(), "{report}");
}

/// A switch of primary with the old one alive (`SENTINEL FAILOVER`): the
/// fleet follows the sentinels' announcement (`+switch-master`) before any
/// call meets an error on the old primary, which answers (as a primary)
/// until Sentinel makes it a replica. Prints how long after the sentinels
/// named the new primary the fleet read it, and how many calls failed or
/// found the instance fallen back to its local breaker meanwhile (the
/// watcher's subscription on the old primary failing).
#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn a_switch_is_followed_before_the_next_error() {
    let d = Deployment::start();
    let old = d.primary.as_ref().expect("a primary");
    let fa = fleet(&d, 0);
    let a = fa.breaker("switch");
    assert!(eventually(LONG, || shared(&a)));
    let before = a.word();

    // A manual failover, retried while the sentinels find the replica not
    // ready yet.
    assert!(
        eventually(FAILOVER, || d.sentinels[0]
            .connection()
            .and_then(|mut c| redis::cmd("SENTINEL")
                .arg("FAILOVER")
                .arg(SERVICE)
                .query::<String>(&mut c)
                .ok())
            .is_some()),
        "the sentinels refused the failover"
    );
    let new = d.replica.port();
    assert!(
        eventually(FAILOVER, || d.sentinels[0].primary() == Some(new)),
        "no switch to the replica"
    );
    let named = Instant::now();

    // An instance on the new primary alone trips the word there.
    let direct = RedisBreaker::builder(d.replica.url(), "switch")
        .config(config(1, 1_000_000, 60_000_000))
        .op_timeout(OP_TIMEOUT)
        .build()
        .unwrap();
    assert!(eventually(LONG, || shared(&direct)));
    let t = direct.acquire().unwrap();
    assert_eq!(direct.release(t, Outcome::Failure), Release::Recorded);
    let tripped = direct.word();
    assert_ne!(tripped, before);

    // The fleet's calls read the word until they read the new primary's.
    let (mut errors, mut local) = (0, 0);
    let mut demoted_first = false;
    assert!(
        eventually(FAILOVER, || {
            if a.mode() == Mode::Local {
                local += 1;
            }
            if a.sync().is_err() {
                errors += 1;
                return false;
            }
            if a.word() != tripped {
                return false;
            }
            demoted_first = field(&replication(old), "role").as_deref() != Some("master");
            true
        }),
        "the fleet never read the new primary"
    );
    let followed = named.elapsed();
    let _ = writeln!(
        std::io::stderr(),
        "switch with the old primary alive: the fleet read the new primary {followed:?} after the sentinels named it; meanwhile {errors} calls failed, {local} found the instance local"
    );
    // Followed on the announcement, with no error; unless this test was
    // held up so long that Sentinel made the old primary a replica (it
    // closes its clients' connections) before the fleet read the new one.
    assert!(
        (errors == 0 && local == 0) || demoted_first,
        "{errors} calls failed, {local} found the instance local, on the old primary while it was still one"
    );
    assert_eq!(a.mode(), Mode::Shared);
}

/// Subscriptions held on the sentinels (`CLIENT LIST`'s `sub=` fields).
fn sentinel_subscriptions(d: &Deployment) -> usize {
    d.sentinels
        .iter()
        .filter_map(|s| {
            let mut c = s.connection()?;
            redis::cmd("CLIENT")
                .arg("LIST")
                .query::<String>(&mut c)
                .ok()
        })
        .flat_map(|list| {
            list.lines()
                .filter_map(|l| {
                    l.split(' ')
                        .find_map(|f| f.strip_prefix("sub="))
                        .and_then(|n| n.parse::<usize>().ok())
                })
                .collect::<Vec<_>>()
        })
        .sum()
}

/// A fleet that follows sentinels holds one subscription to their
/// announcements, on one of them; it ends with the fleet.
#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn the_announcements_are_listened_to_while_the_fleet_lives() {
    let d = Deployment::start();
    let f = fleet(&d, 0);
    let b = f.breaker("listen");
    assert!(eventually(LONG, || shared(&b)));
    assert!(
        eventually(LONG, || sentinel_subscriptions(&d) == 1),
        "one subscription: {}",
        sentinel_subscriptions(&d)
    );
    drop((f, b));
    assert!(
        eventually(LONG, || sentinel_subscriptions(&d) == 0),
        "the subscription ended with the fleet"
    );
}
