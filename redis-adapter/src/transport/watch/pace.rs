//! The watcher's pace: why a watch ended, and its sleeps, cut in slices
//! so that a watcher notices within one slice that its hub is gone.

use crate::transport::hub::Hub;
use redis::RedisError;
use std::sync::Weak;
use std::thread;
use std::time::{Duration, Instant};

/// The longest the watcher blocks before it looks whether its hub is gone.
pub(crate) const SLICE: Duration = Duration::from_millis(100);

/// Why a watch ended.
pub(crate) enum End {
    /// The hub is gone: the watcher ends.
    Gone,
    /// Redis failed: every breaker goes local, and the watcher retries.
    Failed,
    /// The sentinels named a new primary: the watcher subscribes again at
    /// once, on it.
    Switched,
}

impl From<RedisError> for End {
    fn from(_: RedisError) -> Self {
        End::Failed
    }
}

/// Sleeps up to `d` in slices; `false` when the hub went meanwhile.
pub(crate) fn nap(hub: &Weak<Hub>, d: Duration) -> bool {
    let until = Instant::now() + d;
    loop {
        if hub.strong_count() == 0 {
            return false;
        }
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return true;
        }
        thread::sleep(left.min(SLICE));
    }
}
