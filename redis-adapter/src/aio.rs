//! The async form (feature `tokio`): a fleet breaker's round trips on one
//! multiplexed connection of the `redis` crate's tokio support, driven by
//! the core's sans-IO [`Update`] (the same loop as the sync form's
//! [`cell::update`](tripword::cell::update), with the same rules), each
//! operation bounded by the operation timeout, connecting included.
//!
//! An admission or release that must reach Redis runs as a task of its own
//! ([`tokio::spawn`]), and the future a caller awaits waits for that task:
//! a caller cancelled while the round trip is in flight cannot leave a
//! probe elected for nobody (the task hands the ticket back, `Ignored`),
//! nor a failure half-reported. Outside a tokio runtime the async path
//! answers at once with the sync form's answer.
//!
//! On a Redis Cluster (feature `cluster-async`) the connection is the
//! `redis` crate's async cluster connection, which sends each script to
//! the node owning its key's slot and follows redirections; the scripts
//! are the same, and a compare-and-set publishes with `SPUBLISH`. With
//! `cluster` alone, the async form takes the sync path on a cluster.

use crate::breaker::{Inner, RedisBreaker, Release, Ticket};
use crate::remote::{self, CAS, LOAD, parse_read, parse_time};
use redis::Value;
use redis::aio::MultiplexedConnection;
use redis::{AsyncConnectionConfig, RedisError};
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use tokio::sync::oneshot;
use tokio::time::Instant;
use tripword::cell::{Applied, CasError, Next, Resolved, Swap, Update};
use tripword::transition::Event;
use tripword::{Outcome, Rejected, ValidConfig, W64};

/// The future of an admission that needs Redis.
pub type Acquiring = Pin<Box<dyn Future<Output = Result<Ticket, Rejected>> + Send>>;
/// The future of a release that needs Redis.
pub type Releasing = Pin<Box<dyn Future<Output = tripword::Release> + Send>>;

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
    sentinels: Option<Arc<crate::sentinel::Sentinels>>,
    /// The cluster, and the bound of each connect and reply, when the hub
    /// is on one.
    #[cfg(feature = "cluster-async")]
    cluster: Option<(crate::cluster::Cluster, std::time::Duration)>,
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
        cluster: crate::cluster::Cluster,
        timeout: std::time::Duration,
    ) {
        self.cluster = Some((cluster, timeout));
    }

    /// Connects to the primary the sentinels name instead of the client's
    /// address.
    pub(crate) fn follow(&mut self, sentinels: Arc<crate::sentinel::Sentinels>) {
        self.sentinels = Some(sentinels);
    }

    /// The connection (a cheap clone), connecting before `deadline` if
    /// there is none. The caller bounds the whole by its deadline.
    async fn get(&self) -> Result<AsyncCon, RedisError> {
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

/// One async operation on a key: its round trips, and the server time of
/// the latest reply with the local clock's reading when it arrived.
struct Op<'a> {
    inner: &'a Inner,
    latest: Option<(u64, u64)>,
    round_trips: u32,
    deadline: Instant,
}

impl Op<'_> {
    fn observed(&mut self, time: u64) {
        self.latest = Some((time, self.inner.hub.clock.micros()));
        self.round_trips += 1;
    }

    /// The word under the key and the server time read after it.
    async fn fetch(&mut self, con: &mut AsyncCon) -> Result<(u64, u64), RedisError> {
        let (word, time): (String, String) = LOAD
            .key(&self.inner.key)
            .arg(self.inner.missing_word().to_string())
            .invoke_async(con)
            .await?;
        let time = parse_time(&time)?;
        self.observed(time);
        Ok((self.read(&word), time))
    }

    /// A word a script replied with; noted as stored unless it is a
    /// missing key's stand-in (a swap's reply is the word it stored).
    fn read(&self, reply: &str) -> u64 {
        let (word, missing) = parse_read(reply);
        if !missing {
            self.inner.stored(word);
        }
        word
    }

    /// The compare-and-set: whether it swapped, the word the key holds, and
    /// the server time read with it.
    async fn cas(
        &mut self,
        con: &mut AsyncCon,
        current: u64,
        new: u64,
    ) -> Result<(bool, u64, u64), RedisError> {
        let mut invocation = CAS.key(&self.inner.key);
        invocation
            .arg(current.to_string())
            .arg(new.to_string())
            .arg(&self.inner.channel)
            .arg(self.inner.missing_word().to_string())
            // On a cluster, published on the key's shard (as the sync form).
            .arg(if self.inner.hub.is_cluster() {
                "SPUBLISH"
            } else {
                "PUBLISH"
            });
        let replicas = self.inner.hub.timing.replicas;
        let ((swapped, word, time), acked): ((i64, String, String), u64) = if replicas == 0 {
            (invocation.invoke_async(con).await?, 0)
        } else {
            // The script and `WAIT` in one round trip; the WAIT holds the
            // multiplexed connection's later commands until it answers.
            let query = async |con: &mut AsyncCon| -> Result<Vec<Value>, RedisError> {
                let left = self.deadline.saturating_duration_since(Instant::now());
                remote::waited(&invocation, replicas, remote::wait_millis(left))
                    .query_async(con)
                    .await
            };
            let mut replies = query(con).await?;
            if remote::no_script(&replies) {
                invocation.load_async(con).await?;
                replies = query(con).await?;
            }
            remote::script_and_wait(replies)?
        };
        let time = parse_time(&time)?;
        self.observed(time);
        let word = self.read(&word);
        if swapped == 1 && acked < u64::from(replicas) {
            // Stored, but not known to survive a failover: not made.
            return Err(remote::unacknowledged(acked, replicas));
        }
        Ok((swapped == 1, word, time))
    }

    /// Applies `event` from `seen` (read at server time `seen_at`, if
    /// known): the core's [`Update`] stepped here, one compare-and-set per
    /// attempt. A step that needs the time of a word read without one
    /// (the mirror's) starts again from a fresh read, which brings both.
    async fn apply(
        &mut self,
        con: &mut AsyncCon,
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
                let (word, at) = self.fetch(con).await?;
                update = Update::new(config, word, event, Some(at));
                continue;
            }
            let exchange = match next {
                Next::Done(applied) => return Ok(applied),
                Next::Exchange(exchange) => exchange,
            };
            let (swapped, word, at) = self
                .cas(con, exchange.current(), exchange.desired())
                .await?;
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

impl Inner {
    /// Runs `body` as one operation within the operation timeout; samples
    /// the server's clock and counts the round trips either way.
    async fn operation<T>(
        &self,
        body: impl AsyncFnOnce(&mut Op<'_>, &mut AsyncCon) -> Result<T, RedisError>,
    ) -> Result<T, RedisError> {
        let deadline = Instant::now() + self.hub.timing.op_timeout;
        let mut op = Op {
            inner: self,
            latest: None,
            round_trips: 0,
            deadline,
        };
        let run = async {
            let mut con = self.hub.aio.get().await?;
            body(&mut op, &mut con).await
        };
        let out = match tokio::time::timeout_at(deadline, run).await {
            Ok(out) => out,
            Err(_) => Err(remote::deadline_passed()),
        };
        if let Some((server, local)) = op.latest {
            self.hub.estimate.sample(server, local);
        }
        self.count_call(op.round_trips);
        if out.is_err() {
            self.hub.aio.failed();
            self.hub.suspect();
        }
        out
    }

    /// An admission Redis decides, from the mirror's `base`.
    async fn acquire_remote_async(&self, base: u64) -> Result<Ticket, Rejected> {
        let done = self
            .operation(async |op, con| {
                let (seen, at) = op.fetch(con).await?;
                let applied = op
                    .apply(con, &self.config, seen, Some(at), Event::Admit, |swap| {
                        self.report(swap);
                    })
                    .await?;
                Ok((applied, op.latest.map_or(at, |(t, _)| t)))
            })
            .await;
        match done {
            Ok((applied, at)) => self.admission(base, applied, at),
            Err(_) => {
                self.detach();
                self.acquire_local()
            }
        }
    }

    /// A release Redis records, from the mirror's `word`.
    async fn release_remote_async(&self, word: u64, counter: u32, outcome: Outcome) -> Release {
        let event = Event::Release { counter, outcome };
        let base = self.mirror_base();
        let done = self
            .operation(async |op, con| {
                op.apply(con, &self.config, word, None, event, |swap| {
                    self.report(swap);
                })
                .await
            })
            .await;
        match done {
            Ok(applied) => self.recorded(base, &applied),
            Err(_) => {
                self.detach();
                self.unreported(outcome)
            }
        }
    }
}

/// The async admission: `None` when it must be awaited and no tokio
/// runtime is current (the caller then takes the sync path).
pub(crate) fn acquire(inner: &Arc<Inner>, base: u64) -> Option<Acquiring> {
    if inner.hub.is_cluster() && !cfg!(feature = "cluster-async") {
        // One node's multiplexed connection cannot follow the slots.
        return None;
    }
    let runtime = tokio::runtime::Handle::try_current().ok()?;
    let (tx, rx) = oneshot::channel();
    let task = inner.clone();
    runtime.spawn(async move {
        let answer = task.acquire_remote_async(base).await;
        if let Err(Ok(ticket)) = tx.send(answer) {
            // The caller is gone: the admission went through for nobody.
            hand_back(&task, ticket);
        }
    });
    Some(Box::pin(Admission {
        answer: Some(rx),
        inner: inner.clone(),
    }))
}

/// What the caller of an async admission awaits: the answer of the task
/// that went to Redis. Dropped before it took the answer, it hands back a
/// ticket the task had already delivered (the task hands back one it could
/// not deliver): no admission is left held by nobody.
struct Admission {
    answer: Option<oneshot::Receiver<Result<Ticket, Rejected>>>,
    inner: Arc<Inner>,
}

impl Future for Admission {
    type Output = Result<Ticket, Rejected>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        let answer = this
            .answer
            .as_mut()
            .expect("an admission polled after it completed");
        let out = match Pin::new(answer).poll(cx) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(Ok(answer)) => answer,
            // The task did not finish (its runtime is shutting down).
            Poll::Ready(Err(_)) => this.inner.acquire_local(),
        };
        this.answer = None;
        Poll::Ready(this.inner.answered(out))
    }
}

impl Drop for Admission {
    fn drop(&mut self) {
        if let Some(mut answer) = self.answer.take() {
            // From here the task cannot deliver: it hands back what it
            // holds; what it delivered before is taken and handed back here.
            answer.close();
            if let Ok(Ok(ticket)) = answer.try_recv() {
                hand_back(&self.inner, ticket);
            }
        }
    }
}

/// Releases a ticket admitted for a caller that is gone, as a cancelled
/// call is (`Ignored`: spec, a cancelled probe never holds the breaker): a
/// release that needs Redis is spawned when a runtime is current, and made
/// on this thread otherwise.
fn hand_back(inner: &Arc<Inner>, ticket: Ticket) {
    let counter = ticket.counter();
    let Err(word) = inner.release_prepare(&ticket, Outcome::Ignored) else {
        return;
    };
    match tokio::runtime::Handle::try_current() {
        Ok(runtime) => {
            let task = inner.clone();
            runtime.spawn(async move {
                task.release_remote_async(word, counter, Outcome::Ignored)
                    .await
            });
        }
        Err(_) => {
            RedisBreaker::from_inner(inner.clone()).release(ticket, Outcome::Ignored);
        }
    }
}

/// The async release of `ticket`, which Redis must record from `word`:
/// `None` when no tokio runtime is current.
pub(crate) fn release(
    inner: &Arc<Inner>,
    word: u64,
    counter: u32,
    outcome: Outcome,
) -> Option<Releasing> {
    if inner.hub.is_cluster() && !cfg!(feature = "cluster-async") {
        return None;
    }
    let runtime = tokio::runtime::Handle::try_current().ok()?;
    let task = inner.clone();
    // Reported by the task: a detached release's too.
    let handle = runtime.spawn(async move {
        let release = task.release_remote_async(word, counter, outcome).await;
        task.released(release, outcome)
    });
    Some(Box::pin(async move {
        match handle.await {
            Ok(Release::Stale) => tripword::Release::Stale,
            Ok(_) => tripword::Release::Recorded,
            // The task did not finish: nothing is known to have counted.
            Err(_) => tripword::Release::Stale,
        }
    }))
}
