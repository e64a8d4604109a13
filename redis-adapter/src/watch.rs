//! The watcher: one thread per hub (a [`Fleet`](crate::Fleet), or a
//! breaker built alone) that keeps every breaker's mirror fresh, so that
//! calls never wait on the network to learn of a remote change.
//!
//! - It subscribes to one pattern, `tripword:*`, on which every
//!   compare-and-set of every breaker publishes the word it stored, and
//!   hands each message to the breakers of its channel. Then it reads every
//!   breaker's word once, so nothing published before the subscription is
//!   missed (a breaker that joins later reads its word itself).
//! - It reads every word again every refresh period whatever pub/sub
//!   delivers, up to 256 keys a round trip: a message lost with a broken
//!   connection is made up for within one period, and the server-time
//!   sample is renewed.
//! - Any error (Redis unreachable, slow past the operation timeout, paused)
//!   switches every breaker to its local breaker; the watcher retries every
//!   retry period and switches each back on the first read that succeeds.
//! - In a Redis Cluster (feature `cluster`) it subscribes to each
//!   breaker's sharded channel on the node owning its slot instead, and
//!   follows the slots as they move (`crate::cluster`).
//! - When the hub follows sentinels, a second thread holds a subscription
//!   to their `+switch-master` announcements (`crate::sentinel`); on one,
//!   the watcher subscribes again, on the new primary, without switching
//!   any breaker to its local breaker.
//! - It holds the hub weakly: when the last breaker and the fleet are
//!   dropped, it ends within 100 ms.

use crate::hub::{CHANNEL_PREFIX, Hub};
use crate::remote::parse_published;
use redis::RedisError;
use std::sync::{Arc, Weak};
use std::thread;
use std::time::{Duration, Instant};

/// The longest the watcher blocks before it looks whether its hub is gone.
pub(crate) const SLICE: Duration = Duration::from_millis(100);

pub(crate) fn spawn(hub: &Arc<Hub>) -> std::io::Result<()> {
    crate::sentinel::spawn(hub)?;
    let hub = Arc::downgrade(hub);
    thread::Builder::new()
        .name("tripword-redis watcher".into())
        .spawn(move || run(&hub))?;
    Ok(())
}

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

fn run(hub: &Weak<Hub>) {
    loop {
        let Some(pubsub) = hub.upgrade().map(|h| h.timing.pubsub) else {
            return;
        };
        let end = if pubsub { subscribed(hub) } else { polled(hub) };
        match end {
            End::Gone => return,
            End::Switched => continue,
            End::Failed => match hub.upgrade() {
                Some(h) => h.detach_all(),
                None => return,
            },
        }
        let Some(retry) = hub.upgrade().map(|h| h.timing.retry) else {
            return;
        };
        if !nap(hub, retry) {
            return;
        }
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

fn polled(weak: &Weak<Hub>) -> End {
    loop {
        let Some(hub) = weak.upgrade() else {
            return End::Gone;
        };
        if hub.refresh_all().is_err() {
            return End::Failed;
        }
        let period = hub.timing.refresh;
        drop(hub);
        if !nap(weak, period) {
            return End::Gone;
        }
    }
}

fn subscribed(weak: &Weak<Hub>) -> End {
    match subscribe(weak) {
        Ok(end) | Err(end) => end,
    }
}

fn subscribe(weak: &Weak<Hub>) -> Result<End, End> {
    let hub = weak.upgrade().ok_or(End::Gone)?;
    #[cfg(feature = "cluster")]
    if hub.is_cluster() {
        drop(hub);
        return Err(crate::cluster::subscribed(weak));
    }
    let t = hub.timing;
    let switches = hub.switches();
    let mut con = hub.connect(Instant::now() + t.op_timeout)?;
    con.set_read_timeout(Some(t.op_timeout))?;
    con.set_write_timeout(Some(t.op_timeout))?;
    let mut sub = con.as_pubsub();
    sub.psubscribe(format!("{CHANNEL_PREFIX}*"))?;
    // Subscribed: every change from now on is delivered. Read the words
    // once for the changes made before.
    hub.refresh_all()?;
    drop(hub);
    let mut next = Instant::now() + t.refresh;
    loop {
        let hub = weak.upgrade().ok_or(End::Gone)?;
        if hub.switches() != switches {
            return Err(End::Switched);
        }
        let now = Instant::now();
        if now >= next {
            hub.refresh_all()?;
            next = Instant::now() + t.refresh;
            continue;
        }
        drop(hub);
        // Wake for the next refresh, or every slice to notice the hub went.
        let wait = (next - now).clamp(Duration::from_millis(1), SLICE);
        sub.set_read_timeout(Some(wait))?;
        match sub.get_message() {
            Ok(msg) => {
                let payload: Result<String, _> = msg.get_payload();
                let Some((word, time)) = payload.ok().as_deref().and_then(parse_published) else {
                    continue;
                };
                let hub = weak.upgrade().ok_or(End::Gone)?;
                for inner in hub.on_channel(msg.get_channel_name()) {
                    inner.published(word, time);
                }
            }
            Err(e) if e.is_timeout() => {}
            Err(e) => return Err(e.into()),
        }
    }
}
