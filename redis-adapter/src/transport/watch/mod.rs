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
//!   follows the slots as they move (`cluster`).
//! - When the hub follows sentinels, a second thread holds a subscription
//!   to their `+switch-master` announcements (`sentinel`); on one,
//!   the watcher subscribes again, on the new primary, without switching
//!   any breaker to its local breaker.
//! - It holds the hub weakly: when the last breaker and the fleet are
//!   dropped, it ends within 100 ms.

#[cfg(feature = "cluster")]
mod cluster;
mod pace;
mod pubsub;
mod sentinel;

use super::hub::Hub;
use pace::{End, nap};
use std::sync::{Arc, Weak};
use std::thread;

pub(crate) fn spawn(hub: &Arc<Hub>) -> std::io::Result<()> {
    sentinel::spawn(hub)?;
    let hub = Arc::downgrade(hub);
    thread::Builder::new()
        .name("tripword-redis watcher".into())
        .spawn(move || run(&hub))?;
    Ok(())
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

/// The subscribed watch: sharded on a cluster, one pattern otherwise.
fn subscribed(weak: &Weak<Hub>) -> End {
    #[cfg(feature = "cluster")]
    if weak.upgrade().is_some_and(|hub| hub.is_cluster()) {
        return cluster::subscribed(weak);
    }
    pubsub::subscribed(weak)
}
