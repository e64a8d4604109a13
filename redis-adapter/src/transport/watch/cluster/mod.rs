//! The watcher on a Redis Cluster (feature `cluster`): one plain
//! connection per primary that owns a breaker's slot, with one
//! `SSUBSCRIBE` per channel there. When a slot moves, its node drops those
//! subscriptions (a `sunsubscribe` it sends): the watcher reads the slot
//! map again and subscribes on the new owner, and reads every word once
//! after, so a change made meanwhile is not missed beyond that read; the
//! periodic refresh bounds the staleness whatever happens.
//!
//! The watcher's decisions are plain values and functions, apart from its
//! connections, so that they are tested without a server: what a node sent
//! (`push`), what following the breakers takes (`plan`), what each push
//! asks of the bookkeeping (`Book`), and when to read every word, the slot
//! map, and follow again (`Pace`, given the time, never reading the clock).
//! `Subscriptions` only carries them out on the connections.

mod decide;
#[cfg(test)]
mod tests;

use super::pace::{End, nap};
use crate::transport::cluster::{Addr, SlotMap, slot_map};
use crate::transport::hub::Hub;
use crate::transport::script::parse_published;
use decide::{Book, Due, Pace, plan, push, turn};
use redis::{Connection, RedisResult};
use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};
use std::sync::Weak;
use std::time::{Duration, Instant};

/// The slot map, read from any node through the hub's connection pool.
fn read_slot_map(hub: &Hub) -> RedisResult<SlotMap> {
    let (reply, _, _) = hub.remote("", "", 0, |cell| cell.cluster_slots());
    slot_map(reply?)
}

/// The watcher's subscriptions: its connection to each node, and its
/// bookkeeping.
#[derive(Default)]
struct Subscriptions {
    /// The connection to each node the watcher subscribed on.
    cons: HashMap<Addr, Connection>,
    book: Book,
}

/// The watcher of a hub on a cluster, subscribed to every breaker's
/// sharded channel on the node owning it (see the module's text). Returns
/// when the hub is gone, or when reading the words or the slot map fails
/// (every breaker then goes local, and the watcher retries).
pub(crate) fn subscribed(weak: &Weak<Hub>) -> End {
    let mut subs = Subscriptions::default();
    match subs.run(weak) {
        Ok(end) | Err(end) => end,
    }
}

impl Subscriptions {
    /// The watch: follows the breakers, reads the words and the slot map
    /// when `Pace` says, and reads the pushes meanwhile. The decisions are
    /// `Pace`'s, `plan`'s and `Book`'s; here are the clock and the
    /// connections.
    fn run(&mut self, weak: &Weak<Hub>) -> Result<End, End> {
        let hub = weak.upgrade().ok_or(End::Gone)?;
        let period = hub.timing.refresh;
        let mut slots = read_slot_map(&hub)?;
        drop(hub);
        let mut pace = Pace::new(Instant::now(), period);
        loop {
            let hub = weak.upgrade().ok_or(End::Gone)?;
            if std::mem::take(&mut self.book.reload) {
                slots = read_slot_map(&hub)?;
                pace.reloaded();
            }
            let added = pace.follow(hub.changes()) && self.follow(&hub, &slots);
            match pace.due(Instant::now(), added) {
                Due::Nothing => {}
                // Every word read after the subscriptions: a change made
                // before them is not missed.
                Due::Words => {
                    hub.refresh_all()?;
                    pace.refreshed(Instant::now());
                }
                Due::WordsAndSlots => {
                    hub.refresh_all()?;
                    slots = read_slot_map(&hub)?;
                    pace.reloaded();
                    pace.refreshed(Instant::now());
                }
            }
            let wait = pace.wait(Instant::now());
            if self.cons.is_empty() {
                drop(hub);
                if !nap(weak, wait) {
                    return Ok(End::Gone);
                }
                continue;
            }
            self.read(&hub, turn(wait, self.cons.len()));
        }
    }

    /// Subscribes to the live breakers' channels on the nodes owning them,
    /// and drops the channels of breakers that are gone or that moved.
    /// Returns whether any channel was subscribed.
    fn follow(&mut self, hub: &Hub, slots: &SlotMap) -> bool {
        let live = hub.live();
        let channels = live.iter().map(|m| m.channel().to_owned());
        let plan = plan(channels, slots, &self.book.at);
        for ch in &plan.unsubscribe {
            self.unsubscribe(ch);
        }
        let mut added = false;
        for (addr, channels) in plan.subscribe {
            added |= self.subscribe(hub, addr, &channels);
        }
        added
    }

    /// Forgets `ch`, and unsubscribes it on its node.
    fn unsubscribe(&mut self, ch: &str) {
        let Some(addr) = self.book.forget(ch) else {
            return;
        };
        let Some(con) = self.cons.get_mut(&addr) else {
            return;
        };
        let packed = redis::cmd("SUNSUBSCRIBE").arg(ch).get_packed_command();
        if con.send_packed_command(&packed).is_err() {
            self.lost(&addr);
        }
    }

    /// The connection to `addr` failed: it is closed, and its channels are
    /// subscribed again where the slot map says.
    fn lost(&mut self, addr: &Addr) {
        self.cons.remove(addr);
        self.book.lost(addr);
    }

    /// Subscribes to `channels` on `addr`, and waits for the node to
    /// confirm them (a message read meanwhile is delivered). Returns
    /// whether they were.
    fn subscribe(&mut self, hub: &Hub, addr: Addr, channels: &[String]) -> bool {
        let Some(cluster) = &hub.cluster else {
            return false;
        };
        let timeout = hub.timing.op_timeout;
        let con = match self.cons.entry(addr.clone()) {
            Entry::Occupied(held) => held.into_mut(),
            Entry::Vacant(new) => match cluster.node(&addr, timeout) {
                Ok(con) => new.insert(con),
                Err(_) => {
                    self.book.lost(&addr);
                    return false;
                }
            },
        };
        // One command a channel: the channels of one command must share
        // a slot.
        let mut packed = Vec::new();
        for ch in channels {
            packed.extend(redis::cmd("SSUBSCRIBE").arg(ch).get_packed_command());
        }
        let sent = con.set_write_timeout(Some(timeout)).is_ok()
            && con.set_read_timeout(Some(timeout)).is_ok()
            && con.send_packed_command(&packed).is_ok();
        if !sent {
            self.lost(&addr);
            return false;
        }
        let mut waiting: HashSet<String> = channels.iter().cloned().collect();
        while !waiting.is_empty() {
            match con.recv_response() {
                Ok(value) => {
                    if let Some((ch, payload)) = self.book.take(&addr, push(value), &mut waiting) {
                        deliver(hub, &ch, &payload);
                    }
                }
                // A `MOVED` (the slot map was stale) or a broken
                // connection: start that node afresh.
                Err(_) => {
                    self.lost(&addr);
                    return false;
                }
            }
        }
        true
    }

    /// Reads what each node sends, up to `turn` of silence per node.
    fn read(&mut self, hub: &Hub, turn: Duration) {
        let addrs: Vec<Addr> = self.cons.keys().cloned().collect();
        for addr in addrs {
            if !self.drain(hub, &addr, turn) {
                self.lost(&addr);
            }
        }
    }

    /// Reads what `addr` sends until `turn` of silence, or 1 024 pushes (a
    /// bounded drain: the other nodes' turn comes). Returns `false` when
    /// the connection failed.
    fn drain(&mut self, hub: &Hub, addr: &Addr, turn: Duration) -> bool {
        let Some(con) = self.cons.get_mut(addr) else {
            return true;
        };
        if con.set_read_timeout(Some(turn)).is_err() {
            return false;
        }
        // Nothing is waited for here: a confirmation read now is stale.
        let mut waiting = HashSet::new();
        for _ in 0..1_024 {
            match con.recv_response() {
                Ok(value) => {
                    if let Some((ch, payload)) = self.book.take(addr, push(value), &mut waiting) {
                        deliver(hub, &ch, &payload);
                    }
                }
                Err(e) if e.is_timeout() => break,
                Err(_) => return false,
            }
        }
        true
    }
}

/// Hands a published change to the breakers of its channel.
fn deliver(hub: &Hub, channel: &str, payload: &str) {
    let Some((word, time)) = parse_published(payload) else {
        return;
    };
    for member in hub.on_channel(channel) {
        member.published(word, time);
    }
}
