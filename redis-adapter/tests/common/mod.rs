//! Shared by the integration tests: a redis-server per test, generous
//! waits, and a recording observer.
//!
//! A test that starts a server is marked
//! `#[cfg_attr(not(tripword_redis_server), ignore = "...")]`: the build
//! script (`build.rs`) sets that cfg when `redis-server` runs (or when
//! `TRIPWORD_REDIS_REQUIRE` is set, as in CI), so that without it the test
//! is reported as ignored, never as passed. A test that runs finds its
//! server or fails.
#![allow(dead_code)]

use std::io::Write;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use tripword::{Config, Transition, ValidConfig, W64};
use tripword_redis::server::{self, RedisServer};
use tripword_redis::{Builder, FleetObserver, Mode, RedisBreaker, Scope};

/// A fresh redis-server for this test; fails the test when none starts.
pub fn server() -> RedisServer {
    RedisServer::start().unwrap_or_else(|e| {
        panic!(
            "cannot start `{}` ({e}): this test needs a real Redis (apt-get install redis-server)",
            server::binary()
        )
    })
}

/// Waits up to `limit` (generous: a bound on a descheduled machine, not a
/// measurement) for `f` to hold.
pub fn eventually(limit: Duration, mut f: impl FnMut() -> bool) -> bool {
    let until = Instant::now() + limit;
    loop {
        if f() {
            return true;
        }
        if Instant::now() > until {
            return false;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// The generous limit for anything that should take milliseconds.
pub const LONG: Duration = Duration::from_secs(20);

pub fn config(threshold: u32, open_for_us: u64, probe_timeout_us: u64) -> ValidConfig<W64> {
    Config::new()
        .failure_threshold(threshold)
        .open_for(open_for_us)
        .probe_timeout(probe_timeout_us)
        .check()
        .expect("valid config")
}

/// A builder with test timings: operation timeout 500 ms (a loaded CI
/// machine must not trip it by accident), refresh 200 ms, retry 50 ms.
pub fn builder(server: &RedisServer, key: &str, config: ValidConfig<W64>) -> Builder {
    RedisBreaker::builder(server.url(), key)
        .config(config)
        .op_timeout(Duration::from_millis(500))
        .refresh(Duration::from_millis(200))
        .retry(Duration::from_millis(50))
}

/// Everything an instance reported.
#[derive(Debug, Default)]
pub struct Log {
    pub transitions: Mutex<Vec<(Transition, Scope)>>,
    pub corrupt: Mutex<Vec<(u64, u32)>>,
    pub modes: Mutex<Vec<Mode>>,
}

impl Log {
    pub fn shared(&self) -> Vec<Transition> {
        self.transitions
            .lock()
            .unwrap()
            .iter()
            .filter(|(_, s)| *s == Scope::Shared)
            .map(|(t, _)| *t)
            .collect()
    }
}

/// An observer recording into a shared [`Log`].
#[derive(Clone, Debug, Default)]
pub struct Recorder(pub std::sync::Arc<Log>);

impl tripword::Observer for Recorder {
    // A fleet breaker reports its transitions with their scope, below.
    fn on_transition(&self, _: Transition) {}
    fn on_corrupt_word(&self, raw: u64, counter: u32) {
        self.0.corrupt.lock().unwrap().push((raw, counter));
    }
}

impl FleetObserver for Recorder {
    fn on_scoped_transition(&self, t: Transition, scope: Scope) {
        self.0.transitions.lock().unwrap().push((t, scope));
    }
    fn on_mode(&self, mode: Mode) {
        self.0.modes.lock().unwrap().push(mode);
    }
}

/// A plain connection for poking at the key directly.
pub fn raw(server: &RedisServer) -> redis::Connection {
    redis::Client::open(server.url())
        .unwrap()
        .get_connection_with_timeout(Duration::from_secs(5))
        .unwrap()
}

/// The word under `key` as stored (None: missing).
pub fn stored(server: &RedisServer, key: &str) -> Option<String> {
    redis::cmd("GET").arg(key).query(&mut raw(server)).unwrap()
}

/// An instance clock the test sets: estimates of the server's time move only
/// when the test moves it (a frozen clock keeps the last sample's estimate
/// valid for as long as the test needs).
#[derive(Clone, Debug)]
pub struct ManualLocal(pub std::sync::Arc<std::sync::atomic::AtomicU64>);

impl ManualLocal {
    pub fn new(at: u64) -> ManualLocal {
        ManualLocal(std::sync::Arc::new(std::sync::atomic::AtomicU64::new(at)))
    }
    pub fn advance(&self, micros: u64) {
        self.0
            .fetch_add(micros, std::sync::atomic::Ordering::SeqCst);
    }
}

impl tripword_redis::LocalClock for ManualLocal {
    fn micros(&self) -> u64 {
        self.0.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// The server's `TIME` in microseconds.
pub fn server_now(server: &RedisServer) -> u64 {
    let (s, us): (u64, u64) = redis::cmd("TIME").query(&mut raw(server)).unwrap();
    s * 1_000_000 + us
}

/// A TCP proxy in front of a redis-server that answers a `TIME` command with
/// an error while `fail_time` is set, and forwards everything else (the Lua
/// scripts read `TIME` inside the server, untouched). Connections end when
/// either side closes.
pub struct FaultProxy {
    pub port: u16,
    pub fail_time: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl FaultProxy {
    pub fn start(server: &RedisServer) -> FaultProxy {
        use std::net::{Ipv4Addr, TcpListener, TcpStream};
        use std::sync::Arc;
        use std::sync::atomic::{AtomicBool, Ordering};
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let port = listener.local_addr().unwrap().port();
        let target = server.port();
        let fail_time = Arc::new(AtomicBool::new(false));
        let fail = fail_time.clone();
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { return };
                let Ok(upstream) = TcpStream::connect((Ipv4Addr::LOCALHOST, target)) else {
                    continue;
                };
                let (mut c_read, mut c_write) = (client.try_clone().unwrap(), client);
                let (mut u_read, mut u_write) = (upstream.try_clone().unwrap(), upstream);
                let mut c_reply = c_write.try_clone().unwrap();
                let fail = fail.clone();
                std::thread::spawn(move || {
                    let _ = std::io::copy(&mut u_read, &mut c_write);
                    let _ = c_write.shutdown(std::net::Shutdown::Both);
                });
                std::thread::spawn(move || {
                    let mut buf = [0u8; 64 * 1024];
                    loop {
                        let n = match std::io::Read::read(&mut c_read, &mut buf) {
                            Ok(0) | Err(_) => break,
                            Ok(n) => n,
                        };
                        let request = &buf[..n];
                        if fail.load(Ordering::SeqCst) && request == b"*1\r\n$4\r\nTIME\r\n" {
                            if c_reply
                                .write_all(b"-ERR tripword test: TIME refused\r\n")
                                .is_err()
                            {
                                break;
                            }
                        } else if u_write.write_all(request).is_err() {
                            break;
                        }
                    }
                    let _ = u_write.shutdown(std::net::Shutdown::Both);
                });
            }
        });
        FaultProxy { port, fail_time }
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }
}

/// The clients connected to `server`, not counting the connection that asks.
pub fn clients(server: &RedisServer) -> usize {
    let list: String = redis::cmd("CLIENT")
        .arg("LIST")
        .query(&mut raw(server))
        .unwrap();
    list.lines().count() - 1
}

/// Connections the server accepted since it started.
pub fn connections_received(server: &RedisServer) -> u64 {
    let info: String = redis::cmd("INFO")
        .arg("stats")
        .query(&mut raw(server))
        .unwrap();
    info.lines()
        .find_map(|l| l.strip_prefix("total_connections_received:"))
        .and_then(|v| v.trim().parse().ok())
        .expect("INFO stats has total_connections_received")
}

/// The pattern subscriptions the server holds (`PUBSUB NUMPAT`).
pub fn numpat(server: &RedisServer) -> i64 {
    redis::cmd("PUBSUB")
        .arg("NUMPAT")
        .query(&mut raw(server))
        .unwrap()
}

/// Processes of this test binary started again in a role (the test named
/// `role`, run alone, with `env` set to the process's index and
/// `TRIPWORD_REDIS_URL` to the server's URL): a line to each on its stdin,
/// the lines each prints after `@@ ` gathered on one channel. Killed and
/// reaped when dropped, also when the test fails.
pub struct Processes {
    procs: Vec<std::process::Child>,
    stdin: Vec<std::process::ChildStdin>,
    lines: std::sync::mpsc::Receiver<(usize, String)>,
}

/// The environment variable that carries the server's URL to a role.
pub const URL: &str = "TRIPWORD_REDIS_URL";

impl Processes {
    pub fn spawn(n: usize, role: &str, env: &str, url: &str) -> Processes {
        use std::io::BufRead;
        use std::process::{Command, Stdio};
        let exe = std::env::current_exe().unwrap();
        let (tx, lines) = std::sync::mpsc::channel();
        let mut procs = Vec::new();
        let mut stdin = Vec::new();
        for i in 0..n {
            let mut child = Command::new(&exe)
                // A role is an ignored test: only its children run it.
                .args([role, "--exact", "--ignored", "--nocapture"])
                .args(["--test-threads", "1"])
                .env(env, i.to_string())
                .env(URL, url)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .expect("spawn the test binary in a role");
            stdin.push(child.stdin.take().unwrap());
            let out = std::io::BufReader::new(child.stdout.take().unwrap());
            let tx = tx.clone();
            std::thread::spawn(move || {
                for line in out.lines().map_while(Result::ok) {
                    // libtest may print "test <role> ... " first.
                    if let Some(at) = line.find("@@ ") {
                        let _ = tx.send((i, line[at + 3..].to_string()));
                    }
                }
            });
            procs.push(child);
        }
        Processes {
            procs,
            stdin,
            lines,
        }
    }

    /// Sends `msg` to process `i`.
    pub fn send(&mut self, i: usize, msg: &str) {
        writeln!(self.stdin[i], "{msg}").expect("the process is alive");
        self.stdin[i].flush().unwrap();
    }

    /// Sends `msg` to every process.
    pub fn send_all(&mut self, msg: &str) {
        for i in 0..self.stdin.len() {
            self.send(i, msg);
        }
    }

    /// The next line of any process within `limit`, if one comes.
    pub fn try_next(&self, limit: Duration) -> Option<(usize, String)> {
        self.lines.recv_timeout(limit).ok()
    }

    /// The next line of any process, within `limit`.
    pub fn next(&self, limit: Duration) -> (usize, String) {
        self.lines
            .recv_timeout(limit)
            .unwrap_or_else(|_| panic!("a process answers within {limit:?}"))
    }
}

impl Processes {
    /// Waits for every process to exit; whether each exited with success.
    pub fn wait_all(&mut self) -> Vec<bool> {
        self.stdin.clear();
        self.procs
            .iter_mut()
            .map(|c| c.wait().is_ok_and(|s| s.success()))
            .collect()
    }
}

impl Drop for Processes {
    fn drop(&mut self) {
        self.stdin.clear();
        for c in &mut self.procs {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// A port nothing listens on now, for a server a test starts: picked at
/// random below the kernel's ephemeral range, so that no connection's
/// local end takes it before the server binds it (another test's server
/// still may: a caller checks that its own server answers).
pub fn listen_port() -> u16 {
    use std::hash::{BuildHasher, RandomState};
    let low = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|r| r.split_whitespace().next()?.parse::<u16>().ok())
        .unwrap_or(32768);
    if low < 12000 {
        return free_port();
    }
    let span = u64::from(low - 11000);
    for i in 0u64..64 {
        let port = 10000 + (RandomState::new().hash_one(i) % span) as u16;
        if std::net::TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, port)).is_ok() {
            return port;
        }
    }
    free_port()
}

/// A port nothing listens on now (the OS's pick of a free one).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, 0))
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}
