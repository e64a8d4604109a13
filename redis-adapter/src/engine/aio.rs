//! The async form of the engine (feature `tokio`): an admission or
//! release that must reach Redis runs as a task of its own
//! ([`tokio::spawn`]), and the future a caller awaits waits for that task:
//! a caller cancelled while the round trip is in flight cannot leave a
//! probe elected for nobody (the task hands the ticket back, `Ignored`),
//! nor a failure half-reported. Outside a tokio runtime the async path
//! answers at once with the sync form's answer. With `cluster` but not
//! `cluster-async`, the async form takes the sync path on a cluster.

use super::Inner;
use super::recovery::{self, Found};
use super::ticket::{Release, Ticket};
use crate::transport::Member;
use crate::transport::aio::AsyncOp;
use redis::RedisError;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::sync::oneshot;
use tripword::transition::Event;
use tripword::{Outcome, Rejected};

/// The future of an admission that needs Redis.
pub type Acquiring = Pin<Box<dyn Future<Output = Result<Ticket, Rejected>> + Send>>;
/// The future of a release that needs Redis.
pub type Releasing = Pin<Box<dyn Future<Output = tripword::Release> + Send>>;

/// `Inner::remote` for the async form, on the hub's
/// multiplexed connection; always a call's.
async fn remote<T>(
    inner: &Inner,
    body: impl AsyncFnOnce(&mut AsyncOp<'_>) -> Result<T, RedisError>,
) -> Result<T, RedisError> {
    let (out, trips, stored) = inner
        .hub
        .remote_async(&inner.key, &inner.channel, inner.missing_word(), body)
        .await;
    if let Some(word) = stored {
        inner.stored(word);
    }
    inner.count_call(trips);
    out
}

/// `Inner::acquire_remote` awaited.
pub(crate) async fn acquire_remote(inner: &Inner, base: u64) -> Result<Ticket, Rejected> {
    let done = remote(inner, async |op| {
        let (seen, at) = op.fetch().await?;
        if recovery::stage(&inner.config, seen, at).is_some() {
            // The ramp in a stage: the instance's share, nothing written.
            return Ok(Found::Ramp(seen, at));
        }
        let applied = op
            .apply(&inner.config, seen, Some(at), Event::Admit, |swap| {
                inner.report(swap);
            })
            .await?;
        Ok(Found::Applied(applied, op.latest.map_or(at, |(t, _)| t)))
    })
    .await;
    match done {
        Ok(found) => inner.found(base, found),
        Err(_) => {
            inner.detach();
            inner.acquire_local()
        }
    }
}

/// `Inner::release_remote` awaited.
pub(crate) async fn release_remote(
    inner: &Inner,
    word: u64,
    counter: u32,
    outcome: Outcome,
) -> Release {
    let event = Event::Release { counter, outcome };
    let base = inner.mirror_base();
    let done = remote(inner, async |op| {
        op.apply(&inner.config, word, None, event, |swap| {
            inner.report(swap);
        })
        .await
    })
    .await;
    match done {
        Ok(applied) => inner.recorded(base, &applied),
        Err(_) => {
            inner.detach();
            inner.unreported(outcome)
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
        let answer = acquire_remote(&task, base).await;
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
            runtime
                .spawn(async move { release_remote(&task, word, counter, Outcome::Ignored).await });
        }
        Err(_) => {
            inner.release(ticket, Outcome::Ignored);
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
        let release = release_remote(&task, word, counter, outcome).await;
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
