//! A network partition: one instance reaches Redis through a TCP proxy the
//! test cuts (existing connections dropped, new ones accepted and never
//! answered: a black hole) and heals; two others connect directly.
//!
//! - The cut instance falls back to its local breaker (`Mode::Local`); the
//!   others stay on the shared word and keep it working: they trip it,
//!   elect exactly one probe among them, close it. Nothing the cut instance
//!   does meanwhile (failures, its own trip and probe, forces) changes the
//!   shared word. After the heal it rejoins: `Mode::Shared`, its mirror the
//!   stored word, its failures counted in it again.
//! - A cut while an operation is in flight: a request held by the proxy
//!   never reaches Redis (the outcome is `Unreported`, counted locally, the
//!   word unchanged); a request that reached Redis and whose reply is lost
//!   changed the word (a trip the rest of the fleet obeys, a probe elected
//!   for nobody, which holds the fleet until the probe timeout and no
//!   longer), while the instance, which cannot know, falls back as for any
//!   error. The transitions such a compare-and-set made are reported by no
//!   instance.
//! - The fleet's probe cut off with its ticket: its result is
//!   `Unreported`, the fleet waits for the probe timeout and no longer.
//! - A reply held past a published change: the instance's estimate of the
//!   server's time goes back behind the word its mirror holds, and a status
//!   read must not take that for a running probe's time being up.
//!
//! No wait here is a measurement: each is a generous bound on something
//! that must happen.

mod common;

use common::*;
use std::io::{Read, Write};
use std::net::{Ipv4Addr, Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tripword::word::{Snapshot, State};
use tripword::{Cause, Outcome, Status, W64};
use tripword_redis::server::RedisServer;
use tripword_redis::{Mode, RedisBreaker, Release, Scope};

const KEY: &str = "k";

/// What the proxy's pumps obey.
#[derive(Default)]
struct Control {
    cut: AtomicBool,
    stop: AtomicBool,
    /// Requests (client to Redis) wait while set.
    hold_requests: AtomicBool,
    /// Replies (Redis to client) still let through before the rest wait;
    /// negative: no limit. A pattern subscription's connection (pub/sub
    /// messages) is never held by it.
    reply_budget: AtomicI64,
    /// Chunks waiting in the proxy now.
    held: AtomicU64,
    /// Both ends of every forwarded connection, to drop them on a cut.
    conns: Mutex<Vec<(TcpStream, TcpStream)>>,
    /// Connections accepted during a cut: never answered, closed on heal.
    black_hole: Mutex<Vec<TcpStream>>,
}

impl Control {
    fn pass(&self, request: bool, subscriber: bool) -> bool {
        if request {
            return !self.hold_requests.load(Ordering::SeqCst);
        }
        if subscriber {
            return true;
        }
        self.reply_budget
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |b| match b {
                b if b < 0 => Some(b),
                0 => None,
                b => Some(b - 1),
            })
            .is_ok()
    }
}

/// A TCP proxy in front of a redis-server that the test can cut and heal,
/// and whose requests or replies it can hold. Stopped when dropped.
struct CutProxy {
    port: u16,
    ctl: Arc<Control>,
}

impl CutProxy {
    fn start(server: &RedisServer) -> CutProxy {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let port = listener.local_addr().unwrap().port();
        let target = server.port();
        let ctl = Arc::new(Control::default());
        ctl.reply_budget.store(-1, Ordering::SeqCst);
        let c = ctl.clone();
        std::thread::spawn(move || {
            for client in listener.incoming() {
                if c.stop.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(client) = client else { continue };
                // Under the lock a cut takes: a connection is either
                // forwarded and dropped by the cut, or in the black hole.
                let mut conns = c.conns.lock().unwrap();
                if c.cut.load(Ordering::SeqCst) {
                    c.black_hole.lock().unwrap().push(client);
                    continue;
                }
                let Ok(upstream) = TcpStream::connect((Ipv4Addr::LOCALHOST, target)) else {
                    continue;
                };
                conns.push((client.try_clone().unwrap(), upstream.try_clone().unwrap()));
                drop(conns);
                let (c_read, c_write) = (client.try_clone().unwrap(), client);
                let (u_read, u_write) = (upstream.try_clone().unwrap(), upstream);
                let (up, down) = (c.clone(), c.clone());
                let sub = Arc::new(AtomicBool::new(false));
                let sub2 = sub.clone();
                std::thread::spawn(move || pump(c_read, u_write, true, &up, &sub));
                std::thread::spawn(move || pump(u_read, c_write, false, &down, &sub2));
            }
        });
        CutProxy { port, ctl }
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// Drops every connection; new ones are accepted and never answered.
    fn cut(&self) {
        let mut conns = self.ctl.conns.lock().unwrap();
        self.ctl.cut.store(true, Ordering::SeqCst);
        for (a, b) in conns.drain(..) {
            let _ = a.shutdown(Shutdown::Both);
            let _ = b.shutdown(Shutdown::Both);
        }
    }

    /// Forwards again: new connections reach Redis; the black hole's are
    /// closed (their clients see the end and connect again).
    fn heal(&self) {
        self.ctl.hold_requests.store(false, Ordering::SeqCst);
        self.ctl.reply_budget.store(-1, Ordering::SeqCst);
        self.ctl.cut.store(false, Ordering::SeqCst);
        for s in self.ctl.black_hole.lock().unwrap().drain(..) {
            let _ = s.shutdown(Shutdown::Both);
        }
    }

    fn held(&self) -> u64 {
        self.ctl.held.load(Ordering::SeqCst)
    }
}

impl Drop for CutProxy {
    fn drop(&mut self) {
        self.ctl.stop.store(true, Ordering::SeqCst);
        self.cut();
        self.heal();
        // Wakes the accept loop, which then sees `stop`.
        let _ = TcpStream::connect((Ipv4Addr::LOCALHOST, self.port));
    }
}

/// Forwards `from` to `to` chunk by chunk, each chunk waiting while the
/// control holds its direction; ends both on a cut or an end. `subscriber`
/// is set (by the request side) once the connection asked for a pattern
/// subscription.
fn pump(
    mut from: TcpStream,
    mut to: TcpStream,
    request: bool,
    ctl: &Control,
    subscriber: &AtomicBool,
) {
    let mut buf = [0u8; 64 * 1024];
    'chunks: loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if request && buf[..n].windows(10).any(|w| w == b"PSUBSCRIBE") {
            subscriber.store(true, Ordering::SeqCst);
        }
        let mut waiting = false;
        while !ctl.pass(request, subscriber.load(Ordering::SeqCst)) {
            if !waiting {
                ctl.held.fetch_add(1, Ordering::SeqCst);
                waiting = true;
            }
            if ctl.cut.load(Ordering::SeqCst) {
                ctl.held.fetch_sub(1, Ordering::SeqCst);
                break 'chunks;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        if waiting {
            ctl.held.fetch_sub(1, Ordering::SeqCst);
        }
        if ctl.cut.load(Ordering::SeqCst) || to.write_all(&buf[..n]).is_err() {
            break;
        }
    }
    let _ = from.shutdown(Shutdown::Both);
    let _ = to.shutdown(Shutdown::Both);
}

fn word(server: &RedisServer) -> u64 {
    stored(server, KEY).map_or(0, |w| w.parse().unwrap())
}

fn snapshot(word: u64) -> Snapshot {
    Snapshot::decode::<W64>(word).expect("a valid word")
}

/// The stored word, read until `pred` holds (within the generous bound).
fn word_when(server: &RedisServer, pred: impl Fn(&Snapshot) -> bool) -> Snapshot {
    let mut last = None;
    assert!(
        eventually(LONG, || {
            let s = snapshot(word(server));
            let ok = pred(&s);
            last = Some(s);
            ok
        }),
        "the stored word never got there: {last:?}"
    );
    last.unwrap()
}

#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn a_cut_instance_goes_local_and_the_rest_keep_the_shared_word() {
    let server = server();
    // Open for 200 ms, probe timeout 60 s: no probe lapses in the test.
    let cfg = config(2, 200_000, 60_000_000);
    let proxy = CutProxy::start(&server);
    let cut_log = Recorder::default();
    let a = behind(&proxy, cfg, &cut_log);
    let logs = [Recorder::default(), Recorder::default()];
    let b = builder(&server, KEY, cfg)
        .observer(logs[0].clone())
        .build()
        .unwrap();
    let c = builder(&server, KEY, cfg)
        .observer(logs[1].clone())
        .build()
        .unwrap();
    for x in [&a, &b, &c] {
        assert_eq!(x.mode(), Mode::Shared);
    }
    // A failure from the instance behind the proxy counts in the shared
    // word while it is connected.
    let t = a.acquire().unwrap();
    assert_eq!(a.release(t, Outcome::Failure), Release::Recorded);
    assert_eq!(snapshot(word(&server)).state, State::Closed { failures: 1 });
    // b's mirror learns of the failure (without it, its success would be
    // settled on its mirror as changing nothing), then resets the run.
    b.sync().unwrap();
    let t = b.acquire().unwrap();
    assert_eq!(b.release(t, Outcome::Success), Release::Recorded);
    let before = word(&server);
    assert_eq!(snapshot(before).state, State::Closed { failures: 0 });

    proxy.cut();
    // The watcher's connection is dropped: the instance goes local with no
    // call made.
    assert!(
        eventually(LONG, || a.mode() == Mode::Local),
        "the cut instance falls back"
    );
    assert_eq!(cut_log.0.modes.lock().unwrap().last(), Some(&Mode::Local));
    assert_eq!((b.mode(), c.mode()), (Mode::Shared, Mode::Shared));

    // The cut instance's own evidence: two failures trip its local breaker
    // (the shared word's threshold is 2 too), its open time passes and it
    // elects a local probe, which fails; an operator's force on it fails
    // to reach Redis and holds it alone.
    for _ in 0..2 {
        let t = a.acquire().expect("the local breaker is closed");
        assert_eq!(t.scope(), Scope::Local);
        assert_eq!(a.release(t, Outcome::Failure), Release::Recorded);
    }
    assert_ne!(
        a.status(),
        Status::Closed,
        "tripped (open, or its 200 ms over)"
    );
    let mut local_probe = None;
    assert!(eventually(LONG, || {
        local_probe = a.acquire().ok();
        local_probe.is_some()
    }));
    let local_probe = local_probe.unwrap();
    assert!(local_probe.is_probe());
    assert_eq!(local_probe.scope(), Scope::Local);
    assert_eq!(a.release(local_probe, Outcome::Failure), Release::Recorded);
    assert!(a.force_open().is_err(), "Redis is out of reach");
    assert_eq!(a.acquire().unwrap_err().cause(), Cause::ForcedOpen);
    assert_eq!(word(&server), before, "the shared word did not move");
    let local: Vec<(Status, Status, bool)> = cut_log
        .0
        .transitions
        .lock()
        .unwrap()
        .iter()
        .filter(|(_, s)| *s == Scope::Local)
        .map(|(t, _)| (t.from, t.to, t.forced))
        .collect();
    use Status::{Closed, HalfOpen, Open, Probing};
    assert_eq!(
        local,
        [
            (Closed, Open, false),
            (Open, HalfOpen, false),
            (HalfOpen, Probing, false),
            (Probing, Open, false),
            (Open, Open, true),
        ],
        "the local trip, probe, trip and hold, reported as local"
    );
    assert_eq!(cut_log.0.shared().len(), 0);

    // Meanwhile the others trip the shared word, and exactly one of them
    // is elected probe when the open time is over.
    for x in [&b, &c] {
        let t = x.acquire().unwrap();
        assert_eq!(x.release(t, Outcome::Failure), Release::Recorded);
    }
    let open = snapshot(word(&server));
    assert!(
        matches!(open.state, State::Open { trips: 1, .. }),
        "{open:?}"
    );
    assert!(eventually(LONG, || b.status() != Status::Closed));
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::scope(|s| {
        for (i, x) in [&b, &c].into_iter().enumerate() {
            let tx = tx.clone();
            s.spawn(move || {
                // Each asks until it is elected or finds the probe elected.
                let mut got = None;
                assert!(eventually(LONG, || match x.acquire() {
                    Ok(t) => {
                        got = Some(Ok(t));
                        true
                    }
                    Err(why) if why.cause() == Cause::Probing => {
                        got = Some(Err(why));
                        true
                    }
                    Err(_) => false,
                }));
                tx.send((i, got.unwrap())).unwrap();
            });
        }
    });
    drop(tx);
    let answers: Vec<_> = rx.iter().collect();
    let probes: Vec<_> = answers
        .into_iter()
        .filter_map(|(i, r)| r.ok().map(|t| (i, t)))
        .collect();
    assert_eq!(probes.len(), 1, "exactly one probe among the connected");
    let (i, probe) = probes.into_iter().next().unwrap();
    assert!(probe.is_probe());
    assert_eq!(probe.scope(), Scope::Shared);
    let (holder, other) = if i == 0 { (&b, &c) } else { (&c, &b) };
    other.sync().unwrap();
    assert_eq!(other.acquire().unwrap_err().cause(), Cause::Probing);
    assert_eq!(holder.release(probe, Outcome::Success), Release::Recorded);
    let closed = snapshot(word(&server));
    assert_eq!(closed.state, State::Closed { failures: 0 });
    // Trip, half-open, probe, close: 4 changes after `before`.
    assert_eq!(closed.counter, snapshot(before).counter + 4);
    let shared: usize = logs.iter().map(|l| l.0.shared().len()).sum();
    assert_eq!(shared, 4, "each change reported once, by the connected");
    assert_eq!(a.mode(), Mode::Local, "still cut");
    assert_eq!(cut_log.0.shared().len(), 0);

    proxy.heal();
    assert!(
        eventually(LONG, || a.mode() == Mode::Shared),
        "the cut instance rejoins"
    );
    let stored = word(&server);
    assert!(
        eventually(LONG, || a.word() == stored),
        "its mirror is the stored word"
    );
    // The shared word decides again: the local hold is not the fleet's.
    let t = a.acquire().expect("the fleet is closed");
    assert_eq!(t.scope(), Scope::Shared);
    assert_eq!(a.release(t, Outcome::Failure), Release::Recorded);
    let after = snapshot(word(&server));
    assert_eq!(after.state, State::Closed { failures: 1 });
    assert_eq!(after.counter, closed.counter);
    assert!(eventually(LONG, || b.word() == word(&server)));
}

/// An instance reaching Redis through `proxy`, reporting to `log`: a short
/// operation timeout, a refresh every 100 ms.
fn behind(proxy: &CutProxy, cfg: tripword::ValidConfig<W64>, log: &Recorder) -> RedisBreaker {
    RedisBreaker::builder(proxy.url(), KEY)
        .config(cfg)
        .op_timeout(Duration::from_millis(300))
        .refresh(Duration::from_millis(100))
        .retry(Duration::from_millis(50))
        .observer(log.clone())
        .build()
        .unwrap()
}

/// The instance behind the proxy for the in-flight cases: its watcher is
/// quiet after its first read (no pub/sub, no refresh within the test), so
/// that only its calls' round trips cross the proxy; the operation timeout
/// is long, so that the cut, not the timeout, ends the call.
fn quiet_behind(proxy: &CutProxy, cfg: tripword::ValidConfig<W64>, log: &Recorder) -> RedisBreaker {
    let a = RedisBreaker::builder(proxy.url(), KEY)
        .config(cfg)
        .op_timeout(Duration::from_secs(30))
        .pubsub(false)
        .refresh(Duration::from_secs(3600))
        .retry(Duration::from_millis(50))
        .observer(log.clone())
        .build()
        .unwrap();
    assert!(eventually(LONG, || a.stats().refreshes >= 2));
    assert_eq!(a.mode(), Mode::Shared);
    a
}

#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn a_request_held_when_the_cut_comes_never_reaches_redis() {
    let server = server();
    let cfg = config(1, 60_000_000, 60_000_000);
    let proxy = CutProxy::start(&server);
    let log = Recorder::default();
    let a = quiet_behind(&proxy, cfg, &log);
    let b = builder(&server, KEY, cfg).build().unwrap();
    let before = word(&server);
    let t = a.acquire().unwrap();
    proxy.ctl.hold_requests.store(true, Ordering::SeqCst);
    std::thread::scope(|s| {
        let call = s.spawn(|| a.release(t, Outcome::Failure));
        assert!(
            eventually(LONG, || proxy.held() > 0),
            "the failure report waits in the proxy"
        );
        proxy.cut();
        assert_eq!(call.join().unwrap(), Release::Unreported);
    });
    assert_eq!(a.mode(), Mode::Local);
    assert_eq!(word(&server), before, "the word did not change");
    // Counted locally: a threshold of 1 tripped the local breaker.
    assert_eq!(a.status(), Status::Open);
    assert!(log.0.shared().is_empty());
    b.sync().unwrap();
    assert!(b.acquire().is_ok(), "the fleet is closed");
    proxy.heal();
    // Its watcher reads only every hour: a `sync` rejoins now.
    assert!(eventually(LONG, || a.sync().is_ok()));
    assert_eq!(a.mode(), Mode::Shared);
    assert_eq!(a.word(), word(&server));
}

#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn a_trip_whose_reply_is_lost_reaches_the_fleet_and_is_reported_by_none() {
    let server = server();
    let cfg = config(1, 60_000_000, 60_000_000);
    let proxy = CutProxy::start(&server);
    let log = Recorder::default();
    let a = quiet_behind(&proxy, cfg, &log);
    let b_log = Recorder::default();
    let b = builder(&server, KEY, cfg)
        .observer(b_log.clone())
        .build()
        .unwrap();
    // A compare-and-set first, so that the server has the script cached
    // (otherwise the compare-and-set's first reply is `NOSCRIPT`, held).
    b.force_close().unwrap();
    a.sync().unwrap();
    let t = a.acquire().unwrap();
    // The failure report reaches Redis (the server's time, then the
    // compare-and-set); the compare-and-set's reply never comes back.
    proxy.ctl.reply_budget.store(1, Ordering::SeqCst);
    std::thread::scope(|s| {
        let call = s.spawn(|| a.release(t, Outcome::Failure));
        let open = word_when(&server, |w| matches!(w.state, State::Open { .. }));
        assert_eq!(open.counter, 2);
        assert!(eventually(LONG, || proxy.held() > 0));
        proxy.cut();
        assert_eq!(call.join().unwrap(), Release::Unreported);
    });
    assert_eq!(a.mode(), Mode::Local);
    // The rest of the fleet obeys the trip.
    assert!(eventually(LONG, || b.acquire().is_err()));
    assert_eq!(b.acquire().unwrap_err().cause(), Cause::Open);
    // Nobody reported it: the instance that made it never learnt it did.
    assert!(log.0.shared().is_empty());
    let b_counters: Vec<u32> = b_log.0.shared().iter().map(|t| t.counter).collect();
    assert_eq!(b_counters, vec![1], "b reported its force only");
    proxy.heal();
    assert!(eventually(LONG, || a.sync().is_ok()));
    assert_eq!(a.mode(), Mode::Shared);
    assert_eq!(a.word(), word(&server));
    assert_eq!(a.status(), Status::Open);
}

#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn a_probe_elected_for_a_lost_reply_holds_the_fleet_until_the_probe_timeout() {
    let server = server();
    // Open for 1 µs (over at once), probe timeout 1 s.
    let cfg = config(1, 1, 1_000_000);
    let proxy = CutProxy::start(&server);
    let log = Recorder::default();
    let a = quiet_behind(&proxy, cfg, &log);
    let logs = [Recorder::default(), Recorder::default()];
    let b = builder(&server, KEY, cfg)
        .observer(logs[0].clone())
        .build()
        .unwrap();
    let c = builder(&server, KEY, cfg)
        .observer(logs[1].clone())
        .build()
        .unwrap();
    // b trips the fleet; a reads the open word.
    let t = b.acquire().unwrap();
    assert_eq!(b.release(t, Outcome::Failure), Release::Recorded);
    a.sync().unwrap();
    assert_eq!(snapshot(a.word()).counter, 1);
    // a's admission goes to Redis: the load's reply comes back, the
    // election's compare-and-set is applied, its reply is lost.
    proxy.ctl.reply_budget.store(1, Ordering::SeqCst);
    let elected = std::thread::scope(|s| {
        let call = s.spawn(|| a.acquire());
        let elected = word_when(&server, |w| matches!(w.state, State::Probing { .. }));
        assert!(eventually(LONG, || proxy.held() > 0));
        proxy.cut();
        // The instance falls back; its local breaker was tripped on the
        // way (the shared word it held said open), so it rejects, or, its
        // 1 µs open time over already, elects its own local probe.
        match call.join().unwrap() {
            Err(why) => assert_eq!(why.cause(), Cause::Open),
            Ok(t) => {
                assert_eq!((t.scope(), t.is_probe()), (Scope::Local, true));
                assert_eq!(a.release(t, Outcome::Ignored), Release::Recorded);
            }
        }
        elected
    });
    assert_eq!(elected.counter, 3, "open, half-open, probing");
    assert_eq!(a.mode(), Mode::Local);
    // The fleet has a probe nobody holds: the others are rejected...
    for x in [&b, &c] {
        x.sync().unwrap();
        assert_eq!(x.acquire().unwrap_err().cause(), Cause::Probing);
    }
    // ...until the probe timeout (server time), then exactly one of them
    // is elected, and its success closes the fleet.
    let mut probe = None;
    assert!(eventually(LONG, || {
        probe = b.acquire().ok();
        probe.is_some()
    }));
    let probe = probe.unwrap();
    assert!(probe.is_probe());
    let probing = snapshot(word(&server));
    match (elected.state, probing.state) {
        (State::Probing { since: lost, .. }, State::Probing { since, .. }) => assert!(
            since.wrapping_sub(lost) >= (1_000_000 >> cfg.time_shift()) - 1,
            "the new probe came after the timeout on the server's clock"
        ),
        other => panic!("{other:?}"),
    }
    c.sync().unwrap();
    assert_eq!(c.acquire().unwrap_err().cause(), Cause::Probing);
    assert_eq!(b.release(probe, Outcome::Success), Release::Recorded);
    assert_eq!(snapshot(word(&server)).state, State::Closed { failures: 0 });
    // The lost election's transitions (2 and 3) were reported by nobody;
    // every later one by exactly one instance.
    let mut counters: Vec<u32> = logs
        .iter()
        .chain([&log])
        .flat_map(|l| l.0.shared())
        .map(|t| t.counter)
        .collect();
    counters.sort_unstable();
    assert_eq!(counters, vec![1, 4, 5, 6]);
    proxy.heal();
    assert!(eventually(LONG, || a.sync().is_ok()));
    assert_eq!(a.mode(), Mode::Shared);
    assert_eq!(a.word(), word(&server));
    assert!(a.acquire().is_ok(), "closed again, for every instance");
}

/// A reply that was read from the server before a change was published, and
/// arrives after it, brings an older server time than the published
/// change's: the instance's estimate of the server's time goes back below
/// the timestamp of the word its mirror holds. A status read must not take
/// that for the probe's time being up (the probe timeout is an hour): the
/// server's time is at least the stamp of any word it stored.
#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn a_late_reply_does_not_read_a_running_probe_as_timed_out() {
    let server = server();
    let cfg = config(1, 1, 3_600_000_000);
    let proxy = CutProxy::start(&server);
    // A frozen local clock: the estimate is the last sample, for as long as
    // the test needs.
    let a = RedisBreaker::builder(proxy.url(), KEY)
        .config(cfg)
        .op_timeout(Duration::from_secs(30))
        // No refresh within the test: only the call's reply is held (the
        // watcher, waiting on a held refresh, would not read pub/sub).
        .refresh(Duration::from_secs(3600))
        .local_clock(ManualLocal::new(1_000_000))
        .build()
        .unwrap();
    let b = builder(&server, KEY, cfg).build().unwrap();
    // The watcher is subscribed (it read the word after subscribing).
    assert!(eventually(LONG, || a.stats().refreshes >= 2));
    let t = b.acquire().unwrap();
    assert_eq!(b.release(t, Outcome::Failure), Release::Recorded);
    assert!(eventually(LONG, || snapshot(a.word()).counter == 1));
    // a's sync reads the open word; its reply waits in the proxy.
    proxy.ctl.reply_budget.store(0, Ordering::SeqCst);
    std::thread::scope(|s| {
        let sync = s.spawn(|| a.sync());
        assert!(eventually(LONG, || proxy.held() > 0));
        // Meanwhile b is elected probe; the change reaches a by pub/sub,
        // with the server's time of the election.
        let probe = b.acquire().unwrap();
        assert!(probe.is_probe());
        assert!(eventually(LONG, || matches!(
            snapshot(a.word()).state,
            State::Probing { .. }
        )));
        assert_eq!(a.status(), Status::Probing);
        // The reply comes, with the server's time of the read before.
        proxy.ctl.reply_budget.store(-1, Ordering::SeqCst);
        assert_eq!(sync.join().unwrap().unwrap(), Status::Probing);
        assert!(matches!(snapshot(a.word()).state, State::Probing { .. }));
        assert_eq!(a.status(), Status::Probing, "the probe runs for an hour");
        assert_eq!(b.release(probe, Outcome::Success), Release::Recorded);
    });
}

/// The fleet's probe is cut off with its ticket: its result cannot reach
/// Redis (`Unreported`, not counted locally either: the local breaker,
/// tripped on the way since the shared word was not closed, did not admit
/// that call). The rest of the fleet waits for the probe timeout, no
/// longer, then elects one of its own; after the heal the instance reads
/// the closed word.
#[test]
#[cfg_attr(
    not(tripword_redis_server),
    ignore = "needs redis-server on PATH (apt-get install redis-server)"
)]
fn a_probe_cut_off_with_its_ticket_holds_the_fleet_until_the_probe_timeout() {
    let server = server();
    // Open for 1 µs (over at once), probe timeout 1 s.
    let cfg = config(1, 1, 1_000_000);
    let proxy = CutProxy::start(&server);
    let log = Recorder::default();
    let a = behind(&proxy, cfg, &log);
    let b = builder(&server, KEY, cfg).build().unwrap();
    let t = b.acquire().unwrap();
    assert_eq!(b.release(t, Outcome::Failure), Release::Recorded);
    a.sync().unwrap();
    let probe = a.acquire().expect("the open time is over");
    assert!(probe.is_probe());
    assert_eq!(probe.scope(), Scope::Shared);
    let elected = snapshot(word(&server));
    proxy.cut();
    assert!(eventually(LONG, || a.mode() == Mode::Local));
    assert_eq!(a.release(probe, Outcome::Success), Release::Unreported);
    assert_eq!(
        word(&server),
        elected.encode::<W64>(),
        "nothing reached Redis"
    );
    let local: Vec<_> = log
        .0
        .transitions
        .lock()
        .unwrap()
        .iter()
        .filter(|(_, s)| *s == Scope::Local)
        .map(|(t, _)| (t.from, t.to))
        .collect();
    assert_eq!(
        local,
        [(Status::Closed, Status::Open)],
        "the local breaker tripped on the way (the fleet was probing), and the probe's success was not counted in it"
    );
    // b is rejected until the probe timeout, then elected.
    b.sync().unwrap();
    assert_eq!(b.acquire().unwrap_err().cause(), Cause::Probing);
    let mut second = None;
    assert!(eventually(LONG, || {
        second = b.acquire().ok();
        second.is_some()
    }));
    let second = second.unwrap();
    assert!(second.is_probe());
    assert_eq!(b.release(second, Outcome::Success), Release::Recorded);
    proxy.heal();
    assert!(eventually(LONG, || a.mode() == Mode::Shared));
    assert!(eventually(LONG, || a.word() == word(&server)));
    assert_eq!(a.status(), Status::Closed);
}
