//! Redis Cluster (feature `cluster`): the words of a fleet's breakers are
//! spread over the cluster's primaries by the slot of each key, and every
//! script runs on the node owning its key's slot.
//!
//! - **Operations** run on the `redis` crate's cluster connection, which
//!   sends `EVALSHA` to the node owning the script's first key and follows
//!   `MOVED` (the slot has moved: its map is read again) and `ASK` (the slot
//!   is being migrated and the key is already on the target: `ASKING`
//!   then the script there). A script's keys are all in one slot: the
//!   compare-and-set and the load touch one key, the config claim touches
//!   `<key>:config` alone, and the watcher's refresh reads together only
//!   keys of one slot (one script a slot; the scripts of up to 256 slots
//!   pipelined, one round trip to each node).
//! - **Server time**: the scripts read `TIME` on the node owning the key;
//!   the one `TIME` round trip a compare-and-set from the mirror makes is
//!   sent to that node too. The nodes' clocks must agree (NTP): a breaker's
//!   open time is measured by whichever node owns its slot at the time.
//! - **Sharded pub/sub**: each compare-and-set publishes with `SPUBLISH` on
//!   a channel in the key's own slot ([`channel`]), and the watcher holds
//!   one plain connection per primary that owns a breaker's slot, with one
//!   `SSUBSCRIBE` per channel there. A breaker's messages stay on its
//!   shard. When a slot moves, its node drops those subscriptions (a
//!   `sunsubscribe` it sends): the watcher reads the slot map again and
//!   subscribes on the new owner, and reads every word once after, so a
//!   change made meanwhile is not missed beyond that read; the periodic
//!   refresh bounds the staleness whatever happens.

use super::CHANNEL_PREFIX;
use super::tls::{Tls, addr_like};
use redis::cluster::{ClusterClient, ClusterConfig, ClusterConnection};
use redis::cluster_routing::{Route, RoutingInfo, SingleNodeRoutingInfo, SlotAddr};
use redis::{
    Cmd, Connection, ConnectionInfo, IntoConnectionInfo, ProtocolVersion, RedisError, RedisResult,
    Value,
};
use std::collections::HashMap;
use std::time::Duration;

/// Slots in a Redis Cluster.
const SLOTS: u16 = 16_384;

/// The cluster of a hub: the client of its seed nodes, and what a plain
/// connection to one of its nodes is opened with (the seeds' settings).
#[derive(Clone)]
pub(crate) struct Cluster {
    client: ClusterClient,
    template: ConnectionInfo,
    tls: Tls,
}

impl Cluster {
    /// The cluster reached through `seeds` (node URLs; the slot map is read
    /// from the first that answers), over TLS with `tls`'s certificates
    /// when they are `rediss://` URLs. Connects to nothing yet.
    pub(crate) fn new(seeds: &[String], tls: &Tls) -> RedisResult<Cluster> {
        let mut infos = Vec::with_capacity(seeds.len());
        for seed in seeds {
            let info = seed.as_str().into_connection_info()?;
            // As the hub's plain client: no `CLIENT SETINFO` on connect.
            let redis = info.redis_settings().clone().set_skip_set_lib_name();
            infos.push(info.set_redis_settings(redis));
        }
        let template = infos.first().cloned().ok_or_else(|| {
            RedisError::from(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "tripword-redis: a cluster needs at least one node URL",
            ))
        })?;
        let builder = ClusterClient::builder(infos)
            // Redirections are followed at once; a `TRYAGAIN` (a multi-key
            // command during a migration) is retried briefly. The
            // operation timeout bounds each read and write.
            .retries(8)
            .min_retry_wait(2)
            .max_retry_wait(50);
        #[cfg(feature = "tls")]
        let builder = match (template.addr(), tls.certificates()) {
            (redis::ConnectionAddr::TcpTls { .. }, Some(certs)) => {
                super::tls::provider();
                builder.certs(certs.clone())
            }
            (redis::ConnectionAddr::TcpTls { .. }, None) => {
                super::tls::provider();
                builder
            }
            _ => builder,
        };
        let client = builder.build()?;
        Ok(Cluster {
            client,
            template,
            tls: tls.clone(),
        })
    }

    /// An async cluster connection (for the async form), each connect and
    /// reply bounded by `timeout`; the caller bounds the whole operation.
    #[cfg(feature = "cluster-async")]
    pub(crate) async fn connect_async(
        &self,
        timeout: Duration,
    ) -> RedisResult<redis::cluster_async::ClusterConnection> {
        let config = ClusterConfig::new()
            .set_connection_timeout(timeout)
            .set_response_timeout(timeout);
        self.client.get_async_connection_with_config(config).await
    }

    /// A cluster connection, each connect and reply bounded by `left`.
    pub(crate) fn connect(&self, left: Duration) -> RedisResult<ClusterConnection> {
        let config = ClusterConfig::new()
            .set_connection_timeout(left)
            .set_response_timeout(left);
        self.client.get_connection_with_config(config)
    }

    /// A plain connection to the node at `host:port`, with the seeds'
    /// settings, in RESP3: every subscription reply and message is then a
    /// push, which the `redis` crate hands over even after a read timed
    /// out (a reply it would skip, taking it for the one that was late).
    pub(crate) fn node(
        &self,
        (host, port): &(String, u16),
        timeout: Duration,
    ) -> RedisResult<Connection> {
        let redis = self
            .template
            .redis_settings()
            .clone()
            .set_protocol(ProtocolVersion::RESP3);
        let addr = addr_like(self.template.addr(), host.clone(), *port);
        let info = self
            .template
            .clone()
            .set_addr(addr)
            .set_redis_settings(redis);
        self.tls.client(info)?.get_connection_with_timeout(timeout)
    }
}

/// The server's `TIME` on the node owning `key`'s slot.
pub(crate) fn time(con: &mut ClusterConnection, key: &str) -> RedisResult<(u64, u64)> {
    let route = Route::new(slot(key.as_bytes()), SlotAddr::Master);
    let reply = con.route_command(
        &redis::cmd("TIME"),
        RoutingInfo::SingleNode(SingleNodeRoutingInfo::SpecificNode(route)),
    )?;
    Ok(redis::from_redis_value(reply)?)
}

/// The part of `key` Redis Cluster hashes: the text between the first `{`
/// and the first `}` after it when that is not empty, the whole key
/// otherwise.
fn hash_tag(key: &[u8]) -> Option<&[u8]> {
    let open = key.iter().position(|&b| b == b'{')?;
    let len = key[open + 1..].iter().position(|&b| b == b'}')?;
    (len > 0).then(|| &key[open + 1..open + 1 + len])
}

/// CRC-16/XMODEM, the checksum of Redis Cluster's key slots.
fn crc16(bytes: &[u8]) -> u16 {
    let mut crc: u16 = 0;
    for &b in bytes {
        crc ^= u16::from(b) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
        }
    }
    crc
}

/// The slot of `key` (`CLUSTER KEYSLOT`).
pub(crate) fn slot(key: &[u8]) -> u16 {
    crc16(hash_tag(key).unwrap_or(key)) % SLOTS
}

/// Every slot has a decimal tag below this (the largest slot's smallest
/// tag is 109 757): the search for one ends, a panic and not a hang, even
/// if the slots were computed wrong.
const TAGS: u32 = 110_000;

/// A hash tag (decimal digits) whose slot is `slot`.
fn tag_of_slot(slot: u16) -> String {
    (0..TAGS)
        .map(|n| n.to_string())
        .find(|tag| self::slot(tag.as_bytes()) == slot)
        .expect("every slot has a decimal tag below `TAGS`")
}

/// The channel of the breaker under `key` in a cluster: in the key's slot,
/// so that the compare-and-set can `SPUBLISH` on it (a script's keys and
/// shard channels must all be in one slot).
///
/// - `tripword:{<key>}` for a key without a hash tag, not empty and
///   without `}`;
/// - `tripword:{<tag>}:<key>` for a key with the hash tag `{<tag>}`;
/// - otherwise (an empty key, or a `}` in a key that hashes whole)
///   `tripword:{<n>}:<key>`,
///   `n` the smallest number in decimal whose slot is the key's.
pub(crate) fn channel(key: &str) -> String {
    match hash_tag(key.as_bytes()) {
        // The tag is a part of the key between ASCII braces: text.
        Some(tag) => format!("{CHANNEL_PREFIX}{{{}}}:{key}", String::from_utf8_lossy(tag)),
        None if !key.is_empty() && !key.contains('}') => format!("{CHANNEL_PREFIX}{{{key}}}"),
        None => format!(
            "{CHANNEL_PREFIX}{{{}}}:{key}",
            tag_of_slot(slot(key.as_bytes()))
        ),
    }
}

/// The most batches a round of the watcher's refresh pipelines.
const ROUND: usize = 256;

/// The most keys in a round (a round is bounded by one operation timeout).
const ROUND_KEYS: usize = 1_024;

/// `live` in batches of at most `batch` breakers of one slot each, in
/// rounds of at most [`ROUND`] batches and [`ROUND_KEYS`] keys (or one
/// batch).
pub(crate) fn rounds<T>(live: Vec<T>, key: impl Fn(&T) -> &str, batch: usize) -> Vec<Vec<Vec<T>>> {
    let mut slots: HashMap<u16, Vec<T>> = HashMap::new();
    for member in live {
        slots
            .entry(slot(key(&member).as_bytes()))
            .or_default()
            .push(member);
    }
    let mut batches = Vec::new();
    for (_, mut list) in slots {
        while list.len() > batch {
            let rest = list.split_off(batch);
            batches.push(std::mem::replace(&mut list, rest));
        }
        batches.push(list);
    }
    let mut rounds = Vec::new();
    let mut round: Vec<Vec<T>> = Vec::new();
    let mut keys = 0;
    for batch in batches {
        if !round.is_empty() && (round.len() == ROUND || keys + batch.len() > ROUND_KEYS) {
            rounds.push(std::mem::take(&mut round));
            keys = 0;
        }
        keys += batch.len();
        round.push(batch);
    }
    if !round.is_empty() {
        rounds.push(round);
    }
    rounds
}

/// `commands` (scripts, each of keys in one slot), pipelined: one round
/// trip to each node owning a slot (a redirected one retried alone). A
/// node that has not loaded a script answers `NOSCRIPT` for it.
pub(crate) fn pipelined(
    con: &mut ClusterConnection,
    commands: impl IntoIterator<Item = Cmd>,
) -> RedisResult<Vec<Value>> {
    let mut pipe = redis::cluster::cluster_pipe();
    for cmd in commands {
        pipe.add_command(cmd);
    }
    pipe.query(con)
}

/// A node's address.
pub(crate) type Addr = (String, u16);

/// Which primary owns each slot (`CLUSTER SLOTS`).
pub(crate) struct SlotMap(Vec<(u16, u16, Addr)>);

impl SlotMap {
    pub(crate) fn owner(&self, slot: u16) -> Option<&Addr> {
        self.0
            .iter()
            .find(|(start, end, _)| (*start..=*end).contains(&slot))
            .map(|(_, _, addr)| addr)
    }
}

fn bad_reply() -> RedisError {
    RedisError::from(std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        "tripword-redis: unreadable CLUSTER SLOTS reply",
    ))
}

fn int(v: &Value) -> Option<i64> {
    match v {
        Value::Int(i) => Some(*i),
        _ => None,
    }
}

pub(crate) fn text(v: &Value) -> Option<String> {
    match v {
        Value::BulkString(b) => Some(String::from_utf8_lossy(b).into_owned()),
        Value::SimpleString(s) => Some(s.clone()),
        _ => None,
    }
}

/// The slot map a `CLUSTER SLOTS` reply gives.
pub(crate) fn slot_map(reply: Value) -> RedisResult<SlotMap> {
    let Value::Array(ranges) = reply else {
        return Err(bad_reply());
    };
    let mut map = Vec::with_capacity(ranges.len());
    for range in ranges {
        let Value::Array(range) = range else {
            return Err(bad_reply());
        };
        let (Some(start), Some(end), Some(Value::Array(primary))) = (
            range.first().and_then(int),
            range.get(1).and_then(int),
            range.get(2),
        ) else {
            return Err(bad_reply());
        };
        let (Some(host), Some(port)) =
            (primary.first().and_then(text), primary.get(1).and_then(int))
        else {
            return Err(bad_reply());
        };
        let (Ok(start), Ok(end), Ok(port)) = (
            u16::try_from(start),
            u16::try_from(end),
            u16::try_from(port),
        ) else {
            return Err(bad_reply());
        };
        map.push((start, end, (host, port)));
    }
    Ok(SlotMap(map))
}

/// A `CLUSTER SLOTS` reply giving each range of `ranges` (first slot, last
/// slot, host, port) to its primary, with one replica each, for tests.
#[cfg(test)]
pub(crate) fn slots_reply(ranges: &[(u16, u16, &str, u16)]) -> Value {
    let node = |host: &str, port: u16, id: &str| {
        Value::Array(vec![
            Value::BulkString(host.as_bytes().to_vec()),
            Value::Int(port.into()),
            Value::BulkString(id.as_bytes().to_vec()),
        ])
    };
    let ranges = ranges.iter().map(|&(first, last, host, port)| {
        Value::Array(vec![
            Value::Int(first.into()),
            Value::Int(last.into()),
            node(host, port, "primary"),
            node("10.9.9.9", port, "replica"),
        ])
    });
    Value::Array(ranges.collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn slots_are_redis_clusters() {
        // CRC-16/XMODEM's check value, and `CLUSTER KEYSLOT` answers.
        assert_eq!(crc16(b"123456789"), 0x31C3);
        assert_eq!(slot(b"foo"), 12_182);
        assert_eq!(slot(b"bar"), 5_061);
        assert_eq!(slot(b"{user1000}.following"), slot(b"user1000"));
        assert_eq!(slot(b"foo{}{bar}"), crc16(b"foo{}{bar}") % SLOTS);
        assert_eq!(slot(b"foo{{bar}}zap"), slot(b"{bar"));
    }

    #[test]
    fn a_channel_is_in_its_keys_slot() {
        for key in [
            "payments",
            "breaker:search",
            "{shop}:orders",
            "a}b",
            "a{}b",
            "x{y",
            "",
            "ünï{cødé}",
        ] {
            let ch = channel(key);
            assert!(ch.starts_with(CHANNEL_PREFIX), "{ch}");
            assert_eq!(slot(ch.as_bytes()), slot(key.as_bytes()), "{key} -> {ch}");
        }
        assert_eq!(channel("payments"), "tripword:{payments}");
        assert_eq!(channel("{shop}:orders"), "tripword:{shop}:{shop}:orders");
    }

    #[test]
    fn a_refresh_reads_a_slot_a_batch_in_bounded_rounds() {
        // 700 keys in as many slots or so, 600 in one slot (a tag), and
        // five full batches of 256 (1 280 keys: the key bound splits them).
        let keys: Vec<String> = (0..700)
            .map(|i| format!("k{i}"))
            .chain((0..600).map(|i| format!("{{tag}}{i}")))
            .chain((0..5 * 256).map(|i| format!("{{big{}}}{i}", i / 256)))
            .collect();
        let rounds = rounds(keys.clone(), String::as_str, 256);
        let mut seen = HashSet::new();
        for round in &rounds {
            let keys: usize = round.iter().map(Vec::len).sum();
            assert!(round.len() == 1 || (round.len() <= ROUND && keys <= ROUND_KEYS));
            for batch in round {
                assert!(!batch.is_empty() && batch.len() <= 256);
                let slots: HashSet<u16> = batch.iter().map(|k| slot(k.as_bytes())).collect();
                assert_eq!(slots.len(), 1, "one slot a batch");
                for k in batch {
                    assert!(seen.insert(k.clone()), "each key once");
                }
            }
        }
        assert_eq!(seen.len(), keys.len());
        // And as full as the bounds allow: each round but the last ends
        // because the next batch would break one of them.
        for pair in rounds.windows(2) {
            let keys: usize = pair[0].iter().map(Vec::len).sum();
            assert!(pair[0].len() == ROUND || keys + pair[1][0].len() > ROUND_KEYS);
        }
    }

    #[test]
    fn a_full_slot_is_one_batch_and_a_full_round_one_round() {
        // Four slots of exactly one batch each: 1 024 keys, a round's bound.
        let tags = ["a", "b", "c", "d"];
        let slots: HashSet<u16> = tags.iter().map(|t| slot(t.as_bytes())).collect();
        assert_eq!(slots.len(), 4);
        let keys: Vec<String> = tags
            .iter()
            .flat_map(|t| (0..256).map(move |i| format!("{{{t}}}{i}")))
            .collect();
        let rounds = rounds(keys, String::as_str, 256);
        assert_eq!(rounds.len(), 1, "1 024 keys: one round");
        assert_eq!(rounds[0].len(), 4, "no empty batch");
        assert!(rounds[0].iter().all(|batch| batch.len() == 256));
    }

    #[test]
    fn the_slot_map_names_each_slots_primary() {
        let map = slot_map(slots_reply(&[
            (0, 5_460, "10.0.0.1", 7000),
            (5_461, 10_922, "10.0.0.2", 7001),
            (10_923, 16_383, "10.0.0.3", 7002),
        ]))
        .unwrap();
        let owner = |slot| map.owner(slot).map(|(host, port)| (host.as_str(), *port));
        assert_eq!(owner(0), Some(("10.0.0.1", 7000)));
        assert_eq!(owner(5_460), Some(("10.0.0.1", 7000)));
        assert_eq!(owner(5_461), Some(("10.0.0.2", 7001)));
        assert_eq!(owner(10_922), Some(("10.0.0.2", 7001)));
        assert_eq!(owner(16_383), Some(("10.0.0.3", 7002)));
        // A slot no range covers (during a failure, or past the last).
        let gap = slot_map(slots_reply(&[(100, 200, "h", 1)])).unwrap();
        assert_eq!(gap.owner(99), None);
        assert_eq!(gap.owner(201), None);
        assert!(
            slot_map(Value::Array(Vec::new()))
                .unwrap()
                .owner(0)
                .is_none()
        );
    }

    #[test]
    fn a_host_may_come_as_a_simple_string() {
        let range = Value::Array(vec![
            Value::Int(0),
            Value::Int(16_383),
            Value::Array(vec![
                Value::SimpleString("node-a".into()),
                Value::Int(6_379),
            ]),
        ]);
        let map = slot_map(Value::Array(vec![range])).unwrap();
        assert_eq!(map.owner(42), Some(&("node-a".to_owned(), 6_379)));
    }

    #[test]
    fn an_unreadable_slot_map_is_an_error() {
        let range = |items: Vec<Value>| Value::Array(vec![Value::Array(items)]);
        let primary = || Value::Array(vec![Value::BulkString(b"h".to_vec()), Value::Int(1)]);
        for reply in [
            Value::Nil,
            Value::Okay,
            Value::Array(vec![Value::Int(0)]),
            range(vec![Value::Int(0), Value::Int(1)]),
            range(vec![Value::Int(0), Value::Int(1), Value::Int(2)]),
            range(vec![Value::Int(0), Value::Nil, primary()]),
            range(vec![Value::Nil, Value::Int(1), primary()]),
            range(vec![Value::Int(-1), Value::Int(1), primary()]),
            range(vec![Value::Int(0), Value::Int(70_000), primary()]),
            range(vec![
                Value::Int(0),
                Value::Int(1),
                Value::Array(vec![Value::Int(1)]),
            ]),
            range(vec![
                Value::Int(0),
                Value::Int(1),
                Value::Array(vec![Value::BulkString(b"h".to_vec())]),
            ]),
            range(vec![
                Value::Int(0),
                Value::Int(1),
                Value::Array(vec![Value::BulkString(b"h".to_vec()), Value::Int(65_536)]),
            ]),
        ] {
            let Err(e) = slot_map(reply.clone()) else {
                panic!("read {reply:?}");
            };
            assert!(e.to_string().contains("CLUSTER SLOTS"), "{e}");
        }
    }

    #[test]
    fn every_slot_has_a_tag() {
        for s in [0, 1, 5_061, 12_182, SLOTS - 1] {
            assert_eq!(slot(tag_of_slot(s).as_bytes()), s);
        }
        let slots: HashSet<u16> = (0..TAGS).map(|n| slot(n.to_string().as_bytes())).collect();
        assert_eq!(slots.len(), usize::from(SLOTS), "each below `TAGS`");
    }
}
