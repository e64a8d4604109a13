//! What the breakers of one Redis deployment share in a process: the
//! client, a bounded pool of connections, the estimate of the server's
//! clock, the timeouts, and the list of live breakers that the one watcher
//! thread keeps fresh (`docs/distributed.md`, "A fleet in one process").
//!
//! A [`Fleet`](crate::Fleet) owns one hub for all its keys; a
//! [`RedisBreaker`](crate::RedisBreaker) built alone owns a hub of its own.
//! The hub lives as long as a breaker on it (or the fleet) does; the
//! watcher holds it weakly and ends when it is gone.

#[cfg(feature = "tokio")]
use super::aio::AsyncOp;
use super::con::Con;
use super::remote::RemoteCell;
#[cfg(feature = "tokio")]
use super::script::Publish;
use super::script::deadline_passed;
use super::sentinel::Sentinels;
use super::tls::Tls;
use super::{CHANNEL_PREFIX, Member, Timing};
use crate::time::{Estimate, LocalClock, LocalTicks};
use redis::{Connection, IntoConnectionInfo, RedisError};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, RwLock, Weak};
use std::time::{Duration, Instant};

/// The most connections a hub keeps open for calls and refreshes (more are
/// opened when more threads go to Redis at once, and closed after).
pub(crate) const POOL: usize = 16;

/// The most keys one refresh reads in one round trip.
const BATCH: usize = 256;

/// The timeout to give the `redis` crate's connect when `left` remains of
/// the operation and the connection's setup waits for `setup_reads`
/// replies: it gives the TCP connect and each reply the whole of it.
fn connect_timeout(left: Duration, setup_reads: u32) -> Duration {
    left / setup_reads.max(1)
}

pub(crate) struct Hub {
    client: redis::Client,
    /// The cluster the words are in, when there is one (feature `cluster`):
    /// operations then run on cluster connections, and the watcher
    /// subscribes to each breaker's channel on the node owning its slot.
    #[cfg(feature = "cluster")]
    pub(crate) cluster: Option<super::cluster::Cluster>,
    /// Replies the `redis` crate reads when it opens a connection (`AUTH`
    /// or `HELLO`, `SELECT`), each with the whole timeout it is given.
    setup_reads: u32,
    /// Connections for calls and refreshes; the lock is held only to take
    /// or return one, never across a round trip.
    pool: Mutex<Vec<Con>>,
    pub(crate) estimate: Estimate,
    pub(crate) clock: Arc<dyn LocalClock>,
    pub(crate) ticks: LocalTicks,
    pub(crate) timing: Timing,
    /// The live breakers, by channel (more than one for a key only while an
    /// evicted breaker is still held by a caller).
    members: RwLock<HashMap<String, Vec<Weak<dyn Member>>>>,
    /// Moves on every change of `members`: the cluster watcher follows the
    /// channels again only when it moved.
    #[cfg(feature = "cluster")]
    changes: std::sync::atomic::AtomicU64,
    #[cfg(feature = "tokio")]
    pub(crate) aio: super::aio::Multiplexed,
    /// The sentinels that name the primary, when the hub follows one.
    pub(crate) sentinels: Option<Arc<Sentinels>>,
    /// The certificates of its TLS connections.
    tls: Tls,
    /// Moves each time the sentinels announce a new primary: the watcher
    /// then subscribes again, on the new one.
    switches: std::sync::atomic::AtomicU64,
}

impl Hub {
    /// A hub on the Redis at `url`. Connects to nothing yet.
    pub(crate) fn new(
        url: &str,
        timing: Timing,
        clock: Arc<dyn LocalClock>,
    ) -> Result<Hub, RedisError> {
        let info = url.into_connection_info()?;
        // No `CLIENT SETINFO` on connect: two more replies to wait for, each
        // with the whole timeout, on a server that may be mute.
        let redis = info.redis_settings().clone().set_skip_set_lib_name();
        let setup_reads = u32::from(
            redis.password().is_some()
                || redis.username().is_some()
                || redis.protocol() != redis::ProtocolVersion::RESP2,
        ) + u32::from(redis.db() != 0);
        let info = info.set_redis_settings(redis);
        let client = redis::Client::open(info)?;
        Ok(Hub {
            #[cfg(feature = "tokio")]
            aio: super::aio::Multiplexed::new(client.clone()),
            client,
            #[cfg(feature = "cluster")]
            cluster: None,
            setup_reads,
            pool: Mutex::new(Vec::new()),
            estimate: Estimate::new(),
            ticks: LocalTicks(clock.clone()),
            clock,
            timing,
            members: RwLock::new(HashMap::new()),
            sentinels: None,
            tls: Tls::default(),
            switches: std::sync::atomic::AtomicU64::new(0),
            #[cfg(feature = "cluster")]
            changes: std::sync::atomic::AtomicU64::new(0),
        })
    }

    /// The hub, its `rediss://` connections opened with `tls`'s
    /// certificates. Before [`following`](Self::following) and
    /// [`on_cluster`](Self::on_cluster), which take them too.
    pub(crate) fn with_tls(mut self, tls: Tls) -> Result<Hub, RedisError> {
        self.client = tls.client(self.client.get_connection_info().clone())?;
        #[cfg(feature = "tokio")]
        {
            self.aio = super::aio::Multiplexed::new(self.client.clone());
        }
        self.tls = tls;
        Ok(self)
    }

    /// The hub, following the primary the sentinels at `urls` name for
    /// `service` (each connect asks them); the URL it was made with then
    /// gives only the primary's settings (user, password, database,
    /// protocol, TLS or not), not its address.
    pub(crate) fn following(mut self, urls: &[String], service: &str) -> Result<Hub, RedisError> {
        let primary = self.client.get_connection_info().clone();
        let sentinels = Arc::new(Sentinels::new(urls, service, primary, self.tls.clone())?);
        #[cfg(feature = "tokio")]
        self.aio.follow(sentinels.clone());
        self.sentinels = Some(sentinels);
        Ok(self)
    }

    /// Puts the hub on the Redis Cluster reached through `url` and `nodes`.
    #[cfg(feature = "cluster")]
    pub(crate) fn on_cluster(&mut self, url: &str, nodes: &[String]) -> Result<(), RedisError> {
        let seeds: Vec<String> = std::iter::once(url.to_owned())
            .chain(nodes.iter().cloned())
            .collect();
        let cluster = super::cluster::Cluster::new(&seeds, &self.tls)?;
        #[cfg(feature = "cluster-async")]
        self.aio.on_cluster(cluster.clone(), self.timing.op_timeout);
        self.cluster = Some(cluster);
        Ok(())
    }

    /// The estimate of the server's time, trusted for a refresh period and
    /// an operation timeout after its sample.
    pub(crate) fn estimate(&self) -> Option<u64> {
        let max_age = self.timing.refresh + self.timing.op_timeout;
        let max_age = u64::try_from(max_age.as_micros()).unwrap_or(u64::MAX);
        self.estimate.at(|| self.clock.micros(), max_age)
    }

    /// A connection, opened within what is left before `deadline`, setup
    /// replies included: the `redis` crate gives the TCP connect and each
    /// setup reply the whole timeout it is passed, so that timeout is what
    /// is left divided by the number of replies.
    pub(crate) fn connect(&self, deadline: Instant) -> Result<Connection, RedisError> {
        let left = deadline.saturating_duration_since(Instant::now());
        if left < Duration::from_micros(100) {
            return Err(deadline_passed());
        }
        match &self.sentinels {
            Some(sentinels) => {
                sentinels.connect(deadline, |left| connect_timeout(left, self.setup_reads))
            }
            None => self
                .client
                .get_connection_with_timeout(connect_timeout(left, self.setup_reads)),
        }
    }

    /// A connection for operations: to the one Redis, or to the cluster.
    fn connect_op(&self, deadline: Instant) -> Result<Con, RedisError> {
        #[cfg(feature = "cluster")]
        if let Some(cluster) = &self.cluster {
            let left = deadline.saturating_duration_since(Instant::now());
            if left < Duration::from_micros(100) {
                return Err(deadline_passed());
            }
            return cluster.connect(left).map(|con| Con::Cluster(Box::new(con)));
        }
        self.connect(deadline).map(Con::Node)
    }

    /// Whether the words are in a Redis Cluster.
    pub(crate) fn is_cluster(&self) -> bool {
        #[cfg(feature = "cluster")]
        if self.cluster.is_some() {
            return true;
        }
        false
    }

    /// The channel the changes of the word under `key` are published on:
    /// `tripword:<key>`, or in a cluster a name in the key's slot (see
    /// [`cluster::channel`](super::cluster::channel)).
    pub(crate) fn channel(&self, key: &str) -> String {
        #[cfg(feature = "cluster")]
        if self.cluster.is_some() {
            return super::cluster::channel(key);
        }
        format!("{CHANNEL_PREFIX}{key}")
    }

    /// How many breakers the watcher keeps fresh (the dead ones not yet
    /// pruned included).
    #[cfg(test)]
    fn members(&self) -> usize {
        let members = self.members.read().unwrap_or_else(PoisonError::into_inner);
        members.values().map(Vec::len).sum()
    }

    /// Runs `op` on `key` with a pooled connection, every round trip within
    /// the operation timeout. Returns its result and the round trips it
    /// made, and the latest word it found stored in Redis. A connection
    /// that saw an error is dropped (a late reply must not be read as the
    /// next one's).
    pub(crate) fn remote<T>(
        &self,
        key: &str,
        channel: &str,
        missing: u64,
        op: impl FnOnce(&RemoteCell<'_>) -> Result<T, RedisError>,
    ) -> (Result<T, RedisError>, u32, Option<u64>) {
        let deadline = Instant::now() + self.timing.op_timeout;
        // A connection taken before a switch of primary is not pooled again.
        let switches = self.switches();
        let pooled = self
            .pool
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        let mut con = match pooled {
            Some(con) => con,
            None => match self.connect_op(deadline) {
                Ok(con) => con,
                Err(e) => return (Err(e), 0, None),
            },
        };
        let mut cell = RemoteCell::new(&mut con, key, channel, missing, deadline, &*self.clock)
            .acknowledged_by(self.timing.replicas);
        if self.is_cluster() {
            cell.publish_sharded();
        }
        let out = op(&cell).and_then(|v| match cell.take_failure() {
            Some(e) => Err(e),
            None => Ok(v),
        });
        if let Some((server, local)) = cell.latest() {
            self.estimate.sample(server, local);
        }
        let trips = cell.round_trips();
        let stored = cell.stored();
        drop(cell);
        if out.is_ok() {
            if self.switches() == switches {
                self.give_back(con);
            }
        } else {
            self.suspect();
        }
        (out, trips, stored)
    }

    /// [`remote`](Self::remote) for the async form: `body` runs on the
    /// hub's multiplexed connection, the whole (connecting included)
    /// within the operation timeout, and the estimate of the server's
    /// clock is sampled either way. Returns its result, the round trips it
    /// made, and the latest word it found stored in Redis. After an error
    /// the connection is made again on the next operation.
    #[cfg(feature = "tokio")]
    pub(crate) async fn remote_async<T>(
        &self,
        key: &str,
        channel: &str,
        missing: u64,
        body: impl AsyncFnOnce(&mut AsyncOp<'_>) -> Result<T, RedisError>,
    ) -> (Result<T, RedisError>, u32, Option<u64>) {
        let deadline = tokio::time::Instant::now() + self.timing.op_timeout;
        let publish = Publish {
            channel,
            // On a cluster, published on the key's shard (as the sync form).
            command: if self.is_cluster() {
                "SPUBLISH"
            } else {
                "PUBLISH"
            },
        };
        let mut op = None;
        let run = async {
            let con = self.aio.get().await?;
            let op = op.insert(AsyncOp::new(
                con,
                key,
                publish,
                missing,
                self.timing.replicas,
                &*self.clock,
                deadline,
            ));
            body(op).await
        };
        let out = match tokio::time::timeout_at(deadline, run).await {
            Ok(out) => out,
            Err(_) => Err(deadline_passed()),
        };
        let (trips, stored) = match &op {
            Some(op) => {
                if let Some((server, local)) = op.latest {
                    self.estimate.sample(server, local);
                }
                (op.round_trips, op.stored)
            }
            None => (0, None),
        };
        if out.is_err() {
            self.aio.failed();
            self.suspect();
        }
        (out, trips, stored)
    }

    /// After an error, when following a primary: it may have changed, and
    /// every open connection may be to the old one. They are dropped (the
    /// pooled ones and the async one); the next operations connect afresh,
    /// asking the sentinels.
    pub(crate) fn suspect(&self) {
        if self.sentinels.is_none() {
            return;
        }
        self.pool
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
        #[cfg(feature = "tokio")]
        self.aio.failed();
    }

    /// The sentinels announced a new primary (`+switch-master`): every
    /// open connection is to the old one. They are dropped, and the
    /// watcher subscribes again, so the next operations reach the new
    /// primary before any of them meets an error there.
    pub(crate) fn switched(&self) {
        self.switches
            .fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        self.suspect();
    }

    /// How many times the sentinels announced a new primary.
    pub(crate) fn switches(&self) -> u64 {
        self.switches.load(std::sync::atomic::Ordering::Acquire)
    }

    fn give_back(&self, con: Con) {
        let mut pool = self.pool.lock().unwrap_or_else(PoisonError::into_inner);
        if pool.len() < POOL {
            pool.push(con);
        }
    }

    /// Adds a breaker to the ones the watcher keeps fresh.
    pub(crate) fn join(&self, member: &Arc<dyn Member>) {
        let mut members = self.members.write().unwrap_or_else(PoisonError::into_inner);
        members
            .entry(member.channel().to_owned())
            .or_default()
            .push(Arc::downgrade(member));
        #[cfg(feature = "cluster")]
        self.changes
            .fetch_add(1, std::sync::atomic::Ordering::Release);
    }

    /// How many times the breakers changed (joined, or pruned).
    #[cfg(feature = "cluster")]
    pub(crate) fn changes(&self) -> u64 {
        self.changes.load(std::sync::atomic::Ordering::Acquire)
    }

    /// Forgets the breakers of `channel` that are gone.
    pub(crate) fn prune(&self, channel: &str) {
        let mut members = self.members.write().unwrap_or_else(PoisonError::into_inner);
        if let Some(list) = members.get_mut(channel) {
            list.retain(|w| w.strong_count() > 0);
            if list.is_empty() {
                members.remove(channel);
            }
        }
        #[cfg(feature = "cluster")]
        self.changes
            .fetch_add(1, std::sync::atomic::Ordering::Release);
    }

    /// The live breakers on `channel`.
    pub(crate) fn on_channel(&self, channel: &str) -> Vec<Arc<dyn Member>> {
        let members = self.members.read().unwrap_or_else(PoisonError::into_inner);
        members
            .get(channel)
            .map(|list| list.iter().filter_map(Weak::upgrade).collect())
            .unwrap_or_default()
    }

    /// Every live breaker.
    pub(crate) fn live(&self) -> Vec<Arc<dyn Member>> {
        let members = self.members.read().unwrap_or_else(PoisonError::into_inner);
        members
            .values()
            .flat_map(|list| list.iter().filter_map(Weak::upgrade))
            .collect()
    }

    /// Reads the word of every live breaker into its mirror, up to
    /// [`BATCH`] keys a round trip, with the server's time; a corrupt word
    /// is repaired by its breaker (one compare-and-set). Each round (one
    /// batch, or in a cluster a pipeline of batches) is bounded by the
    /// operation timeout.
    pub(crate) fn refresh_all(&self) -> Result<(), RedisError> {
        for round in self.rounds(self.live()) {
            // The mirrors' bases before the read: a word not ahead of its
            // mirror is taken only if the mirror did not change meanwhile.
            let bases: Vec<Vec<u64>> = round
                .iter()
                .map(|batch| batch.iter().map(|b| b.mirror_base()).collect())
                .collect();
            let keys: Vec<Vec<(&str, u64)>> = round
                .iter()
                .map(|batch| batch.iter().map(|b| (b.key(), b.missing_word())).collect())
                .collect();
            let (words, _, _) = self.remote("", "", 0, |cell| cell.fetch_batches(&keys));
            for ((batch, bases), words) in round.iter().zip(bases).zip(words?) {
                for ((inner, base), (word, missing)) in batch.iter().zip(bases).zip(words) {
                    if !missing {
                        inner.stored(word);
                    }
                    inner.refreshed(base, word)?;
                }
            }
        }
        Ok(())
    }

    /// The breakers in batches of at most [`BATCH`], each batch read by one
    /// script, grouped in rounds each within one operation timeout: on one
    /// Redis a round is one batch (one round trip); in a cluster each batch
    /// is of one slot (a script's keys must be), and a round's batches are
    /// pipelined, one round trip per node.
    fn rounds(&self, mut live: Vec<Arc<dyn Member>>) -> Vec<Vec<Vec<Arc<dyn Member>>>> {
        #[cfg(feature = "cluster")]
        if self.cluster.is_some() {
            return super::cluster::rounds(live, |m| m.key(), BATCH);
        }
        let mut out = Vec::new();
        while live.len() > BATCH {
            let rest = live.split_off(BATCH);
            out.push(vec![std::mem::replace(&mut live, rest)]);
        }
        if !live.is_empty() {
            out.push(vec![live]);
        }
        out
    }

    /// Every live breaker falls back to its local breaker.
    pub(crate) fn detach_all(&self) {
        self.suspect();
        for inner in self.live() {
            inner.detach();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::quorum::Quorum;
    use crate::time::Monotonic;

    #[test]
    fn a_connect_splits_what_is_left_between_its_setup_replies() {
        let left = Duration::from_millis(600);
        assert_eq!(connect_timeout(left, 0), left, "the TCP connect alone");
        assert_eq!(connect_timeout(left, 1), left);
        assert_eq!(connect_timeout(left, 2), Duration::from_millis(300));
        assert_eq!(connect_timeout(left, 3), Duration::from_millis(200));
    }

    #[test]
    fn breakers_that_are_gone_leave_the_watchers_list() {
        // Nothing listens there: each breaker's first read fails at once.
        let hub = Arc::new(
            Hub::new("redis://127.0.0.1:1/", Timing::DEFAULT, Arc::new(Monotonic)).unwrap(),
        );
        let config = tripword::ValidConfig::new(crate::DEFAULT_CONFIG);
        let join = |key: &str| {
            crate::RedisBreaker::join(&hub, key.to_owned(), config, Arc::new(()), Quorum::ONE)
        };
        let (a, a2, b) = (join("a"), join("a"), join("b"));
        assert_eq!(hub.members(), 3);
        assert_eq!(hub.on_channel("tripword:a").len(), 2);
        assert_eq!(hub.live().len(), 3);
        drop(a);
        assert_eq!(hub.members(), 2, "pruned when dropped");
        assert_eq!(hub.on_channel("tripword:a").len(), 1);
        drop((a2, b));
        assert_eq!(hub.members(), 0);
        assert!(
            hub.members.read().unwrap().is_empty(),
            "empty channels go too"
        );
    }

    #[test]
    fn the_setup_replies_a_connection_waits_for_are_counted() {
        let reads = |url: &str| {
            Hub::new(url, Timing::DEFAULT, Arc::new(Monotonic))
                .unwrap()
                .setup_reads
        };
        assert_eq!(reads("redis://127.0.0.1:6379/"), 0, "no CLIENT SETINFO");
        assert_eq!(reads("redis://:secret@127.0.0.1:6379/"), 1, "AUTH");
        assert_eq!(reads("redis://127.0.0.1:6379/2"), 1, "SELECT");
        assert_eq!(
            reads("redis://user:secret@127.0.0.1:6379/3"),
            2,
            "AUTH, SELECT"
        );
        assert_eq!(reads("redis://127.0.0.1:6379/?protocol=resp3"), 1, "HELLO");
    }
}
