//! A fleet of tokio services: one redis-server, several instance processes,
//! each a tower stack with a breaker per upstream host, shared fleet-wide
//! through Redis: `ServiceBuilder` → `RegistryLayer::new(fleet, host)` → a
//! backend per host. One host fails twice and recovers twice; then Redis is
//! paused (SIGSTOP) for a while as every instance keeps calling, and resumed
//! (SIGCONT).
//!
//! ```sh
//! cargo run --release -p tripword-redis --example fleet_service        # 3 instances
//! cargo run --release -p tripword-redis --example fleet_service -- 5   # 5 instances
//! ```
//!
//! Its last line is
//! `FLEET-SERVICE: keys=K trips=T probes_per_recovery=1 stall_ms=S ok`:
//! `K` breakers (one per host), `T` shared trips of the failing host, one
//! probe for the whole fleet per recovery, and `S` the 99th percentile, in
//! milliseconds, of the calls to healthy hosts made while Redis was paused,
//! over every instance. The example exits non-zero unless: the failing host
//! tripped the fleet once per outage and each recovery elected exactly one
//! probe; the healthy hosts never tripped; every instance made calls while
//! Redis was paused, and those calls made no round trip to Redis; and
//! `S` < 50 ms. The percentile, not the longest call, is the claim: a call
//! that touched Redis would wait out the operation timeout (200 ms here), so
//! every call would be slow, while a process the machine deschedules for a
//! moment delays a few calls only. The longest call is printed beside it.
//! The redis-server is the example's own, on a free port, stopped when it
//! ends, a failure included.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use tower::{Service, ServiceBuilder, ServiceExt, service_fn};
use tripword::{Status, Transition};
use tripword_redis::server::{self, RedisServer};
use tripword_redis::{Fleet, FleetObserver, Mode, RedisBreaker, Scope};
use tripword_std::CallError;
use tripword_std::Settings;
use tripword_std::tower::RegistryLayer;

/// The upstream hosts; the last one fails when told to.
const HOSTS: [&str; 4] = [
    "api.example.com",
    "db.example.com",
    "cdn.example.com",
    "flaky.example.com",
];
const FLAKY: &str = "flaky.example.com";
/// Outages of the flaky host, each a shared trip and a recovery.
const OUTAGES: usize = 2;
/// 5 failures in a row trip a host's breaker fleet-wide. Open for 2 s: the
/// parent tells the instances the host is back as soon as it sees the trip,
/// so the probe finds it up even on a machine slow to pass the word on.
const SETTINGS: Settings = Settings::new()
    .failure_threshold(5)
    .open_for(Duration::from_secs(2))
    .probe_timeout(Duration::from_secs(5));
/// Above the claimed 50 ms: a call that waited on Redis would show.
const OP_TIMEOUT: Duration = Duration::from_millis(200);
const PAUSE: Duration = Duration::from_millis(1500);
const STALL_LIMIT_MS: f64 = 50.0;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--instance") {
        return instance(&args[2], &args[3]);
    }
    let n: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(3);
    if !server::available() {
        eprintln!(
            "fleet_service: `{}` is not on PATH (apt-get install redis-server)",
            server::binary()
        );
        return ExitCode::from(2);
    }
    // Dropped on every way out of `parent`, a panic included: the server
    // is killed (a paused one too).
    let redis = RedisServer::start().expect("start redis-server");
    let mut instances = Vec::new();
    let code = parent(&redis, n, &mut instances);
    for c in &mut instances {
        let _ = c.kill();
        let _ = c.wait();
    }
    drop(redis);
    code
}

/// The parent's handles on its instances: stdin to steer, lines back.
struct Fleetwide {
    inputs: Vec<std::process::ChildStdin>,
    lines: std::sync::mpsc::Receiver<(usize, String)>,
    log: Vec<(usize, String)>,
}

impl Fleetwide {
    fn tell(&mut self, what: &str) {
        for i in &mut self.inputs {
            let _ = writeln!(i, "{what}");
            let _ = i.flush();
        }
    }

    /// Collects lines until each instance has printed `word`, or the limit.
    fn each_says(&mut self, word: &str, limit: Duration) -> bool {
        let until = Instant::now() + limit;
        let mut seen = vec![false; self.inputs.len()];
        while seen.iter().any(|s| !s) {
            let left = until.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok((i, line)) => {
                    if line.split_whitespace().next() == Some(word) {
                        seen[i] = true;
                    }
                    self.log.push((i, line));
                }
                Err(_) => return false,
            }
        }
        true
    }

    fn drain(&mut self) {
        while let Ok(l) = self.lines.try_recv() {
            self.log.push(l);
        }
    }
}

fn wait_for(limit: Duration, mut f: impl FnMut() -> bool) -> bool {
    let until = Instant::now() + limit;
    while !f() {
        if Instant::now() > until {
            return false;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    true
}

fn parent(redis: &RedisServer, n: usize, children: &mut Vec<Child>) -> ExitCode {
    println!(
        "fleet_service: redis-server on port {}, {n} instance processes, hosts {HOSTS:?}",
        redis.port()
    );
    let exe = std::env::current_exe().expect("own path");
    let (tx, lines) = std::sync::mpsc::channel();
    let mut inputs = Vec::new();
    for i in 0..n {
        let mut c = Command::new(&exe)
            .args(["--instance", &i.to_string(), &redis.url()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawn an instance");
        inputs.push(c.stdin.take().unwrap());
        let out = BufReader::new(c.stdout.take().unwrap());
        let tx = tx.clone();
        std::thread::spawn(move || {
            for line in out.lines().map_while(Result::ok) {
                let _ = tx.send((i, line));
            }
        });
        children.push(c);
    }
    drop(tx);
    let mut fleet = Fleetwide {
        inputs,
        lines,
        log: Vec::new(),
    };
    let limit = Duration::from_secs(30);
    let mut ok = fleet.each_says("ready", limit);
    // The parent watches the flaky host's word like any instance.
    let monitor = RedisBreaker::builder(redis.url(), FLAKY)
        .settings(&SETTINGS)
        .build()
        .expect("monitor");
    fleet.tell("go");
    for outage in 1..=OUTAGES {
        fleet.tell("down");
        ok &= wait_for(limit, || monitor.status() != Status::Closed);
        println!("fleet_service: outage {outage}: {FLAKY} tripped the fleet; it recovers now");
        fleet.tell("up");
        ok &= wait_for(limit, || monitor.status() == Status::Closed);
        println!("fleet_service: outage {outage}: closed again");
    }
    // Redis stops answering while every instance keeps calling.
    fleet.tell("pause");
    ok &= fleet.each_says("pausing", limit);
    redis.pause().expect("SIGSTOP redis-server");
    println!("fleet_service: redis-server paused (SIGSTOP) for {PAUSE:?}");
    std::thread::sleep(PAUSE);
    fleet.tell("resume");
    ok &= fleet.each_says("resumed", limit);
    redis.resume().expect("SIGCONT redis-server");
    println!("fleet_service: redis-server resumed (SIGCONT)");
    fleet.tell("stop");
    ok &= fleet.each_says("done", limit);
    for (i, c) in children.iter_mut().enumerate() {
        match c.wait() {
            Ok(s) if s.success() => {}
            s => {
                eprintln!("fleet_service: instance {i} exited with {s:?}");
                ok = false;
            }
        }
    }
    fleet.drain();
    if summary(&fleet.log, n) && ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Reads the instances' lines; prints the summary line; true when every
/// check holds.
fn summary(log: &[(usize, String)], n: usize) -> bool {
    let mut per_key: HashMap<String, (u32, u32, u32)> = HashMap::new();
    let mut paused_ms = Vec::new();
    let (mut paused_trips, mut rejoined, mut calls) = (0u64, 0, 0u64);
    for (i, line) in log {
        let f: Vec<&str> = line.split_whitespace().collect();
        match f.as_slice() {
            // shared <key> <from> <to>
            ["shared", key, from, to] => {
                println!("  instance {i}: {key}: {from} -> {to}");
                let e = per_key.entry(key.to_string()).or_default();
                match (*from, *to) {
                    ("closed", "open") => e.0 += 1,
                    (_, "probing") => e.1 += 1,
                    ("probing", "closed") => e.2 += 1,
                    _ => {}
                }
            }
            ["latency", us @ ..] => {
                paused_ms.extend(
                    us.iter()
                        .filter_map(|u| u.parse::<f64>().ok())
                        .map(|u| u / 1e3),
                );
            }
            ["done", c, trips, mode] => {
                calls += c.parse::<u64>().unwrap_or(0);
                paused_trips += trips.parse::<u64>().unwrap_or(u64::MAX / 2);
                rejoined += usize::from(*mode == "shared");
            }
            _ => println!("  instance {i}: {line}"),
        }
    }
    let (trips, probes, closes) = per_key.get(FLAKY).copied().unwrap_or_default();
    let others_tripped = per_key.iter().any(|(k, (t, _, _))| k != FLAKY && *t > 0);
    paused_ms.sort_by(f64::total_cmp);
    let at = |p: f64| {
        paused_ms
            .get(((paused_ms.len().max(1) - 1) as f64 * p).round() as usize)
            .copied()
            .unwrap_or(f64::NAN)
    };
    let (median, p99, max) = (at(0.5), at(0.99), at(1.0));
    println!(
        "fleet_service: {calls} calls in all; while Redis was paused, {} calls to healthy hosts: \
         median {median:.3} ms, p99 {p99:.3} ms, longest {max:.3} ms, round trips to Redis {paused_trips}",
        paused_ms.len()
    );
    println!(
        "fleet_service: {FLAKY}: {trips} shared trips, {probes} probes, {closes} recoveries; \
         {rejoined} of {n} instances back on the shared word"
    );
    let per_recovery = if closes > 0 {
        probes as f64 / closes as f64
    } else {
        f64::NAN
    };
    let checks = [
        (trips as usize == OUTAGES, "one shared trip per outage"),
        (
            probes == closes && closes as usize == OUTAGES,
            "one probe per recovery",
        ),
        (!others_tripped, "the healthy hosts never tripped"),
        (
            paused_ms.len() >= n * 10,
            "every instance called while Redis was paused",
        ),
        (paused_trips == 0, "no closed call went to Redis"),
        (p99 < STALL_LIMIT_MS, "closed calls did not stall"),
        (rejoined == n, "every instance rejoined the shared word"),
    ];
    let failed: Vec<&str> = checks.iter().filter(|c| !c.0).map(|c| c.1).collect();
    println!(
        "FLEET-SERVICE: keys={} trips={trips} probes_per_recovery={per_recovery} stall_ms={p99:.3} {}",
        HOSTS.len(),
        if failed.is_empty() { "ok" } else { "FAILED" }
    );
    if !failed.is_empty() {
        eprintln!("fleet_service: failed: {}", failed.join("; "));
    }
    failed.is_empty()
}

/// Prints the shared transitions this instance makes on its key.
struct Printer(String);

impl tripword::Observer for Printer {
    // Reported with their scope, below.
    fn on_transition(&self, _: Transition) {}
}

impl FleetObserver for Printer {
    fn on_scoped_transition(&self, t: Transition, scope: Scope) {
        if scope == Scope::Shared {
            println!("shared {} {} {}", self.0, t.from, t.to);
        }
    }
    fn on_mode(&self, mode: Mode) {
        println!("mode {} {mode}", self.0);
    }
}

/// A request to an upstream host.
#[derive(Clone, Copy, Debug)]
struct Request {
    host: &'static str,
}

/// One instance: a tower stack on a current-thread tokio runtime, a task
/// per host calling through it, steered by lines on stdin.
fn instance(id: &str, url: &str) -> ExitCode {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(run(id, url))
}

#[derive(Default)]
struct Flags {
    go: AtomicBool,
    flaky_down: AtomicBool,
    paused: AtomicBool,
    stop: AtomicBool,
}

async fn run(_id: &str, url: &str) -> ExitCode {
    let fleet = Arc::new(
        Fleet::builder(url)
            .settings(&SETTINGS)
            .op_timeout(OP_TIMEOUT)
            .refresh(Duration::from_millis(200))
            .retry(Duration::from_millis(100))
            .observer_per_key(|key| Printer(key.to_owned()))
            .build()
            .expect("fleet"),
    );
    let flags = Arc::new(Flags::default());
    // A backend per host; the flaky one answers an error while down.
    let backends: HashMap<&'static str, _> = HOSTS
        .iter()
        .map(|&host| {
            let flags = flags.clone();
            let backend = service_fn(move |req: Request| {
                let down = req.host == FLAKY && flags.flaky_down.load(Ordering::SeqCst);
                async move {
                    if down {
                        Err("502 from upstream")
                    } else {
                        Ok(req.host)
                    }
                }
            });
            (host, backend)
        })
        .collect();
    let backends = Arc::new(backends);
    let route = service_fn(move |req: Request| {
        let mut backend = backends[req.host].clone();
        async move { backend.call(req).await }
    });
    let stack = ServiceBuilder::new()
        .layer(RegistryLayer::new(fleet.clone(), |req: &Request| {
            req.host.to_owned()
        }))
        .service(route);
    // Every key's breaker made before any traffic.
    for host in HOSTS {
        let _ = fleet.breaker(host);
    }
    println!("ready");
    {
        let flags = flags.clone();
        std::thread::spawn(move || steer(&flags));
    }
    while !flags.go.load(Ordering::SeqCst) {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let healthy = |h: &str| h != FLAKY;
    let round_trips = |fleet: &Fleet| -> u64 {
        HOSTS
            .iter()
            .filter(|h| healthy(h))
            .map(|h| fleet.breaker(h).stats().call_round_trips)
            .sum()
    };
    let loop_for = |host: &'static str| {
        let mut svc = stack.clone();
        let flags = flags.clone();
        async move {
            let (mut calls, mut paused) = (0u64, Vec::new());
            while !flags.stop.load(Ordering::SeqCst) {
                let during_pause = flags.paused.load(Ordering::SeqCst);
                let t = Instant::now();
                let reply = match svc.ready().await {
                    Ok(s) => s.call(Request { host }).await,
                    Err(e) => Err(e),
                };
                let took = t.elapsed();
                calls += 1;
                match reply {
                    Ok(_) => {
                        if during_pause && healthy(host) {
                            paused.push(took.as_micros() as u64);
                        }
                    }
                    Err(CallError::Open(why)) if host == FLAKY => {
                        let _ = why; // "circuit 'flaky.example.com' open: ..."
                    }
                    Err(CallError::Inner(_)) if host == FLAKY => {}
                    Err(e) => println!("error {host} {e}"),
                }
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            (calls, paused)
        }
    };
    // The round trips of the healthy hosts' breakers over the pause.
    let watch_pause = {
        let (fleet, flags) = (fleet.clone(), flags.clone());
        async move {
            while !flags.paused.load(Ordering::SeqCst) {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            let before = round_trips(&fleet);
            println!("pausing");
            while flags.paused.load(Ordering::SeqCst) {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            let during = round_trips(&fleet) - before;
            println!("resumed");
            during
        }
    };
    let (a, b, c, d, paused_trips) = tokio::join!(
        loop_for(HOSTS[0]),
        loop_for(HOSTS[1]),
        loop_for(HOSTS[2]),
        loop_for(HOSTS[3]),
        watch_pause
    );
    // Back on the shared word after SIGCONT (the limit: a bound, not a
    // measurement).
    let until = Instant::now() + Duration::from_secs(20);
    while HOSTS
        .iter()
        .any(|h| fleet.breaker(h).mode() != Mode::Shared)
        && Instant::now() < until
    {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let shared = HOSTS
        .iter()
        .all(|h| fleet.breaker(h).mode() == Mode::Shared);
    let mut calls = 0;
    for (n, paused) in [a, b, c, d] {
        calls += n;
        if !paused.is_empty() {
            let us: Vec<String> = paused.iter().map(u64::to_string).collect();
            println!("latency {}", us.join(" "));
        }
    }
    println!(
        "done {calls} {paused_trips} {}",
        if shared { "shared" } else { "local" }
    );
    ExitCode::SUCCESS
}

/// Lines from the parent: `go`, `down`, `up`, `pause`, `resume`, `stop`
/// (or end of input).
fn steer(flags: &Flags) {
    for line in std::io::stdin().lock().lines().map_while(Result::ok) {
        match line.trim() {
            "go" => flags.go.store(true, Ordering::SeqCst),
            "down" => flags.flaky_down.store(true, Ordering::SeqCst),
            "up" => flags.flaky_down.store(false, Ordering::SeqCst),
            "pause" => flags.paused.store(true, Ordering::SeqCst),
            "resume" => flags.paused.store(false, Ordering::SeqCst),
            "stop" => break,
            _ => {}
        }
    }
    flags.go.store(true, Ordering::SeqCst);
    flags.stop.store(true, Ordering::SeqCst);
}
