//! The cluster watcher's decisions as plain values: what a node sent
//! ([`push`]), what following the breakers takes ([`plan`]), what each push
//! asks of the bookkeeping ([`Book`]), and when to read every word, the
//! slot map, and follow again ([`Pace`], given the time, never reading the
//! clock).

use super::super::pace::SLICE;
use crate::transport::cluster::{Addr, SlotMap, slot, text};
use redis::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::time::{Duration, Instant};

/// A subscription reply or message read from a node.
#[derive(Debug, PartialEq)]
pub(super) enum Push {
    /// A published change: the channel and the payload.
    Message(String, String),
    /// `SSUBSCRIBE` confirmed for the channel.
    Subscribed(String),
    /// The node dropped (or confirmed dropping) the channel.
    Unsubscribed(String),
    /// Anything else.
    Other,
}

/// What a node sent: a RESP3 push, or the same as an array (RESP2), its
/// kind first, in any case. An empty array, or a kind the watcher does not
/// subscribe to, is `Other`.
pub(super) fn push(value: Value) -> Push {
    let (kind, data) = match value {
        Value::Push { kind, data } => (kind.to_string(), data),
        Value::Array(data) => {
            let mut data = data.into_iter();
            let kind = data.next().as_ref().and_then(text).unwrap_or_default();
            (kind, data.collect())
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

/// What following the live breakers takes.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Plan {
    /// The channels to unsubscribe where they are held: their breakers
    /// are gone, or their slot moved to another node.
    pub(super) unsubscribe: BTreeSet<String>,
    /// The channels to subscribe, by the node owning their slot.
    pub(super) subscribe: BTreeMap<Addr, Vec<String>>,
}

/// What following `live` (the live breakers' channels, a channel once per
/// breaker) takes, on the slot map `slots`, with `at` the node each
/// subscribed channel is held on. A channel whose slot no node serves is
/// left as it is: the cluster is down there, and the refresh reports it.
pub(super) fn plan(
    live: impl IntoIterator<Item = String>,
    slots: &SlotMap,
    at: &HashMap<String, Addr>,
) -> Plan {
    let live: BTreeSet<String> = live.into_iter().collect();
    let mut plan = Plan::default();
    for ch in at.keys().filter(|ch| !live.contains(*ch)) {
        plan.unsubscribe.insert(ch.clone());
    }
    for ch in live {
        let Some(owner) = slots.owner(slot(ch.as_bytes())) else {
            continue;
        };
        match at.get(&ch) {
            Some(addr) if addr == owner => continue,
            Some(_) => {
                plan.unsubscribe.insert(ch.clone());
            }
            None => {}
        }
        plan.subscribe.entry(owner.clone()).or_default().push(ch);
    }
    plan
}

/// Where the watcher's channels are subscribed, and whether the slot map
/// must be read again: its bookkeeping, apart from its connections.
#[derive(Debug, Default)]
pub(super) struct Book {
    /// The node each channel is subscribed on (the node confirmed it).
    pub(super) at: HashMap<String, Addr>,
    /// Something moved or failed: read the slot map again.
    pub(super) reload: bool,
}

impl Book {
    /// Forgets `ch`, before it is unsubscribed: the `sunsubscribe` read
    /// for it later is then known for ours. Returns the node holding it.
    pub(super) fn forget(&mut self, ch: &str) -> Option<Addr> {
        self.at.remove(ch)
    }

    /// The connection to `addr` failed, or could not be opened: its
    /// channels are subscribed again where the slot map, read again, says.
    pub(super) fn lost(&mut self, addr: &Addr) {
        self.at.retain(|_, held| held != addr);
        self.reload = true;
    }

    /// Takes `push`, read from `addr` while the channels in `waiting` are
    /// waited for there, and returns the message it carries, to deliver.
    ///
    /// - A confirmed channel that was waited for is held there now.
    /// - A dropped channel still held there was dropped by the node, its
    ///   slot moved away (ours are forgotten before they are sent): it is
    ///   forgotten, and the slot map read again.
    pub(super) fn take(
        &mut self,
        addr: &Addr,
        push: Push,
        waiting: &mut HashSet<String>,
    ) -> Option<(String, String)> {
        match push {
            Push::Message(ch, payload) => return Some((ch, payload)),
            Push::Subscribed(ch) => {
                if waiting.remove(&ch) {
                    self.at.insert(ch, addr.clone());
                }
            }
            Push::Unsubscribed(ch) => {
                if self.at.get(&ch) == Some(addr) {
                    self.at.remove(&ch);
                    self.reload = true;
                }
            }
            Push::Other => {}
        }
        None
    }
}

/// What the watcher reads after following the breakers.
#[derive(Debug, PartialEq)]
pub(super) enum Due {
    /// Nothing: it waits for pushes until the next refresh.
    Nothing,
    /// Every word: a channel was just subscribed, and a change made before
    /// is not missed (the slot map was just read).
    Words,
    /// Every word and the slot map: the refresh period is up. The map
    /// read again finds a slot move whose `sunsubscribe` was lost.
    WordsAndSlots,
}

/// The watcher's timing: when it reads every word again, when it reads the
/// slot map again, and when it follows the breakers again. The time is
/// passed in: the clock is read by the watcher's loop alone.
#[derive(Debug)]
pub(super) struct Pace {
    /// The refresh period.
    pub(super) period: Duration,
    /// When the next periodic refresh is due.
    pub(super) next: Instant,
    /// The hub's change count the subscriptions follow (none before the
    /// first follow).
    pub(super) followed: Option<u64>,
    /// The slot map was read again: the subscriptions follow it again.
    pub(super) refollow: bool,
}

impl Pace {
    /// The pace of a watcher started at `now`, with the refresh period
    /// `period`: it follows the breakers and refreshes at once.
    pub(super) fn new(now: Instant, period: Duration) -> Pace {
        Pace {
            period,
            next: now,
            followed: None,
            refollow: true,
        }
    }

    /// The slot map was read again.
    pub(super) fn reloaded(&mut self) {
        self.refollow = true;
    }

    /// Whether the subscriptions follow the breakers again, `changes`
    /// being the hub's change count now: when the slot map was read again,
    /// or the breakers changed, since they last did.
    pub(super) fn follow(&mut self, changes: u64) -> bool {
        if self.followed != Some(changes) {
            self.followed = Some(changes);
            self.refollow = true;
        }
        std::mem::take(&mut self.refollow)
    }

    /// What to read at `now`, after following the breakers; `added`:
    /// whether a channel was subscribed.
    pub(super) fn due(&self, now: Instant, added: bool) -> Due {
        if added {
            Due::Words
        } else if now >= self.next {
            Due::WordsAndSlots
        } else {
            Due::Nothing
        }
    }

    /// The words were read, the read done at `now`: the next refresh is a
    /// period later.
    pub(super) fn refreshed(&mut self, now: Instant) {
        self.next = now + self.period;
    }

    /// How long to wait for pushes at `now`: until the next refresh, but at
    /// least 1 ms (no busy loop) and at most one slice (the watcher notices
    /// within one that its hub is gone).
    pub(super) fn wait(&self, now: Instant) -> Duration {
        self.next
            .saturating_duration_since(now)
            .clamp(Duration::from_millis(1), SLICE)
    }
}

/// Each node's turn to be read when `wait` is shared between `nodes`: at
/// least 1 ms.
pub(super) fn turn(wait: Duration, nodes: usize) -> Duration {
    (wait / u32::try_from(nodes.max(1)).unwrap_or(u32::MAX)).max(Duration::from_millis(1))
}
