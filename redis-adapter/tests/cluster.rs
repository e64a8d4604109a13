//! A fleet on a real Redis Cluster of three primaries (started here, on
//! free ports, killed and reaped when the test ends, also on a panic):
//! the words spread over the nodes by slot, two fleets share each breaker
//! (a trip reaches the other by sharded pub/sub on the key's node, one
//! probe is elected fleet-wide), and a slot migrated by hand under running
//! instances (`ASK` windows included) loses no transition.

mod common;

use common::*;
use std::collections::HashSet;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Barrier;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::{Duration, Instant};
use tripword::kit::Reply;
use tripword::word::{Snapshot, State};
use tripword::{CircuitBreaker, Outcome, Status, ValidConfig, W64};
use tripword_redis::{Fleet, Mode, RedisBreaker, Release, server};

/// `redis-cli`: `$TRIPWORD_REDIS_CLI`, or the one on the `PATH`.
fn cli() -> String {
    std::env::var("TRIPWORD_REDIS_CLI").unwrap_or_else(|_| "redis-cli".into())
}

fn runs(binary: &str) -> bool {
    Command::new(binary)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Three primaries in one cluster, every slot served; killed and reaped on
/// drop.
struct LocalCluster {
    children: Vec<Child>,
    ports: Vec<u16>,
    dir: PathBuf,
}

impl Drop for LocalCluster {
    fn drop(&mut self) {
        for child in &mut self.children {
            let _ = child.kill();
            let _ = child.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A fresh cluster. Its tests are ignored unless the build found
/// `redis-server` and `redis-cli` (`build.rs`); one that runs without them
/// fails.
fn cluster(name: &str) -> LocalCluster {
    cluster_of(name, 0)
}

/// A fresh cluster of three primaries with `replicas` replicas each.
fn cluster_of(name: &str, replicas: usize) -> LocalCluster {
    for binary in [server::binary(), cli()] {
        assert!(
            runs(&binary),
            "`{binary}` is not runnable: this test needs a real Redis Cluster (apt-get install redis-server redis-tools)"
        );
    }
    // `tripword-redis-<pid>-...`, as `RedisServer`'s: verification/reap-redis.sh
    // stops the servers of a test process that is gone, by that pid.
    let dir = std::env::temp_dir().join(format!(
        "tripword-redis-{}-cluster-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut cluster = LocalCluster {
        children: Vec::new(),
        ports: Vec::new(),
        dir,
    };
    let nodes = 3 * (1 + replicas);
    for _ in 0..nodes {
        // A port free when picked may be taken before the node binds it
        // (by another test's node, or as the local end of a connection):
        // the node then exits, or a stranger answers on it. Only our own
        // process answering counts; otherwise try other ports.
        let mut tries = Vec::new();
        let (child, port) = loop {
            let (port, bus) = (listen_port(), listen_port());
            if port == bus {
                continue;
            }
            let mut child = cluster.spawn_node(port, bus, replicas);
            if answers_as(&mut child, port) {
                break (child, port);
            }
            let _ = child.kill();
            let _ = child.wait();
            tries.push(port);
            assert!(
                tries.len() < 8,
                "no node started on ports {tries:?}: {}",
                cluster.log(port)
            );
        };
        cluster.children.push(child);
        cluster.ports.push(port);
    }
    let mut create = Command::new(cli());
    create.arg("--cluster").arg("create");
    for &port in &cluster.ports {
        create.arg(format!("127.0.0.1:{port}"));
    }
    let out = create
        .args(["--cluster-replicas", &replicas.to_string()])
        .arg("--cluster-yes")
        .stdin(Stdio::null())
        .output()
        .expect("run redis-cli --cluster create");
    assert!(
        out.status.success(),
        "redis-cli --cluster create: {}\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // Every node sees every slot served by the three.
    let ports = cluster.ports.clone();
    assert!(
        eventually(Duration::from_secs(60), || ports.iter().all(|&p| {
            let info: String = redis::cmd("CLUSTER")
                .arg("INFO")
                .query(&mut node(p))
                .unwrap_or_default();
            let replication: String = redis::cmd("INFO")
                .arg("replication")
                .query(&mut node(p))
                .unwrap_or_default();
            info.contains("cluster_state:ok")
                && info.contains(&format!("cluster_known_nodes:{nodes}"))
                && (replication.contains("role:master")
                    || replication.contains("master_link_status:up"))
        })),
        "the cluster is up"
    );
    cluster
}

impl LocalCluster {
    /// A replica of the primary on `port`.
    fn replica_of(&self, port: u16) -> u16 {
        *self
            .ports
            .iter()
            .find(|&&p| {
                let role: Vec<redis::Value> = redis::cmd("ROLE").query(&mut node(p)).unwrap();
                let role: (String, String, u16) = redis::from_redis_value(redis::Value::Array(
                    role.into_iter().take(3).collect(),
                ))
                .unwrap_or_default();
                role.0 == "slave" && role.2 == port
            })
            .expect("a replica")
    }

    /// The last lines of the log of the node on `port`.
    fn log(&self, port: u16) -> String {
        let log =
            std::fs::read_to_string(self.dir.join(format!("node-{port}.log"))).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    }

    /// Sends `sig` (`-STOP`, `-CONT`) to the node on `port`.
    fn signal(&self, port: u16, sig: &str) {
        let i = self.ports.iter().position(|&p| p == port).unwrap();
        let pid = self.children[i].id().to_string();
        let status = Command::new("kill").args([sig, &pid]).status().unwrap();
        assert!(status.success(), "kill {sig} {pid}");
    }
}

impl LocalCluster {
    /// Starts a cluster node on `port` with its bus on `bus`.
    fn spawn_node(&self, port: u16, bus: u16, replicas: usize) -> Child {
        Command::new(server::binary())
            .args(["--port", &port.to_string()])
            .args(["--bind", "127.0.0.1"])
            .args(["--cluster-enabled", "yes"])
            .args(["--cluster-port", &bus.to_string()])
            .arg("--cluster-config-file")
            .arg(self.dir.join(format!("nodes-{port}.conf")))
            // Without replicas, no failover: a node paused for a while is
            // not declared failed. With replicas, a failover election that
            // gets no votes is tried again after four node timeouts.
            .args([
                "--cluster-node-timeout",
                if replicas == 0 { "60000" } else { "5000" },
            ])
            .arg("--logfile")
            .arg(self.dir.join(format!("node-{port}.log")))
            .args(["--save", ""])
            .args(["--appendonly", "no"])
            .arg("--dir")
            .arg(&self.dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start redis-server")
    }
}

/// Whether `child` itself answers on `port` (its `process_id`), waiting up
/// to [`LONG`]; false as soon as it has exited (its port was taken).
fn answers_as(child: &mut Child, port: u16) -> bool {
    let pid = format!("process_id:{}\r\n", child.id());
    let until = Instant::now() + LONG;
    while Instant::now() < until {
        if child.try_wait().ok().flatten().is_some() {
            return false;
        }
        let info: Option<String> = redis::Client::open(url(port))
            .and_then(|c| c.get_connection_with_timeout(Duration::from_secs(1)))
            .and_then(|mut c| redis::cmd("INFO").arg("server").query(&mut c))
            .ok();
        if info.is_some_and(|i| i.contains(&pid)) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

fn url(port: u16) -> String {
    format!("redis://127.0.0.1:{port}/")
}

/// A plain connection to one node (a node that does not answer fails the
/// test, it does not hang it).
fn node(port: u16) -> redis::Connection {
    let con = redis::Client::open(url(port))
        .unwrap()
        .get_connection_with_timeout(Duration::from_secs(5))
        .unwrap();
    con.set_read_timeout(Some(LONG)).unwrap();
    con.set_write_timeout(Some(LONG)).unwrap();
    con
}

impl LocalCluster {
    /// A fleet on the cluster, through all three nodes.
    fn fleet(&self, config: ValidConfig<W64>, refresh: Duration) -> Fleet {
        Fleet::builder(url(self.ports[0]))
            .cluster(self.ports[1..].iter().map(|&p| url(p)))
            .config(config)
            .op_timeout(Duration::from_secs(2))
            .refresh(refresh)
            .retry(Duration::from_millis(50))
            .build()
            .unwrap()
    }

    fn slot(&self, key: &str) -> u16 {
        redis::cmd("CLUSTER")
            .arg("KEYSLOT")
            .arg(key)
            .query(&mut node(self.ports[0]))
            .unwrap()
    }

    fn id(&self, port: u16) -> String {
        redis::cmd("CLUSTER")
            .arg("MYID")
            .query(&mut node(port))
            .unwrap()
    }

    /// The port of the node `port` says owns `slot`.
    fn owner_as_seen_by(&self, port: u16, slot: u16) -> u16 {
        self.owner_if_seen_by(port, slot)
            .unwrap_or_else(|| panic!("no node owns slot {slot}"))
    }

    /// The port of the node `port` says owns `slot`, if it names one: while
    /// a failover or a migration is under way, a node's map may name none
    /// for a moment.
    fn owner_if_seen_by(&self, port: u16, slot: u16) -> Option<u16> {
        let ranges: Vec<redis::Value> = redis::cmd("CLUSTER")
            .arg("SLOTS")
            .query(&mut node(port))
            .unwrap();
        for range in ranges {
            let (start, end, primary, ..): (u16, u16, (String, u16, String)) =
                redis::from_redis_value(trim(range, 3)).unwrap();
            if (start..=end).contains(&slot) {
                return Some(primary.1);
            }
        }
        None
    }

    /// The lowest slot the node on `port` owns.
    fn first_slot_of(&self, port: u16) -> u16 {
        let ranges: Vec<redis::Value> = redis::cmd("CLUSTER")
            .arg("SLOTS")
            .query(&mut node(self.ports[0]))
            .unwrap();
        ranges
            .into_iter()
            .filter_map(|range| {
                let (start, _, primary, ..): (u16, u16, (String, u16, String)) =
                    redis::from_redis_value(trim(range, 3)).unwrap();
                (primary.1 == port).then_some(start)
            })
            .min()
            .expect("the node owns slots")
    }

    fn owner(&self, key: &str) -> u16 {
        self.owner_as_seen_by(self.ports[0], self.slot(key))
    }

    /// The word under `key` on its node.
    fn stored(&self, key: &str) -> Option<u64> {
        let v: Option<String> = redis::cmd("GET")
            .arg(key)
            .query(&mut node(self.owner(key)))
            .unwrap();
        v.map(|s| s.parse().unwrap())
    }

    /// `PUBSUB SHARDNUMSUB channel` on the node at `port`.
    fn shard_subscribers(&self, port: u16, channel: &str) -> i64 {
        let (_, n): (String, i64) = redis::cmd("PUBSUB")
            .arg("SHARDNUMSUB")
            .arg(channel)
            .query(&mut node(port))
            .unwrap();
        n
    }
}

/// The first `n` items of a `CLUSTER SLOTS` range (start, end, primary;
/// the replicas dropped), the primary's own first three.
fn trim(range: redis::Value, n: usize) -> redis::Value {
    let redis::Value::Array(mut items) = range else {
        panic!("a CLUSTER SLOTS range is an array");
    };
    items.truncate(n);
    if let Some(redis::Value::Array(primary)) = items.get_mut(2) {
        primary.truncate(3);
    }
    redis::Value::Array(items)
}

#[test]
#[cfg_attr(
    not(all(tripword_redis_server, tripword_redis_cli)),
    ignore = "needs redis-server and redis-cli on PATH (apt-get install redis-server redis-tools)"
)]
fn keys_spread_over_the_nodes_and_two_fleets_share_each_breaker() {
    let cluster = cluster("share");
    let cfg = config(1, 300_000, 10_000_000);
    let a = cluster.fleet(cfg, Duration::from_millis(200));
    // Pub/sub alone: the other fleet's watcher reads the words only when
    // it subscribes.
    let b = cluster.fleet(cfg, Duration::from_secs(3_600));
    let keys = ["payments", "search", "orders", "users", "carts", "mail"];
    let owners: HashSet<u16> = keys.iter().map(|k| cluster.owner(k)).collect();
    let slots: HashSet<u16> = keys.iter().map(|k| cluster.slot(k)).collect();
    assert_eq!(slots.len(), keys.len(), "one slot a key");
    assert_eq!(owners.len(), 3, "every node owns some of the keys");

    for key in keys {
        let (ba, bb) = (a.breaker(key), b.breaker(key));
        assert_eq!((ba.mode(), bb.mode()), (Mode::Shared, Mode::Shared));
        let owner = cluster.owner(key);
        assert_eq!(ba.channel(), format!("tripword:{{{key}}}"));
        assert_eq!(cluster.slot(ba.channel()), cluster.slot(key));
        // Both watchers subscribe on the key's node, and only there.
        assert!(
            eventually(LONG, || cluster.shard_subscribers(owner, ba.channel()) == 2),
            "{key}: both fleets subscribed on its node"
        );
        for &port in &cluster.ports {
            if port != owner {
                assert_eq!(cluster.shard_subscribers(port, ba.channel()), 0);
            }
        }
        let published = bb.stats().published;

        // A failure in fleet `a` trips the breaker; the word is on the
        // key's node, and fleet `b` learns it by sharded pub/sub.
        let t = ba.acquire().expect("closed");
        ba.release(t, Outcome::Failure);
        assert_eq!(ba.status(), Status::Open);
        assert_eq!(cluster.stored(key), Some(ba.word()));
        assert!(
            eventually(LONG, || bb.status() == Status::Open),
            "{key}: fleet b sees the trip"
        );
        // By pub/sub (the watcher's read after subscribing may bring the
        // word first; the message comes all the same).
        assert!(
            eventually(LONG, || bb.stats().published > published),
            "{key}: by pub/sub"
        );

        // Once open time is over, one probe is elected over both fleets.
        let probes = AtomicU32::new(0);
        let until = Instant::now() + LONG;
        while probes.load(Ordering::SeqCst) == 0 {
            assert!(Instant::now() < until, "{key}: a probe is elected");
            let barrier = Barrier::new(8);
            std::thread::scope(|s| {
                for i in 0..8 {
                    let (breaker, barrier, probes) =
                        (if i % 2 == 0 { &ba } else { &bb }, &barrier, &probes);
                    s.spawn(move || {
                        barrier.wait();
                        if let Ok(t) = breaker.acquire() {
                            assert!(t.is_probe(), "only a probe is admitted");
                            // Not released: the probe holds the breaker,
                            // nobody else may be elected meanwhile.
                            probes.fetch_add(1, Ordering::SeqCst);
                        }
                    });
                }
            });
            assert!(probes.load(Ordering::SeqCst) <= 1, "{key}: one probe");
            std::thread::sleep(Duration::from_millis(20));
        }
        // The probe's success closes the breaker for both fleets.
        let word = cluster.stored(key).unwrap();
        let state = Snapshot::decode::<W64>(word).unwrap().state;
        assert!(matches!(state, State::Probing { .. }), "{key}: {state:?}");
        bb.force_close().unwrap();
        assert!(eventually(LONG, || ba.status() == Status::Closed));
        assert!(eventually(LONG, || bb.status() == Status::Closed));
    }

    // A breaker built alone on the cluster (through another node) shares
    // the word too, and learns of a change by pub/sub.
    let alone = RedisBreaker::builder(url(cluster.ports[2]), "payments")
        .cluster([url(cluster.ports[0])])
        .config(cfg)
        .op_timeout(Duration::from_secs(2))
        .refresh(Duration::from_secs(3_600))
        .build()
        .unwrap();
    assert_eq!(alone.mode(), Mode::Shared);
    assert_eq!(Some(alone.word()), cluster.stored("payments"));
    assert!(eventually(LONG, || cluster
        .shard_subscribers(cluster.owner("payments"), alone.channel())
        == 3));
    a.breaker("payments").force_open().unwrap();
    assert!(eventually(LONG, || alone.status() == Status::Open));
    // The message comes (its subscription was in place before the force),
    // though the watcher's read after subscribing may bring the word first.
    assert!(eventually(LONG, || alone.stats().published >= 1));
}

/// The slot of `key` moves from its node to another by hand, the way
/// `redis-cli --cluster reshard` does it, with pauses between the steps:
/// the slot `MIGRATING`/`IMPORTING` with the key still on the source, then
/// the key moved (requests `ASK`ed to the target), then the slot given to
/// the target. Two fleets keep tripping, probing and closing the breaker
/// all along.
#[test]
#[cfg_attr(
    not(all(tripword_redis_server, tripword_redis_cli)),
    ignore = "needs redis-server and redis-cli on PATH (apt-get install redis-server redis-tools)"
)]
fn a_slot_migrating_under_running_fleets_loses_no_transition() {
    let cluster = cluster("migrate");
    let key = "migrating";
    under_churn(&cluster, key, |progress, transitions| {
        progress(12);
        let started = transitions();
        let (source, slot) = (cluster.owner(key), cluster.slot(key));
        let target = *cluster.ports.iter().find(|&&p| p != source).unwrap();
        let (source_id, target_id) = (cluster.id(source), cluster.id(target));
        let setslot = |port: u16, how: &str, id: &str| {
            let () = redis::cmd("CLUSTER")
                .arg("SETSLOT")
                .arg(slot)
                .arg(how)
                .arg(id)
                .query(&mut node(port))
                .unwrap();
        };
        setslot(target, "IMPORTING", &source_id);
        setslot(source, "MIGRATING", &target_id);
        progress(6);
        let migrating = transitions();
        let keys: Vec<String> = redis::cmd("CLUSTER")
            .arg("GETKEYSINSLOT")
            .arg(slot)
            .arg(100)
            .query(&mut node(source))
            .unwrap();
        assert!(keys.contains(&key.to_owned()));
        let () = redis::cmd("MIGRATE")
            .arg("127.0.0.1")
            .arg(target)
            .arg("")
            .arg(0)
            .arg(5_000)
            .arg("KEYS")
            .arg(&keys)
            .query(&mut node(source))
            .unwrap();
        // The key is on the target, the slot still the source's: every
        // operation is `ASK`ed there.
        progress(6);
        let asked = transitions();
        for &port in [target, source].iter().chain(
            cluster
                .ports
                .iter()
                .filter(|&&p| p != source && p != target),
        ) {
            setslot(port, "NODE", &target_id);
        }
        assert!(
            eventually(LONG, || cluster
                .ports
                .iter()
                .all(|&p| cluster.owner_if_seen_by(p, slot) == Some(target))),
            "every node gives the slot to the target"
        );
        let moved = Instant::now();
        let channel = format!("tripword:{{{key}}}");
        assert!(
            eventually(LONG, || cluster.shard_subscribers(target, &channel) == 2),
            "both watchers subscribed on the new node"
        );
        let resubscribed = moved.elapsed();
        progress(12);
        eprintln!(
            "slot {slot} moved {source} -> {target}: {} transitions while MIGRATING with the key on the source, {} with the key on the target (ASK), {} after; both watchers subscribed on the target {:?} after every node gave it the slot",
            migrating - started,
            asked - migrating,
            transitions() - asked,
            resubscribed,
        );
        target
    });
}

/// `redis-cli --cluster reshard` itself, run while two fleets keep
/// tripping, probing and closing a breaker: it moves the lowest slots of
/// the key's node, the key's slot among them, to another node (for each
/// slot `SETSLOT IMPORTING`/`MIGRATING`, `MIGRATE` of its keys, `SETSLOT
/// NODE` on every node, as the tool does it), and no transition is lost or
/// reported twice, no instance falls back to its local breaker.
#[test]
#[cfg_attr(
    not(all(tripword_redis_server, tripword_redis_cli)),
    ignore = "needs redis-server and redis-cli on PATH (apt-get install redis-server redis-tools)"
)]
fn redis_cli_reshard_under_running_fleets_loses_no_transition() {
    let cluster = cluster("reshard");
    let source = cluster.ports[1];
    let first = cluster.first_slot_of(source);
    // A key within the first 32 slots of its node, so that the reshard
    // moves few slots (the tool takes a node's slots from its lowest up).
    let key = (0..)
        .map(|i| format!("reshard-{i}"))
        .find(|k| (first..first + 32).contains(&cluster.slot(k)))
        .unwrap();
    let moved = cluster.slot(&key) - first + 1;
    assert_eq!(cluster.owner(&key), source);
    under_churn(&cluster, &key, |progress, transitions| {
        progress(12);
        let before = transitions();
        let target = cluster.ports[0];
        let output = Command::new(cli())
            .arg("--cluster")
            .arg("reshard")
            .arg(format!("127.0.0.1:{source}"))
            .args(["--cluster-from", &cluster.id(source)])
            .args(["--cluster-to", &cluster.id(target)])
            .args(["--cluster-slots", &moved.to_string()])
            .arg("--cluster-yes")
            .stdin(Stdio::null())
            .output()
            .expect("run redis-cli --cluster reshard");
        assert!(
            output.status.success(),
            "redis-cli --cluster reshard: {}\n{}",
            output.status,
            String::from_utf8_lossy(&output.stdout)
        );
        let during = transitions() - before;
        let slot = cluster.slot(&key);
        assert!(
            eventually(LONG, || cluster
                .ports
                .iter()
                .all(|&p| cluster.owner_if_seen_by(p, slot) == Some(target))),
            "every node gives the key's slot to the target"
        );
        progress(12);
        eprintln!(
            "redis-cli --cluster reshard moved {moved} slots ({slot} among them) {source} -> {target}: {during} transitions while it ran"
        );
        target
    });
}

/// Sets its flag when dropped: the workers of a scope stop also when an
/// assertion fails in it (the scope waits for them before it unwinds).
struct StopOnDrop<'a>(&'a AtomicBool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// Two fleets, two threads each, keep tripping, probing and closing the
/// breaker under `key` while `change` runs: it is handed a wait for more
/// transitions and their count so far, and returns the node that owns the
/// key after it. Then both
/// fleets must change the word again and be subscribed on that node; and
/// every transition was reported once (the counters are `1..=` the stored
/// word's), no instance fell back to its local breaker, the mirrors agree.
fn under_churn(
    cluster: &LocalCluster,
    key: &str,
    change: impl FnOnce(&dyn Fn(usize), &dyn Fn() -> usize) -> u16,
) {
    let cfg = config(2, 20_000, 5_000_000);
    let logs = [Recorder::default(), Recorder::default()];
    // A generous operation timeout: the check is that no instance falls
    // back, which a round trip slowed past the timeout on a loaded machine
    // would make it do.
    let fleet = || {
        Fleet::builder(url(cluster.ports[0]))
            .cluster(cluster.ports[1..].iter().map(|&p| url(p)))
            .config(cfg)
            .op_timeout(Duration::from_secs(10))
            .refresh(Duration::from_millis(200))
            .retry(Duration::from_millis(50))
            .build()
            .unwrap()
    };
    let fleets = [fleet(), fleet()];
    let breakers: Vec<_> = fleets
        .iter()
        .zip(&logs)
        .map(|(f, log)| f.breaker_with(key, cfg, log.clone()))
        .collect();
    let transitions = || -> usize { logs.iter().map(|l| l.0.shared().len()).sum() };
    let stop = AtomicBool::new(false);
    let owner = std::thread::scope(|s| {
        for i in 0..4 {
            let (breaker, stop) = (&breakers[i % 2], &stop);
            s.spawn(move || {
                while !stop.load(Ordering::SeqCst) {
                    match breaker.acquire() {
                        Ok(t) => {
                            let outcome = if t.is_probe() {
                                Outcome::Success
                            } else {
                                Outcome::Failure
                            };
                            breaker.release(t, outcome);
                        }
                        Err(_) => std::thread::sleep(Duration::from_millis(2)),
                    }
                }
            });
        }
        let _stop = StopOnDrop(&stop);
        let progress = |more: usize| {
            let from = transitions();
            assert!(
                eventually(Duration::from_secs(60), || transitions() >= from + more),
                "the fleets go on changing the word"
            );
        };
        let owner = change(&progress, &transitions);
        assert!(
            eventually(LONG, || cluster
                .shard_subscribers(owner, breakers[0].channel())
                == 2),
            "both watchers subscribed on the key's node"
        );
        let after: Vec<usize> = logs.iter().map(|l| l.0.shared().len()).collect();
        assert!(
            eventually(Duration::from_secs(60), || logs
                .iter()
                .zip(&after)
                .all(|(l, &n)| l.0.shared().len() > n)),
            "both fleets change the word after the change"
        );
        owner
    });
    assert_eq!(cluster.owner(key), owner);
    let word = cluster.stored(key).expect("the word is on its node");
    let last = Snapshot::decode::<W64>(word).unwrap().counter;
    let mut counters: Vec<u32> = logs
        .iter()
        .flat_map(|l| l.0.shared().into_iter().map(|t| t.counter))
        .collect();
    counters.sort_unstable();
    assert_eq!(counters, (1..=last).collect::<Vec<_>>());
    for (b, log) in breakers.iter().zip(&logs) {
        assert_eq!(b.mode(), Mode::Shared);
        assert!(
            !log.0.modes.lock().unwrap().contains(&Mode::Local),
            "no instance fell back to its local breaker"
        );
        assert!(eventually(LONG, || b.word() == word), "the mirrors agree");
    }
}

/// A manual failover (`CLUSTER FAILOVER` on the replica of the key's
/// primary: the primary stops writes until the replica has all of them,
/// then the replica takes its slots over) under running fleets loses no
/// transition, and the watchers follow the slot to the new primary.
#[test]
#[cfg_attr(
    not(all(tripword_redis_server, tripword_redis_cli)),
    ignore = "needs redis-server and redis-cli on PATH (apt-get install redis-server redis-tools)"
)]
fn a_manual_failover_under_running_fleets_loses_no_transition() {
    let cluster = cluster_of("failover", 1);
    let key = "failing-over";
    under_churn(&cluster, key, |progress, _| {
        progress(12);
        let (primary, slot) = (cluster.owner(key), cluster.slot(key));
        let replica = cluster.replica_of(primary);
        let promoted = || {
            cluster
                .ports
                .iter()
                .all(|&p| cluster.owner_if_seen_by(p, slot) == Some(replica))
        };
        // A manual failover that times out (the replica did not catch up,
        // or its election got no votes in time) is asked for again.
        let mut tries = 0;
        while !promoted() {
            tries += 1;
            assert!(
                tries <= 3,
                "every node gives the slot to the promoted replica; its log:\n{}",
                cluster.log(replica)
            );
            let () = redis::cmd("CLUSTER")
                .arg("FAILOVER")
                .query(&mut node(replica))
                .unwrap();
            eventually(Duration::from_secs(25), promoted);
        }
        progress(12);
        replica
    });
}

/// A node that stops answering (paused) sends the fleet to its local
/// breakers, within an operation timeout or so; when it answers again,
/// every breaker rejoins the shared word, and the words were kept.
/// A primary killed (`SIGKILL`): the cluster promotes its replica after the
/// node timeout (5 s here). Meanwhile the fleet's breakers go local (the
/// watcher's refresh fails); after it, they rejoin the shared word on the
/// promoted replica, where the trip made before the kill (acknowledged by
/// the replica first, `WAIT` after a later write, so that the asynchronous
/// replication cannot lose it) still holds the breaker open, and the breaker goes on through
/// the new primary: its probe is elected there and closes it.
#[test]
#[cfg_attr(
    not(all(tripword_redis_server, tripword_redis_cli)),
    ignore = "needs redis-server and redis-cli on PATH (apt-get install redis-server redis-tools)"
)]
fn a_primary_killed_is_replaced_by_its_replica_and_the_fleet_follows() {
    let cluster = cluster_of("death", 1);
    let key = "dying";
    let open_for = 2_000_000;
    let fleet = Fleet::builder(url(cluster.ports[0]))
        .cluster(cluster.ports[1..].iter().map(|&p| url(p)))
        .config(config(1, open_for, 5_000_000))
        .op_timeout(Duration::from_millis(500))
        .refresh(Duration::from_millis(100))
        .retry(Duration::from_millis(50))
        .build()
        .unwrap();
    let breaker = fleet.breaker(key);
    assert_eq!(breaker.mode(), Mode::Shared);
    let t = breaker.acquire().unwrap();
    assert_eq!(breaker.release(t, Outcome::Failure), Release::Recorded);
    let (primary, slot) = (cluster.owner(key), cluster.slot(key));
    let tripped = cluster.stored(key).unwrap();
    let replica = cluster.replica_of(primary);
    // `WAIT` counts the replicas that have this connection's writes: one
    // write of its own, in the key's slot and after the trip in the
    // replication stream, so that its acknowledgement covers the trip.
    let mut con = node(primary);
    let () = redis::cmd("SET")
        .arg(format!("{{{key}}}:after"))
        .arg(1)
        .query(&mut con)
        .unwrap();
    let acked: i64 = redis::cmd("WAIT")
        .arg(1)
        .arg(5_000)
        .query(&mut con)
        .unwrap();
    assert_eq!(acked, 1, "the trip is on the replica");
    let killed = Instant::now();
    cluster.signal(primary, "-KILL");
    assert!(
        eventually(LONG, || breaker.mode() == Mode::Local),
        "the breaker falls back to its local breaker"
    );
    let others: Vec<u16> = cluster
        .ports
        .iter()
        .copied()
        .filter(|&p| p != primary)
        .collect();
    assert!(
        eventually(Duration::from_secs(60), || others
            .iter()
            .all(|&p| cluster.owner_if_seen_by(p, slot) == Some(replica))),
        "the replica is promoted; its log:\n{}",
        cluster.log(replica)
    );
    let promoted = killed.elapsed();
    assert!(
        eventually(LONG, || breaker.mode() == Mode::Shared),
        "the breaker rejoins the shared word"
    );
    let rejoined = killed.elapsed();
    let word = |port: u16| -> Option<u64> {
        let v: Option<String> = redis::cmd("GET").arg(key).query(&mut node(port)).unwrap();
        v.map(|s| s.parse().unwrap())
    };
    let survived = word(replica);
    assert_eq!(
        survived,
        Some(tripped),
        "the trip survived the kill: {:?} for {:?}",
        survived.map(Snapshot::decode::<W64>),
        Snapshot::decode::<W64>(tripped)
    );
    assert!(eventually(LONG, || breaker.word() == tripped));
    // The open time passes: the probe is elected on the new primary.
    let t = loop {
        match breaker.acquire() {
            Ok(t) => break t,
            Err(_) => std::thread::sleep(Duration::from_millis(50)),
        }
    };
    assert!(t.is_probe());
    assert_eq!(breaker.release(t, Outcome::Success), Release::Recorded);
    assert_eq!(breaker.status(), Status::Closed);
    let closed = Snapshot::decode::<W64>(word(replica).unwrap()).unwrap();
    assert!(matches!(closed.state, State::Closed { failures: 0 }));
    eprintln!(
        "primary {primary} killed: replica {replica} promoted after {promoted:?}, the breaker shared again after {rejoined:?}"
    );
}

#[test]
#[cfg_attr(
    not(all(tripword_redis_server, tripword_redis_cli)),
    ignore = "needs redis-server and redis-cli on PATH (apt-get install redis-server redis-tools)"
)]
fn a_node_that_stops_answering_sends_the_fleet_local_until_it_answers() {
    let cluster = cluster("pause");
    let cfg = config(1, 60_000_000, 5_000_000);
    let fleet = Fleet::builder(url(cluster.ports[0]))
        .cluster(cluster.ports[1..].iter().map(|&p| url(p)))
        .config(cfg)
        .op_timeout(Duration::from_millis(300))
        .refresh(Duration::from_millis(100))
        .retry(Duration::from_millis(50))
        .build()
        .unwrap();
    let keys = ["payments", "search", "orders", "users", "carts", "mail"];
    let breakers: Vec<_> = keys.iter().map(|k| fleet.breaker(k)).collect();
    for b in &breakers {
        assert_eq!(b.mode(), Mode::Shared);
    }
    // One breaker tripped before: its word must survive the pause.
    let t = breakers[0].acquire().unwrap();
    breakers[0].release(t, Outcome::Failure);
    let tripped = cluster.stored(keys[0]).unwrap();
    // Pause a node that owns none of the tripped breaker's slot.
    let paused = *cluster
        .ports
        .iter()
        .find(|&&p| p != cluster.owner(keys[0]))
        .unwrap();
    let on_paused: Vec<usize> = (0..keys.len())
        .filter(|&i| cluster.owner(keys[i]) == paused)
        .collect();
    assert!(!on_paused.is_empty());
    cluster.signal(paused, "-STOP");
    let resumed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        assert!(
            eventually(LONG, || breakers.iter().all(|b| b.mode() == Mode::Local)),
            "every breaker falls back to its local breaker"
        );
        // Calls go on, locally: the tripped one stays open.
        assert!(breakers[0].acquire().is_err());
        let i = on_paused[0];
        let t = breakers[i].acquire().expect("closed locally");
        breakers[i].release(t, Outcome::Success);
    }));
    cluster.signal(paused, "-CONT");
    if let Err(panic) = resumed {
        std::panic::resume_unwind(panic);
    }
    assert!(
        eventually(LONG, || breakers.iter().all(|b| b.mode() == Mode::Shared)),
        "every breaker rejoins the shared word"
    );
    assert_eq!(cluster.stored(keys[0]), Some(tripped));
    assert_eq!(breakers[0].status(), Status::Open);
    for (b, key) in breakers.iter().zip(keys) {
        let stored = cluster.stored(key);
        assert!(
            eventually(LONG, || Some(b.word()) == stored || stored.is_none()),
            "{key}: the mirror holds the word"
        );
    }
}

/// Without pub/sub the watcher's refresh alone keeps the mirrors fresh:
/// 300 keys in about as many slots, read a slot a script, the scripts
/// pipelined by node (two rounds), every word taken.
#[test]
#[cfg_attr(
    not(all(tripword_redis_server, tripword_redis_cli)),
    ignore = "needs redis-server and redis-cli on PATH (apt-get install redis-server redis-tools)"
)]
fn the_refresh_reads_every_slots_words() {
    let cluster = cluster("refresh");
    let cfg = config(1, 60_000_000, 5_000_000);
    let polled = Fleet::builder(url(cluster.ports[0]))
        .cluster(cluster.ports[1..].iter().map(|&p| url(p)))
        .config(cfg)
        .op_timeout(Duration::from_secs(2))
        .refresh(Duration::from_millis(100))
        .pubsub(false)
        .build()
        .unwrap();
    let other = cluster.fleet(cfg, Duration::from_secs(3_600));
    let keys: Vec<String> = (0..300).map(|i| format!("refresh:{i}")).collect();
    let slots: HashSet<u16> = keys.iter().map(|k| cluster.slot(k)).collect();
    assert!(slots.len() > 256, "more slots than one round");
    let breakers: Vec<_> = keys.iter().map(|k| polled.breaker(k)).collect();
    let base: Vec<u64> = breakers.iter().map(|b| b.stats().refreshes).collect();
    let tripped = [0, 99, 150, 299];
    for &i in &tripped {
        let b = other.breaker(&keys[i]);
        let t = b.acquire().unwrap();
        b.release(t, Outcome::Failure);
        assert_eq!(b.status(), Status::Open);
    }
    for (i, b) in breakers.iter().enumerate() {
        let want = if tripped.contains(&i) {
            Status::Open
        } else {
            Status::Closed
        };
        assert!(
            eventually(LONG, || b.status() == want && b.stats().refreshes > base[i]),
            "{}: refreshed",
            keys[i]
        );
        assert_eq!(b.stats().published, 0, "no pub/sub");
        assert_eq!(b.mode(), Mode::Shared);
    }
}

/// With `cluster-async` (on in the tests), the async form on a cluster
/// awaits its round trips (`Reply::Wait`) on an async cluster connection,
/// which sends each script to the key's node: the failures are recorded
/// there, the trip is published on the key's shard (`SPUBLISH`: a second
/// fleet, refreshing once an hour, learns it by its sharded subscription),
/// and after the open time a probe is elected and closes the breaker, all
/// awaited.
#[tokio::test(flavor = "current_thread")]
#[cfg_attr(
    not(all(tripword_redis_server, tripword_redis_cli)),
    ignore = "needs redis-server and redis-cli on PATH (apt-get install redis-server redis-tools)"
)]
async fn the_async_form_on_a_cluster_awaits_its_round_trips() {
    let cluster = cluster("async");
    let cfg = config(2, 200_000, 5_000_000);
    let fleet = cluster.fleet(cfg, Duration::from_millis(200));
    let other = cluster.fleet(cfg, Duration::from_secs(3_600));
    let b = fleet.breaker("async");
    let o = other.breaker("async");
    let owner = cluster.owner("async");
    let mut subscribed = false;
    for _ in 0..200 {
        if cluster.shard_subscribers(owner, b.channel()) == 2 {
            subscribed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(subscribed, "both watchers subscribed on the key's node");
    let before = b.stats().remote_calls;
    for _ in 0..2 {
        let t = match b.acquire_async() {
            Reply::Ready(t) => t.unwrap(),
            Reply::Wait(_) => panic!("a closed admission is one load"),
        };
        match b.release_async(t, Outcome::Failure.into()) {
            Reply::Ready(_) => panic!("a failure report awaits Redis"),
            Reply::Wait(release) => assert_eq!(release.await, tripword::Release::Recorded),
        }
    }
    assert_eq!(
        b.stats().remote_calls,
        before + 2,
        "both failures went to Redis"
    );
    assert_eq!(b.status(), Status::Open);
    assert_eq!(b.mode(), Mode::Shared);
    assert_eq!(cluster.stored("async"), Some(b.word()));
    let mut told = false;
    for _ in 0..200 {
        if o.word() == b.word() {
            told = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(told, "the other fleet learns the trip on the key's shard");
    assert!(o.stats().published >= 1, "by pub/sub");
    // The open time passes: the probe is elected in Redis, awaited.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let probe = loop {
        match b.acquire_async() {
            Reply::Wait(admission) => break admission.await.unwrap(),
            Reply::Ready(Err(_)) => tokio::time::sleep(Duration::from_millis(20)).await,
            Reply::Ready(Ok(_)) => panic!("a probe is elected in Redis"),
        }
    };
    assert!(probe.is_probe());
    match b.release_async(probe, Outcome::Success.into()) {
        Reply::Ready(_) => panic!("a probe's result awaits Redis"),
        Reply::Wait(release) => assert_eq!(release.await, tripword::Release::Recorded),
    }
    assert_eq!(b.status(), Status::Closed);
    assert_eq!(cluster.stored("async"), Some(b.word()));
}

/// How long the watcher's refresh of many keys takes on the cluster (one
/// round trip per slot with breakers in it) and on one Redis (one per 256
/// keys): the time until every breaker's refresh count moved by two, from
/// a moment the watchers were idle. A measurement, not a check: run with
/// `cargo test -p tripword-redis --test cluster -- --ignored --nocapture`.
#[test]
#[ignore = "a measurement"]
fn refresh_of_many_keys_measured() {
    let cluster = cluster("measure");
    let single = server();
    let cfg = config(5, 1_000_000, 5_000_000);
    let period = Duration::from_millis(500);
    let on_cluster = cluster.fleet(cfg, period);
    let on_one = Fleet::builder(single.url())
        .config(cfg)
        .op_timeout(Duration::from_secs(2))
        .refresh(period)
        .build()
        .unwrap();
    for n in [100, 1_000] {
        for (name, fleet) in [("cluster", &on_cluster), ("one redis", &on_one)] {
            let breakers: Vec<_> = (0..n).map(|i| fleet.breaker(&format!("k{i}"))).collect();
            let slots: HashSet<u16> = (0..n).map(|i| cluster.slot(&format!("k{i}"))).collect();
            // A whole refresh pass: every breaker's count moves twice, the
            // second pass timed from its first breaker to its last.
            let base: Vec<u64> = breakers.iter().map(|b| b.stats().refreshes).collect();
            assert!(eventually(Duration::from_secs(120), || breakers
                .iter()
                .zip(&base)
                .any(|(b, &r)| b.stats().refreshes >= r + 2)));
            let start = Instant::now();
            assert!(eventually(Duration::from_secs(120), || breakers
                .iter()
                .zip(&base)
                .all(|(b, &r)| b.stats().refreshes >= r + 2)));
            eprintln!(
                "{name}: {n} keys (in {} slots of a cluster), the rest of a refresh pass after its first key: {:?}",
                slots.len(),
                start.elapsed()
            );
        }
    }
}

/// A quorum on a cluster: the votes are kept in the key's slot (the vote
/// and trip scripts touch the word and the votes), one instance failing
/// every call does not trip the breaker, a second one's votes do, and the
/// trip reaches the other fleet by sharded pub/sub.
#[test]
#[cfg_attr(
    not(all(tripword_redis_server, tripword_redis_cli)),
    ignore = "needs redis-server and redis-cli on PATH (apt-get install redis-server redis-tools)"
)]
fn a_quorum_on_a_cluster_keeps_its_votes_in_the_keys_slot() {
    let cluster = cluster("quorum");
    let cfg = config(2, 300_000, 10_000_000);
    let fleet = |id: &str| {
        Fleet::builder(url(cluster.ports[0]))
            .cluster(cluster.ports[1..].iter().map(|&p| url(p)))
            .config(cfg)
            .op_timeout(Duration::from_secs(2))
            .refresh(Duration::from_secs(3_600))
            .retry(Duration::from_millis(50))
            .quorum(2)
            .quorum_id(id)
            .build()
            .unwrap()
    };
    let (a, b, c) = (fleet("a"), fleet("b"), fleet("c"));
    let key = "payments";
    let (ba, bb, bc) = (a.breaker(key), b.breaker(key), c.breaker(key));
    assert!(eventually(LONG, || cluster
        .shard_subscribers(cluster.owner(key), ba.channel())
        == 3));
    let fail = |x: &RedisBreaker| {
        for _ in 0..2 {
            let t = x.acquire().expect("admitted");
            x.release(t, Outcome::Failure);
        }
    };
    // One bad instance: held off by itself, its vote in the key's slot.
    fail(&ba);
    assert_eq!(ba.status(), Status::Open, "a holds itself off");
    let votes = format!("tripword:{{{key}}}:votes");
    assert_eq!(cluster.slot(&votes), cluster.slot(key));
    let voters: Vec<String> = redis::cmd("ZRANGE")
        .arg(&votes)
        .arg(0)
        .arg(-1)
        .query(&mut node(cluster.owner(key)))
        .unwrap();
    assert_eq!(voters, ["a"]);
    assert_eq!(bb.status(), Status::Closed);
    assert!(
        bc.acquire()
            .is_ok_and(|t| bc.release(t, Outcome::Success) == Release::Recorded)
    );
    let word = Snapshot::decode::<W64>(cluster.stored(key).unwrap_or(0)).unwrap();
    assert!(matches!(word.state, State::Closed { .. }), "{word:?}");
    // A second instance's votes trip the fleet; the third learns it by
    // sharded pub/sub.
    fail(&bb);
    assert!(
        eventually(LONG, || bc.status() == Status::Open),
        "c sees the trip"
    );
    let word = Snapshot::decode::<W64>(cluster.stored(key).unwrap()).unwrap();
    assert!(matches!(word.state, State::Open { .. }), "{word:?}");
}

/// A config published on a cluster: the fingerprint key is in a slot of
/// its own, the script runs on its node; the other fleet's breaker of the
/// old config follows (rejects while the fleet is open, never writes).
#[test]
#[cfg_attr(
    not(all(tripword_redis_server, tripword_redis_cli)),
    ignore = "needs redis-server and redis-cli on PATH (apt-get install redis-server redis-tools)"
)]
fn a_config_published_on_a_cluster_rules() {
    let cluster = cluster("publish");
    let old = cluster.fleet(
        config(2, 60_000_000, 10_000_000),
        Duration::from_millis(100),
    );
    let new = cluster.fleet(
        config(4, 90_000_000, 10_000_000),
        Duration::from_millis(100),
    );
    let (a, b) = (old.breaker("payments"), new.breaker("payments"));
    assert_eq!((a.mode(), b.mode()), (Mode::Shared, Mode::Local));
    for _ in 0..2 {
        let t = a.acquire().unwrap();
        a.release(t, Outcome::Failure);
    }
    assert_eq!(a.status(), Status::Open);
    b.sync().unwrap();
    assert!(
        b.acquire().is_err(),
        "the follower rejects: the fleet is open"
    );
    assert_eq!(b.publish_config().unwrap(), 1);
    assert_eq!(b.mode(), Mode::Shared);
    a.sync().unwrap();
    assert_eq!(a.mode(), Mode::Local);
    assert_eq!(a.config_mismatch().as_deref(), Some(b.config_fingerprint()));
    assert!(
        a.acquire().is_err(),
        "the old config follows the open fleet"
    );
    assert!(b.acquire().is_err());
}
