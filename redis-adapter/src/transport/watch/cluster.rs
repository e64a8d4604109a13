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

use super::pace::{End, SLICE, nap};
use crate::transport::cluster::{Addr, SlotMap, slot, slot_map, text};
use crate::transport::hub::Hub;
use crate::transport::script::parse_published;
use redis::{Connection, RedisResult, Value};
use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Weak;
use std::time::{Duration, Instant};

/// The slot map, read from any node through the hub's connection pool.
fn read_slot_map(hub: &Hub) -> RedisResult<SlotMap> {
    let (reply, _, _) = hub.remote("", "", 0, |cell| cell.cluster_slots());
    slot_map(reply?)
}

/// A subscription reply or message read from a node.
#[derive(Debug, PartialEq)]
enum Push {
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
fn push(value: Value) -> Push {
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
struct Plan {
    /// The channels to unsubscribe where they are held: their breakers
    /// are gone, or their slot moved to another node.
    unsubscribe: BTreeSet<String>,
    /// The channels to subscribe, by the node owning their slot.
    subscribe: BTreeMap<Addr, Vec<String>>,
}

/// What following `live` (the live breakers' channels, a channel once per
/// breaker) takes, on the slot map `slots`, with `at` the node each
/// subscribed channel is held on. A channel whose slot no node serves is
/// left as it is: the cluster is down there, and the refresh reports it.
fn plan(
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
struct Book {
    /// The node each channel is subscribed on (the node confirmed it).
    at: HashMap<String, Addr>,
    /// Something moved or failed: read the slot map again.
    reload: bool,
}

impl Book {
    /// Forgets `ch`, before it is unsubscribed: the `sunsubscribe` read
    /// for it later is then known for ours. Returns the node holding it.
    fn forget(&mut self, ch: &str) -> Option<Addr> {
        self.at.remove(ch)
    }

    /// The connection to `addr` failed, or could not be opened: its
    /// channels are subscribed again where the slot map, read again, says.
    fn lost(&mut self, addr: &Addr) {
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
    fn take(
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
enum Due {
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
struct Pace {
    /// The refresh period.
    period: Duration,
    /// When the next periodic refresh is due.
    next: Instant,
    /// The hub's change count the subscriptions follow (none before the
    /// first follow).
    followed: Option<u64>,
    /// The slot map was read again: the subscriptions follow it again.
    refollow: bool,
}

impl Pace {
    /// The pace of a watcher started at `now`, with the refresh period
    /// `period`: it follows the breakers and refreshes at once.
    fn new(now: Instant, period: Duration) -> Pace {
        Pace {
            period,
            next: now,
            followed: None,
            refollow: true,
        }
    }

    /// The slot map was read again.
    fn reloaded(&mut self) {
        self.refollow = true;
    }

    /// Whether the subscriptions follow the breakers again, `changes`
    /// being the hub's change count now: when the slot map was read again,
    /// or the breakers changed, since they last did.
    fn follow(&mut self, changes: u64) -> bool {
        if self.followed != Some(changes) {
            self.followed = Some(changes);
            self.refollow = true;
        }
        std::mem::take(&mut self.refollow)
    }

    /// What to read at `now`, after following the breakers; `added`:
    /// whether a channel was subscribed.
    fn due(&self, now: Instant, added: bool) -> Due {
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
    fn refreshed(&mut self, now: Instant) {
        self.next = now + self.period;
    }

    /// How long to wait for pushes at `now`: until the next refresh, but at
    /// least 1 ms (no busy loop) and at most one slice (the watcher notices
    /// within one that its hub is gone).
    fn wait(&self, now: Instant) -> Duration {
        self.next
            .saturating_duration_since(now)
            .clamp(Duration::from_millis(1), SLICE)
    }
}

/// Each node's turn to be read when `wait` is shared between `nodes`: at
/// least 1 ms.
fn turn(wait: Duration, nodes: usize) -> Duration {
    (wait / u32::try_from(nodes.max(1)).unwrap_or(u32::MAX)).max(Duration::from_millis(1))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::cluster::{channel, slots_reply};
    use redis::PushKind;

    /// A refresh period far longer than any test: a refresh it brings
    /// about cannot make up for a wrong decision.
    const HOUR: Duration = Duration::from_secs(3_600);

    fn bulk(s: &str) -> Value {
        Value::BulkString(s.as_bytes().to_vec())
    }

    /// A reply as RESP2 sends it: an array, the kind first.
    fn array(items: &[&str]) -> Value {
        Value::Array(items.iter().map(|s| bulk(s)).collect())
    }

    fn resp3(kind: PushKind, items: &[&str]) -> Value {
        Value::Push {
            kind,
            data: items.iter().map(|s| bulk(s)).collect(),
        }
    }

    fn node(port: u16) -> Addr {
        ("10.0.0.1".to_owned(), port)
    }

    /// Two primaries: slots up to `last` on port 7000, the rest on 7001.
    fn split_at(last: u16) -> SlotMap {
        slot_map(slots_reply(&[
            (0, last, "10.0.0.1", 7000),
            (last + 1, 16_383, "10.0.0.1", 7001),
        ]))
        .unwrap()
    }

    fn held(channels: &[(&str, Addr)]) -> HashMap<String, Addr> {
        channels
            .iter()
            .map(|(ch, addr)| ((*ch).to_owned(), addr.clone()))
            .collect()
    }

    #[test]
    fn resp3_pushes_are_read() {
        assert_eq!(
            push(resp3(PushKind::SMessage, &["tripword:{a}", "5 1000"])),
            Push::Message("tripword:{a}".into(), "5 1000".into())
        );
        let mut subscribed = resp3(PushKind::SSubscribe, &["tripword:{a}"]);
        if let Value::Push { data, .. } = &mut subscribed {
            data.push(Value::Int(1));
        }
        assert_eq!(push(subscribed), Push::Subscribed("tripword:{a}".into()));
        assert_eq!(
            push(resp3(PushKind::SUnsubscribe, &["tripword:{a}"])),
            Push::Unsubscribed("tripword:{a}".into())
        );
        // A kind the crate does not know, in capitals.
        assert_eq!(
            push(resp3(PushKind::Other("SMESSAGE".into()), &["c", "1 2"])),
            Push::Message("c".into(), "1 2".into())
        );
        // Not sharded pub/sub: nothing the watcher subscribed to.
        assert_eq!(push(resp3(PushKind::Message, &["c", "1 2"])), Push::Other);
        assert_eq!(push(resp3(PushKind::Unsubscribe, &["c"])), Push::Other);
    }

    #[test]
    fn resp2_arrays_are_read_as_pushes() {
        assert_eq!(
            push(array(&["smessage", "tripword:{a}", "5 1000"])),
            Push::Message("tripword:{a}".into(), "5 1000".into())
        );
        assert_eq!(
            push(array(&["SSUBSCRIBE", "tripword:{a}"])),
            Push::Subscribed("tripword:{a}".into())
        );
        assert_eq!(
            push(array(&["SUnsubscribe", "tripword:{a}"])),
            Push::Unsubscribed("tripword:{a}".into())
        );
        // The kind as a simple string.
        let simple = Value::Array(vec![Value::SimpleString("sunsubscribe".into()), bulk("c")]);
        assert_eq!(push(simple), Push::Unsubscribed("c".into()));
        assert_eq!(push(array(&["message", "c", "1 2"])), Push::Other);
    }

    #[test]
    fn an_empty_or_odd_reply_is_nothing_to_act_on() {
        assert_eq!(push(Value::Array(Vec::new())), Push::Other);
        assert_eq!(
            push(resp3(PushKind::SMessage, &[])),
            Push::Message(String::new(), String::new())
        );
        assert_eq!(
            push(Value::Array(vec![Value::Int(3), bulk("c")])),
            Push::Other
        );
        assert_eq!(push(Value::Okay), Push::Other);
        assert_eq!(push(Value::Nil), Push::Other);
        assert_eq!(push(Value::Int(1)), Push::Other);
    }

    /// `channel(key)` and the node owning it on `split_at(8_191)`.
    fn channels() -> (String, String) {
        // `foo` hashes to 12 182, `bar` to 5 061.
        let (foo, bar) = (channel("foo"), channel("bar"));
        assert_eq!(slot(foo.as_bytes()), 12_182);
        assert_eq!(slot(bar.as_bytes()), 5_061);
        (foo, bar)
    }

    #[test]
    fn new_channels_are_subscribed_on_their_owners() {
        let (foo, bar) = channels();
        // Two breakers of `foo`: one subscription.
        let plan = plan(
            [foo.clone(), bar.clone(), foo.clone()],
            &split_at(8_191),
            &HashMap::new(),
        );
        assert_eq!(
            plan,
            Plan {
                unsubscribe: BTreeSet::new(),
                subscribe: BTreeMap::from([(node(7000), vec![bar]), (node(7001), vec![foo])]),
            }
        );
    }

    #[test]
    fn channels_held_on_their_owners_stay() {
        let (foo, bar) = channels();
        let at = held(&[(&foo, node(7001)), (&bar, node(7000))]);
        assert_eq!(plan([foo, bar], &split_at(8_191), &at), Plan::default());
    }

    #[test]
    fn a_migrated_channel_moves_to_its_new_owner() {
        let (foo, bar) = channels();
        let at = held(&[(&foo, node(7001)), (&bar, node(7000))]);
        // Slot 12 182 migrated from 7001 to 7000.
        let plan = plan([foo.clone(), bar], &split_at(12_182), &at);
        assert_eq!(
            plan,
            Plan {
                unsubscribe: BTreeSet::from([foo.clone()]),
                subscribe: BTreeMap::from([(node(7000), vec![foo])]),
            }
        );
    }

    #[test]
    fn the_channels_of_gone_breakers_are_dropped() {
        let (foo, bar) = channels();
        let at = held(&[(&foo, node(7001)), (&bar, node(7000))]);
        let plan = plan([foo], &split_at(8_191), &at);
        assert_eq!(
            plan,
            Plan {
                unsubscribe: BTreeSet::from([bar]),
                subscribe: BTreeMap::new(),
            }
        );
    }

    #[test]
    fn a_channel_in_a_slot_nobody_serves_is_left_as_it_is() {
        let (foo, bar) = channels();
        // Only slots 0 to 8 191 are served: `foo`'s is not.
        let half = slot_map(slots_reply(&[(0, 8_191, "10.0.0.1", 7000)])).unwrap();
        let at = held(&[(&foo, node(7001))]);
        assert_eq!(plan([foo.clone()], &half, &at), Plan::default());
        assert_eq!(
            plan([foo, bar.clone()], &half, &HashMap::new()),
            Plan {
                unsubscribe: BTreeSet::new(),
                subscribe: BTreeMap::from([(node(7000), vec![bar])]),
            }
        );
    }

    /// What `read` does with a batch of replies from `addr`: the messages
    /// it delivers.
    fn read(book: &mut Book, addr: &Addr, replies: Vec<Value>) -> Vec<(String, String)> {
        let mut waiting = HashSet::new();
        replies
            .into_iter()
            .filter_map(|value| book.take(addr, push(value), &mut waiting))
            .collect()
    }

    #[test]
    fn a_batch_is_delivered_in_order_and_a_dropped_channel_reloads_the_map() {
        let (foo, bar) = channels();
        let mut book = Book {
            at: held(&[(&foo, node(7001)), (&bar, node(7000))]),
            reload: false,
        };
        let delivered = read(
            &mut book,
            &node(7001),
            vec![
                resp3(PushKind::SMessage, &[&foo, "5 1000"]),
                // A stale confirmation: nothing is waited for.
                resp3(PushKind::SSubscribe, &["tripword:{late}"]),
                array(&["smessage", &foo, "6 2000"]),
                Value::Array(Vec::new()),
                // The node dropped `foo`: its slot moved away.
                resp3(PushKind::SUnsubscribe, &[&foo]),
            ],
        );
        assert_eq!(
            delivered,
            [
                (foo.clone(), "5 1000".to_owned()),
                (foo.clone(), "6 2000".to_owned())
            ]
        );
        assert!(book.reload, "the slot map is read again");
        assert_eq!(book.at, held(&[(&bar, node(7000))]), "`foo` is forgotten");
    }

    #[test]
    fn an_unsubscribe_of_ours_or_elsewhere_is_no_reload() {
        let (foo, bar) = channels();
        let mut book = Book {
            at: held(&[(&foo, node(7001)), (&bar, node(7000))]),
            reload: false,
        };
        // Ours: forgotten before it was sent.
        assert_eq!(book.forget(&foo), Some(node(7001)));
        assert_eq!(book.forget(&foo), None);
        // `bar` is held on 7000, not on the node that sent this.
        let delivered = read(
            &mut book,
            &node(7001),
            vec![
                resp3(PushKind::SUnsubscribe, &[&foo]),
                resp3(PushKind::SUnsubscribe, &[&bar]),
            ],
        );
        assert!(delivered.is_empty());
        assert!(!book.reload);
        assert_eq!(book.at, held(&[(&bar, node(7000))]));
    }

    #[test]
    fn a_subscription_is_held_once_its_node_confirms_it() {
        let (foo, bar) = channels();
        let mut book = Book::default();
        let mut waiting = HashSet::from([foo.clone(), bar.clone()]);
        let at = node(7000);
        assert_eq!(
            book.take(&at, push(array(&["ssubscribe", &foo])), &mut waiting),
            None
        );
        assert_eq!(book.at, held(&[(&foo, at.clone())]));
        assert_eq!(waiting, HashSet::from([bar.clone()]));
        // Not asked for here: not held.
        book.take(
            &at,
            push(array(&["ssubscribe", "tripword:{x}"])),
            &mut waiting,
        );
        // A message read meanwhile is delivered.
        assert_eq!(
            book.take(&at, push(array(&["smessage", &foo, "1 2"])), &mut waiting),
            Some((foo.clone(), "1 2".to_owned()))
        );
        book.take(
            &at,
            push(resp3(PushKind::SSubscribe, &[&bar])),
            &mut waiting,
        );
        assert!(waiting.is_empty());
        assert_eq!(book.at, held(&[(&foo, at.clone()), (&bar, at)]));
        assert!(!book.reload);
    }

    #[test]
    fn a_lost_node_forgets_its_channels_and_reloads_the_map() {
        let (foo, bar) = channels();
        let mut book = Book {
            at: held(&[(&foo, node(7001)), (&bar, node(7000))]),
            reload: false,
        };
        book.lost(&node(7001));
        assert!(book.reload);
        assert_eq!(book.at, held(&[(&bar, node(7000))]));
    }

    #[test]
    fn the_breakers_are_followed_again_when_they_or_the_map_change() {
        let t0 = Instant::now();
        let mut pace = Pace::new(t0, HOUR);
        assert!(pace.follow(0), "at once");
        assert!(!pace.follow(0));
        assert!(pace.follow(1), "a breaker joined or left");
        assert!(!pace.follow(1));
        pace.reloaded();
        assert!(pace.follow(1), "the slot map was read again");
        assert!(!pace.follow(1));
    }

    #[test]
    fn the_words_and_the_map_are_read_at_once_then_every_period() {
        let t0 = Instant::now();
        let mut pace = Pace::new(t0, HOUR);
        assert_eq!(pace.due(t0, false), Due::WordsAndSlots, "at once");
        pace.refreshed(t0);
        assert_eq!(pace.due(t0, false), Due::Nothing);
        assert_eq!(pace.due(t0 + HOUR / 2, false), Due::Nothing);
        assert_eq!(
            pace.due(t0 + HOUR, false),
            Due::WordsAndSlots,
            "a period on"
        );
        assert_eq!(pace.due(t0 + 2 * HOUR, false), Due::WordsAndSlots);
        // Refreshed later than it was due: the period counts from then.
        pace.refreshed(t0 + 2 * HOUR);
        assert_eq!(pace.due(t0 + 2 * HOUR + HOUR / 2, false), Due::Nothing);
    }

    #[test]
    fn a_new_subscription_reads_the_words_at_once() {
        let t0 = Instant::now();
        let mut pace = Pace::new(t0, HOUR);
        pace.refreshed(t0);
        assert_eq!(pace.due(t0 + Duration::from_secs(1), true), Due::Words);
        // Whatever the period: the map was just read.
        assert_eq!(pace.due(t0 + HOUR, true), Due::Words);
    }

    #[test]
    fn the_watcher_waits_until_the_next_refresh_within_a_slice() {
        let t0 = Instant::now();
        let mut pace = Pace::new(t0, HOUR);
        assert_eq!(
            pace.wait(t0),
            Duration::from_millis(1),
            "due now: no busy loop"
        );
        pace.refreshed(t0);
        assert_eq!(pace.wait(t0), SLICE);
        assert_eq!(pace.wait(t0 + HOUR - SLICE / 4), SLICE / 4);
        assert_eq!(
            pace.wait(t0 + 2 * HOUR),
            Duration::from_millis(1),
            "overdue"
        );
        let mut short = Pace::new(t0, Duration::from_millis(30));
        short.refreshed(t0);
        assert_eq!(
            short.wait(t0 + Duration::from_millis(10)),
            Duration::from_millis(20)
        );
    }

    #[test]
    fn the_wait_is_shared_between_the_nodes() {
        let ms = Duration::from_millis;
        assert_eq!(turn(ms(100), 1), ms(100));
        assert_eq!(turn(ms(100), 4), ms(25));
        assert_eq!(turn(ms(3), 2), Duration::from_micros(1_500));
        assert_eq!(turn(ms(2), 10), ms(1), "at least 1 ms");
        assert_eq!(turn(ms(100), 0), ms(100), "no node: no division by zero");
    }
}
