//! The async transport (feature `tokio`): the hub's one multiplexed
//! connection of the `redis` crate's tokio support, made on first use and
//! again after an error, and [`AsyncOp`], the async driver of the
//! protocol's trips, which steps the core's sans-IO [`Update`] (the same
//! loop as the blocking driver's [`cell::update`](tripword::cell::update),
//! with the same rules). The hub bounds each operation by the operation
//! timeout, connecting included (`Hub::remote_async`).
//!
//! On a Redis Cluster (feature `cluster-async`) the connection is the
//! `redis` crate's async cluster connection, which sends each script to
//! the node owning its key's slot and follows redirections; the scripts
//! are the same, and a compare-and-set publishes with `SPUBLISH`.

use super::script::{self, Answer, Publish, Read, Request, Trip};
use crate::time::LocalClock;
use redis::Value;
use redis::aio::MultiplexedConnection;
use redis::{AsyncConnectionConfig, RedisError};
use std::convert::Infallible;
use std::sync::{Arc, Mutex, PoisonError};
use tokio::time::Instant;
use tripword::cell::{Applied, CasError, Next, Resolved, Swap, Update};
use tripword::transition::Event;
use tripword::{ValidConfig, W64};

/// The connection an async operation runs on: one server's multiplexed
/// connection, or a cluster's (a cheap clone either way).
#[derive(Clone)]
pub(crate) enum AsyncCon {
    Single(MultiplexedConnection),
    #[cfg(feature = "cluster-async")]
    Cluster(redis::cluster_async::ClusterConnection),
}

impl redis::aio::ConnectionLike for AsyncCon {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a redis::Cmd) -> redis::RedisFuture<'a, Value> {
        match self {
            AsyncCon::Single(c) => c.req_packed_command(cmd),
            #[cfg(feature = "cluster-async")]
            AsyncCon::Cluster(c) => c.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a redis::Pipeline,
        offset: usize,
        count: usize,
    ) -> redis::RedisFuture<'a, Vec<Value>> {
        match self {
            AsyncCon::Single(c) => c.req_packed_commands(pipeline, offset, count),
            #[cfg(feature = "cluster-async")]
            AsyncCon::Cluster(c) => c.req_packed_commands(pipeline, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            AsyncCon::Single(c) => c.get_db(),
            #[cfg(feature = "cluster-async")]
            AsyncCon::Cluster(c) => c.get_db(),
        }
    }
}

/// The hub's one async connection, made on first use and made again after
/// an error.
pub(crate) struct Multiplexed {
    client: redis::Client,
    con: Mutex<Option<AsyncCon>>,
    /// The sentinels that name the primary, when the hub follows one.
    sentinels: Option<Arc<super::sentinel::Sentinels>>,
    /// The cluster, and the bound of each connect and reply, when the hub
    /// is on one.
    #[cfg(feature = "cluster-async")]
    cluster: Option<(super::cluster::Cluster, std::time::Duration)>,
}

impl Multiplexed {
    pub(crate) fn new(client: redis::Client) -> Self {
        Multiplexed {
            client,
            con: Mutex::new(None),
            sentinels: None,
            #[cfg(feature = "cluster-async")]
            cluster: None,
        }
    }

    /// Connects to `cluster` instead of the client's address, each connect
    /// and reply bounded by `timeout` (the operation timeout).
    #[cfg(feature = "cluster-async")]
    pub(crate) fn on_cluster(
        &mut self,
        cluster: super::cluster::Cluster,
        timeout: std::time::Duration,
    ) {
        self.cluster = Some((cluster, timeout));
    }

    /// Connects to the primary the sentinels name instead of the client's
    /// address.
    pub(crate) fn follow(&mut self, sentinels: Arc<super::sentinel::Sentinels>) {
        self.sentinels = Some(sentinels);
    }

    /// The connection (a cheap clone), connecting before `deadline` if
    /// there is none. The caller bounds the whole by its deadline.
    pub(crate) async fn get(&self) -> Result<AsyncCon, RedisError> {
        if let Some(con) = self
            .con
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
        {
            return Ok(con);
        }
        // Bounded by the caller's timeout; none of the crate's own.
        let config = AsyncConnectionConfig::new()
            .set_connection_timeout(None)
            .set_response_timeout(None);
        #[cfg(feature = "cluster-async")]
        if let Some((cluster, timeout)) = &self.cluster {
            let con = AsyncCon::Cluster(cluster.connect_async(*timeout).await?);
            *self.con.lock().unwrap_or_else(PoisonError::into_inner) = Some(con.clone());
            return Ok(con);
        }
        let con = AsyncCon::Single(match &self.sentinels {
            Some(sentinels) => sentinels.connect_async(&config).await?,
            None => {
                self.client
                    .get_multiplexed_async_connection_with_config(&config)
                    .await?
            }
        });
        *self.con.lock().unwrap_or_else(PoisonError::into_inner) = Some(con.clone());
        Ok(con)
    }

    /// Forgets the connection after an error: the next operation connects
    /// again.
    pub(crate) fn failed(&self) {
        *self.con.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }
}

/// One async operation on a key: the async driver of the protocol's
/// trips ([`super::script`]), as [`RemoteCell`](super::remote::RemoteCell)
/// is the blocking one, with the server time of the latest reply and the
/// local clock's reading when it arrived, and the round trips made.
pub(crate) struct AsyncOp<'a> {
    con: AsyncCon,
    key: &'a str,
    publish: Publish<'a>,
    missing: u64,
    replicas: u32,
    clock: &'a dyn LocalClock,
    deadline: Instant,
    pub(crate) latest: Option<(u64, u64)>,
    pub(crate) round_trips: u32,
    /// The latest word read that was stored in Redis (not a missing key's).
    pub(crate) stored: Option<u64>,
}

impl<'a> AsyncOp<'a> {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        con: AsyncCon,
        key: &'a str,
        publish: Publish<'a>,
        missing: u64,
        replicas: u32,
        clock: &'a dyn LocalClock,
        deadline: Instant,
    ) -> AsyncOp<'a> {
        AsyncOp {
            con,
            key,
            publish,
            missing,
            replicas,
            clock,
            deadline,
            latest: None,
            round_trips: 0,
            stored: None,
        }
    }

    /// Sends `trip` (and, when the server lost the script, loads it and
    /// sends it once more). The caller bounds the whole by the deadline.
    async fn run<T>(&mut self, trip: &Trip<T>) -> Result<(T, Option<u64>), RedisError> {
        let mut loaded = false;
        loop {
            let left = self.deadline.saturating_duration_since(Instant::now());
            // A `WAIT` holds the multiplexed connection's later commands
            // until it answers.
            let sent = match trip.request(left) {
                Request::One(cmd) => cmd
                    .query_async::<Value>(&mut self.con)
                    .await
                    .map(|v| vec![v]),
                Request::Waited(pipe) => pipe.query_async::<Vec<Value>>(&mut self.con).await,
            };
            match trip.answer(sent) {
                Answer::Done(out) => return out,
                Answer::Load if !loaded => {
                    let _: String = trip.load().query_async(&mut self.con).await?;
                    loaded = true;
                }
                Answer::Load => return Err(script::script_lost()),
            }
        }
    }

    /// A word a script read: noted as stored unless it is a missing key's
    /// stand-in (a swap's reply is the word it stored).
    fn read(&mut self, read: Read) -> u64 {
        self.latest = Some((read.now, self.clock.micros()));
        self.round_trips += 1;
        if !read.missing {
            self.stored = Some(read.word);
        }
        read.word
    }

    /// The word under the key and the server time read after it.
    pub(crate) async fn fetch(&mut self) -> Result<(u64, u64), RedisError> {
        let (read, _) = self.run(&script::fetch(self.key, self.missing)).await?;
        Ok((self.read(read), read.now))
    }

    /// The compare-and-set: whether it swapped, the word the key holds, and
    /// the server time read with it.
    async fn cas(&mut self, current: u64, new: u64) -> Result<(bool, u64, u64), RedisError> {
        let trip = script::cas(self.key, current, new, self.publish, self.missing)
            .acknowledged_by(self.replicas);
        let (reply, acked) = self.run(&trip).await?;
        let word = self.read(reply.read);
        if let Some(acked) = acked
            && reply.swapped
            && acked < u64::from(self.replicas)
        {
            // Stored, but not known to survive a failover: not made.
            return Err(script::unacknowledged(acked, self.replicas));
        }
        Ok((reply.swapped, word, reply.read.now))
    }

    /// Applies `event` from `seen` (read at server time `seen_at`, if
    /// known): the core's [`Update`] stepped here, one compare-and-set per
    /// attempt. A step that needs the time of a word read without one
    /// (the mirror's) starts again from a fresh read, which brings both.
    pub(crate) async fn apply(
        &mut self,
        config: &ValidConfig<W64>,
        seen: u64,
        seen_at: Option<u64>,
        event: Event,
        on_swap: impl FnOnce(Swap<W64>),
    ) -> Result<Applied<W64>, RedisError> {
        let mut update = Update::new(config, seen, event, seen_at);
        loop {
            let mut untimed = false;
            let next = update.step(|| {
                untimed = true;
                0
            });
            if untimed {
                drop(next);
                let (word, at) = self.fetch().await?;
                update = Update::new(config, word, event, Some(at));
                continue;
            }
            let exchange = match next {
                Next::Done(applied) => return Ok(applied),
                Next::Exchange(exchange) => exchange,
            };
            let (swapped, word, at) = self.cas(exchange.current(), exchange.desired()).await?;
            let result = if swapped {
                Ok(())
            } else {
                Err(CasError::<u64, Infallible>::Changed(word))
            };
            match exchange.resolve(result) {
                Ok(Resolved::Won { applied, swap }) => {
                    on_swap(swap);
                    return Ok(applied);
                }
                // The CAS script read the time after the word it returns.
                Ok(Resolved::Retry(again)) => {
                    update = Update::new(config, again.current(), event, Some(at));
                }
                Err(never) => match never {},
            }
        }
    }
}

#[cfg(test)]
mod tests;
