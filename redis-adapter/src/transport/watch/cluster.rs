//! The watcher on a Redis Cluster (feature `cluster`): one plain
//! connection per primary that owns a breaker's slot, with one
//! `SSUBSCRIBE` per channel there. When a slot moves, its node drops those
//! subscriptions (a `sunsubscribe` it sends): the watcher reads the slot
//! map again and subscribes on the new owner, and reads every word once
//! after, so a change made meanwhile is not missed beyond that read; the
//! periodic refresh bounds the staleness whatever happens.

use super::pace::{End, SLICE, nap};
use crate::transport::cluster::{Addr, SlotMap, slot, slot_map, text};
use crate::transport::hub::Hub;
use crate::transport::script::parse_published;
use redis::{Connection, RedisResult, Value};
use std::collections::{HashMap, HashSet};
use std::sync::Weak;
use std::time::{Duration, Instant};

/// The slot map, read from any node through the hub's connection pool.
fn read_slot_map(hub: &Hub) -> RedisResult<SlotMap> {
    let (reply, _, _) = hub.remote("", "", 0, |cell| cell.cluster_slots());
    slot_map(reply?)
}

/// A subscription reply or message read from a node.
enum Push {
    /// A published change.
    Message(String, String),
    /// `SSUBSCRIBE` confirmed for the channel.
    Subscribed(String),
    /// The node dropped (or confirmed dropping) the channel.
    Unsubscribed(String),
    /// Anything else.
    Other,
}

fn push(value: Value) -> Push {
    let (kind, data) = match value {
        Value::Push { kind, data } => (kind.to_string(), data),
        Value::Array(mut data) if !data.is_empty() => {
            let kind = text(&data.remove(0)).unwrap_or_default();
            (kind, data)
        }
        _ => return Push::Other,
    };
    let channel = data.first().and_then(text).unwrap_or_default();
    match kind.to_ascii_lowercase().as_str() {
        "smessage" => Push::Message(channel, data.get(1).and_then(text).unwrap_or_default()),
        "ssubscribe" => Push::Subscribed(channel),
        "sunsubscribe" => Push::Unsubscribed(channel),
        _ => Push::Other,
    }
}

/// The watcher's connection to one primary, and the channels it holds
/// there.
struct Shard {
    con: Connection,
    channels: HashSet<String>,
}

/// The watcher's subscriptions, by node and by channel.
#[derive(Default)]
struct Subscriptions {
    shards: HashMap<Addr, Shard>,
    at: HashMap<String, Addr>,
    /// Something moved or failed: read the slot map again.
    reload: bool,
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
    fn run(&mut self, weak: &Weak<Hub>) -> Result<End, End> {
        let hub = weak.upgrade().ok_or(End::Gone)?;
        let t = hub.timing;
        let mut slots = read_slot_map(&hub)?;
        drop(hub);
        let mut next = Instant::now();
        // The breakers' changes the subscriptions follow, and whether they
        // must be followed again (the slot map was read again).
        let mut followed = None;
        let mut refollow = true;
        loop {
            let hub = weak.upgrade().ok_or(End::Gone)?;
            if self.reload {
                slots = read_slot_map(&hub)?;
                self.reload = false;
                refollow = true;
            }
            let changes = hub.changes();
            if followed != Some(changes) {
                followed = Some(changes);
                refollow = true;
            }
            let added = refollow && self.follow(&hub, &slots);
            refollow = false;
            if added || Instant::now() >= next {
                // Every word read after the subscriptions: a change made
                // before them is not missed.
                hub.refresh_all()?;
                if !added {
                    slots = read_slot_map(&hub)?;
                    refollow = true;
                }
                next = Instant::now() + t.refresh;
            }
            let wait = next
                .saturating_duration_since(Instant::now())
                .clamp(Duration::from_millis(1), SLICE);
            if self.shards.is_empty() {
                drop(hub);
                if !nap(weak, wait) {
                    return Ok(End::Gone);
                }
                continue;
            }
            let turn = (wait / u32::try_from(self.shards.len()).unwrap_or(u32::MAX))
                .max(Duration::from_millis(1));
            self.read(&hub, turn);
        }
    }

    /// Subscribes to the live breakers' channels on the nodes owning them,
    /// and drops the channels of breakers that are gone. Returns whether
    /// any channel was subscribed.
    fn follow(&mut self, hub: &Hub, slots: &SlotMap) -> bool {
        let live: HashSet<String> = hub.live().iter().map(|m| m.channel().to_owned()).collect();
        let gone: Vec<String> = self
            .at
            .keys()
            .filter(|ch| !live.contains(*ch))
            .cloned()
            .collect();
        for ch in gone {
            self.drop_channel(&ch, true);
        }
        let mut wanted: HashMap<Addr, Vec<String>> = HashMap::new();
        for ch in live {
            let Some(owner) = slots.owner(slot(ch.as_bytes())) else {
                // A slot no node serves: the cluster is down there; the
                // refresh reports it.
                continue;
            };
            match self.at.get(&ch) {
                Some(addr) if addr == owner => continue,
                Some(_) => self.drop_channel(&ch, true),
                None => {}
            }
            wanted.entry(owner.clone()).or_default().push(ch);
        }
        let mut added = false;
        for (addr, channels) in wanted {
            added |= self.subscribe(hub, addr, &channels);
        }
        added
    }

    /// Forgets `ch`, unsubscribing it on its node when `tell`.
    fn drop_channel(&mut self, ch: &str, tell: bool) {
        let Some(addr) = self.at.remove(ch) else {
            return;
        };
        if let Some(shard) = self.shards.get_mut(&addr) {
            shard.channels.remove(ch);
            if tell {
                let packed = redis::cmd("SUNSUBSCRIBE").arg(ch).get_packed_command();
                if shard.con.send_packed_command(&packed).is_err() {
                    self.lost(&addr);
                }
            }
        }
    }

    /// The connection to `addr` failed: its channels are subscribed again
    /// where the slot map says.
    fn lost(&mut self, addr: &Addr) {
        if let Some(shard) = self.shards.remove(addr) {
            for ch in shard.channels {
                self.at.remove(&ch);
            }
        }
        self.reload = true;
    }

    /// Subscribes to `channels` on `addr`, and waits for the node to
    /// confirm them (a message read meanwhile is delivered). Returns
    /// whether they were.
    fn subscribe(&mut self, hub: &Hub, addr: Addr, channels: &[String]) -> bool {
        let Some(cluster) = &hub.cluster else {
            return false;
        };
        let timeout = hub.timing.op_timeout;
        if !self.shards.contains_key(&addr) {
            let Ok(con) = cluster.node(&addr, timeout) else {
                self.reload = true;
                return false;
            };
            let shard = Shard {
                con,
                channels: HashSet::new(),
            };
            self.shards.insert(addr.clone(), shard);
        }
        let Some(shard) = self.shards.get_mut(&addr) else {
            return false;
        };
        // One command a channel: the channels of one command must share
        // a slot.
        let mut packed = Vec::new();
        for ch in channels {
            packed.extend(redis::cmd("SSUBSCRIBE").arg(ch).get_packed_command());
        }
        let sent = shard.con.set_write_timeout(Some(timeout)).is_ok()
            && shard.con.set_read_timeout(Some(timeout)).is_ok()
            && shard.con.send_packed_command(&packed).is_ok();
        if !sent {
            self.lost(&addr);
            return false;
        }
        let mut waiting: HashSet<&str> = channels.iter().map(String::as_str).collect();
        while !waiting.is_empty() {
            match shard.con.recv_response() {
                Ok(value) => match push(value) {
                    Push::Subscribed(ch) => {
                        if waiting.remove(ch.as_str()) {
                            shard.channels.insert(ch.clone());
                            self.at.insert(ch, addr.clone());
                        }
                    }
                    Push::Message(ch, payload) => deliver(hub, &ch, &payload),
                    Push::Unsubscribed(_) | Push::Other => {}
                },
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
        let addrs: Vec<Addr> = self.shards.keys().cloned().collect();
        for addr in addrs {
            let Some(shard) = self.shards.get_mut(&addr) else {
                continue;
            };
            if shard.con.set_read_timeout(Some(turn)).is_err() {
                self.lost(&addr);
                continue;
            }
            // A bounded drain: the other nodes' turn comes.
            let mut dropped = Vec::new();
            let mut failed = false;
            for _ in 0..1_024 {
                match shard.con.recv_response() {
                    Ok(value) => match push(value) {
                        Push::Message(ch, payload) => deliver(hub, &ch, &payload),
                        Push::Unsubscribed(ch) => dropped.push(ch),
                        Push::Subscribed(_) | Push::Other => {}
                    },
                    Err(e) if e.is_timeout() => break,
                    Err(_) => {
                        failed = true;
                        break;
                    }
                }
            }
            if failed {
                self.lost(&addr);
                continue;
            }
            for ch in dropped {
                // Ours are forgotten before they are sent: one still held
                // here was dropped by the node (its slot moved away).
                if self.at.get(&ch) == Some(&addr) {
                    self.drop_channel(&ch, false);
                    self.reload = true;
                }
            }
        }
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
