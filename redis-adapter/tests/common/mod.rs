//! Shared by the integration tests: a redis-server per test (skipped, with
//! the reason printed, when the binary is absent, unless
//! `TRIPWORD_REDIS_REQUIRE` is set, as CI stage 85 does), generous waits,
//! and a recording observer.
#![allow(dead_code)]

use std::io::Write;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use tripword::{Config, Transition, ValidConfig, W64};
use tripword_redis::server::{self, RedisServer};
use tripword_redis::{Builder, Mode, Observer, RedisBreaker, Scope};

/// A fresh redis-server for this test, or `None` (test skipped) when the
/// binary is absent.
pub fn server() -> Option<RedisServer> {
    if !server::available() {
        assert!(
            std::env::var_os("TRIPWORD_REDIS_REQUIRE").is_none(),
            "`{}` is not runnable and TRIPWORD_REDIS_REQUIRE is set",
            server::binary()
        );
        // Straight to stderr, past the test harness's capture, so the
        // reason shows in a passing run.
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED: `{}` is not on PATH (apt-get install redis-server): this test needs a real Redis",
            server::binary()
        );
        return None;
    }
    Some(RedisServer::start().expect("start redis-server"))
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

impl Observer for Recorder {
    fn on_transition(&self, t: Transition, scope: Scope) {
        self.0.transitions.lock().unwrap().push((t, scope));
    }
    fn on_corrupt_word(&self, raw: u64, counter: u32) {
        self.0.corrupt.lock().unwrap().push((raw, counter));
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
