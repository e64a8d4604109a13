//! The cluster watcher's decisions, with replies and instants fed in: no
//! server, no clock.

use super::decide::*;
use super::*;
use crate::transport::cluster::{channel, slot, slots_reply};
use crate::transport::watch::pace::SLICE;
use redis::{PushKind, Value};
use std::collections::{BTreeMap, BTreeSet};

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
