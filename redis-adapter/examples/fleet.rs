//! A fleet demo: one redis-server, one flaky local service, several client
//! processes each with its own `RedisBreaker` on the same key. The service is
//! down until the fleet trips; then it recovers, and after the open time one
//! client in the whole fleet probes it and closes the breaker for everyone.
//!
//! ```sh
//! cargo run --release -p tripword-redis --example fleet            # 4 clients
//! cargo run --release -p tripword-redis --example fleet -- 8       # 8 clients
//! ```
//!
//! Prints each shared transition with the client that made it, the time
//! from the trip to each client's first rejection, and a summary line
//! `FLEET: instances=N trips=1 probes=1 ...`; exits non-zero unless the
//! fleet tripped exactly once and elected exactly one probe.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::process::{Command, ExitCode, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tripword::{Status, Transition};
use tripword_redis::server::{self, RedisServer};
use tripword_redis::{FleetObserver, Mode, RedisBreaker, Scope};
use tripword_std::{BreakerExt, CallError, Settings};

const KEY: &str = "breaker:flaky-service";
/// Open for 1 s, 5 failures in a row trip the fleet, probe timeout 2 s.
const SETTINGS: Settings = Settings::new()
    .failure_threshold(5)
    .open_for(Duration::from_secs(1))
    .probe_timeout(Duration::from_secs(2));

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--client") {
        client(&args[2], &args[3], args[4].parse().expect("port"));
        return ExitCode::SUCCESS;
    }
    let n: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(4);
    parent(n)
}

/// The service: answers `ok` when healthy, `err` otherwise, one line per
/// connection.
fn serve(listener: TcpListener, healthy: Arc<AtomicBool>, served: Arc<AtomicU64>) {
    for stream in listener.incoming() {
        let Ok(mut s) = stream else { continue };
        let healthy = healthy.clone();
        let served = served.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4];
            if s.read_exact(&mut buf).is_ok() {
                served.fetch_add(1, Ordering::Relaxed);
                let reply: &[u8] = if healthy.load(Ordering::SeqCst) {
                    b"ok\n"
                } else {
                    b"err\n"
                };
                let _ = s.write_all(reply);
            }
        });
    }
}

fn parent(n: usize) -> ExitCode {
    if !server::available() {
        eprintln!(
            "fleet: `{}` is not on PATH (apt-get install redis-server)",
            server::binary()
        );
        return ExitCode::from(2);
    }
    let redis = RedisServer::start().expect("start redis-server");
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).expect("bind the service");
    let port = listener.local_addr().unwrap().port();
    let healthy = Arc::new(AtomicBool::new(false));
    let served = Arc::new(AtomicU64::new(0));
    {
        let (h, s) = (healthy.clone(), served.clone());
        std::thread::spawn(move || serve(listener, h, s));
    }
    println!(
        "fleet: redis-server on port {}, a flaky service on port {port} (down), {n} client processes on key {KEY:?}",
        redis.port()
    );

    // The parent watches the fleet's word like any instance.
    let monitor = RedisBreaker::builder(redis.url(), KEY)
        .settings(&SETTINGS)
        .build()
        .expect("monitor");

    let exe = std::env::current_exe().unwrap();
    let mut children: Vec<_> = (0..n)
        .map(|i| {
            Command::new(&exe)
                .args(["--client", &i.to_string(), &redis.url(), &port.to_string()])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .expect("spawn a client")
        })
        .collect();
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    for c in &mut children {
        let out = BufReader::new(c.stdout.take().unwrap());
        let tx = tx.clone();
        std::thread::spawn(move || {
            for line in out.lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
    }
    drop(tx);

    let start = Instant::now();
    let limit = Duration::from_secs(60);
    // Down until the fleet trips; then the service recovers.
    while monitor.status() == Status::Closed && start.elapsed() < limit {
        std::thread::sleep(Duration::from_millis(1));
    }
    healthy.store(true, Ordering::SeqCst);
    println!(
        "fleet: tripped after {} requests to the service; the service recovers now",
        served.load(Ordering::Relaxed)
    );
    // Closed again (one probe succeeded), then a little more traffic.
    while monitor.status() != Status::Closed && start.elapsed() < limit {
        std::thread::sleep(Duration::from_millis(1));
    }
    std::thread::sleep(Duration::from_millis(300));
    for c in &mut children {
        drop(c.stdin.take()); // EOF: stop
    }
    let mut ok = true;
    for (i, c) in children.iter_mut().enumerate() {
        let status = c.wait().expect("wait");
        if !status.success() {
            eprintln!("fleet: client {i} exited with {status}");
            ok = false;
        }
    }

    let (mut trips, mut probes, mut closes) = (0, 0, 0);
    let mut trip_at = None;
    let mut first_rejects = Vec::new();
    let (mut admitted, mut failed, mut rejected) = (0u64, 0u64, 0u64);
    for line in rx.iter() {
        let f: Vec<&str> = line.split_whitespace().collect();
        match f.first().copied() {
            Some("transition") => {
                // transition <client> <from> <to> <counter> <fleet time µs>
                println!("  client {}: {} -> {} (counter {})", f[1], f[2], f[3], f[4]);
                match f[3] {
                    "open" if f[2] == "closed" => {
                        trips += 1;
                        trip_at = f[5].parse::<u64>().ok();
                    }
                    "probing" => probes += 1,
                    "closed" => closes += 1,
                    _ => {}
                }
            }
            Some("first-reject") => {
                first_rejects.push((f[1].to_string(), f[2].parse::<u64>().ok()))
            }
            Some("calls") => {
                admitted += f[2].parse::<u64>().unwrap_or(0);
                failed += f[3].parse::<u64>().unwrap_or(0);
                rejected += f[4].parse::<u64>().unwrap_or(0);
            }
            _ => println!("  {line}"),
        }
    }
    let mut worst = None;
    if let Some(trip) = trip_at {
        first_rejects.sort();
        for (client, at) in &first_rejects {
            if let Some(at) = at {
                let ms = at.saturating_sub(trip) as f64 / 1000.0;
                worst = Some(worst.map_or(ms, |w: f64| w.max(ms)));
                println!(
                    "  client {client}: first rejection {ms:.2} ms after the trip (server clock, estimated)"
                );
            }
        }
    }
    println!(
        "fleet: {trips} shared trip, {probes} probe for the whole fleet ({closes} close); calls admitted {admitted} (failed {failed}), rejected {rejected}; service served {}",
        served.load(Ordering::Relaxed)
    );
    println!(
        "FLEET: instances={n} trips={trips} probes={probes} every-instance-rejecting-within={} ms",
        worst.map_or("n/a".into(), |w| format!("{w:.2}"))
    );
    if ok && trips == 1 && probes == 1 && first_rejects.len() == n {
        ExitCode::SUCCESS
    } else {
        eprintln!("fleet: expected exactly one trip, one probe and a rejection at every client");
        ExitCode::FAILURE
    }
}

/// Prints the shared transitions this client makes, with the fleet time.
struct Printer {
    id: String,
    now: Arc<dyn Fn() -> Option<u64> + Send + Sync>,
}

impl tripword::Observer for Printer {
    // Reported with their scope, below.
    fn on_transition(&self, _: Transition) {}
}

impl FleetObserver for Printer {
    fn on_scoped_transition(&self, t: Transition, scope: Scope) {
        if scope == Scope::Shared {
            let now = (self.now)().map_or("-".into(), |t| t.to_string());
            println!(
                "transition {} {} {} {} {now}",
                self.id, t.from, t.to, t.counter
            );
        }
    }
    fn on_mode(&self, mode: Mode) {
        println!("client {} mode {mode}", self.id);
    }
}

fn call_service(port: u16) -> Result<(), String> {
    let mut s = TcpStream::connect((Ipv4Addr::LOCALHOST, port)).map_err(|e| e.to_string())?;
    s.set_read_timeout(Some(Duration::from_secs(1))).ok();
    s.write_all(b"GET\n").map_err(|e| e.to_string())?;
    let mut line = String::new();
    BufReader::new(s)
        .read_line(&mut line)
        .map_err(|e| e.to_string())?;
    if line.trim() == "ok" {
        Ok(())
    } else {
        Err(line.trim().to_string())
    }
}

fn client(id: &str, url: &str, port: u16) {
    // The observer reads the breaker's fleet clock; the breaker is built
    // after it, so it reads through a slot filled in below.
    let slot: Arc<std::sync::OnceLock<Arc<RedisBreaker>>> = Arc::default();
    let now = {
        let slot = slot.clone();
        Arc::new(move || slot.get().and_then(|b| b.fleet_now()))
    };
    let breaker = Arc::new(
        RedisBreaker::builder(url, KEY)
            .settings(&SETTINGS)
            .op_timeout(Duration::from_millis(200))
            .refresh(Duration::from_millis(500))
            .observer(Printer { id: id.into(), now })
            .build()
            .expect("build"),
    );
    let _ = slot.set(breaker.clone());
    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let _ = std::io::stdin().lock().read_to_end(&mut Vec::new());
            stop.store(true, Ordering::SeqCst);
        });
    }
    let (mut admitted, mut failed, mut rejected) = (0u64, 0u64, 0u64);
    let mut first_reject = None;
    while !stop.load(Ordering::SeqCst) {
        match breaker.call(|| call_service(port)) {
            Ok(()) => admitted += 1,
            Err(CallError::Inner(_)) => {
                admitted += 1;
                failed += 1;
            }
            Err(CallError::Open(why)) => {
                rejected += 1;
                if first_reject.is_none() {
                    first_reject = breaker.fleet_now();
                    // "circuit 'breaker:flaky-service' open: call not
                    // admitted (retry after 998ms)"
                    println!("client {id} first rejection: {why}");
                }
            }
        }
        std::thread::sleep(Duration::from_micros(500));
    }
    println!(
        "first-reject {id} {}",
        first_reject.map_or("-".into(), |t| t.to_string())
    );
    println!("calls {id} {admitted} {failed} {rejected}");
}
