//! Driving a future from plain code without a runtime scheduling every
//! call.
//!
//! Used for `tower-resilience-circuitbreaker` (a tower `Service`, whose calls
//! are futures) on plain threads and in criterion: [`block_on`] enters a
//! tokio runtime's context and polls the future once, on the current thread,
//! with a no-op waker. The futures it is given complete on that first poll
//! when the inner service is ready and the breaker's state lock is free, so
//! the measured cost is the breaker's own (its boxed future, its async
//! mutex, its clock reads) plus the context enter. Only a future that is
//! still pending (its lock is contended: it waits for the holder, or arms a
//! 1 ms tokio timer) is handed to that current-thread runtime, which drives
//! it to completion. The tower layer of `tripword-std` measured beside it is
//! driven the same way, so both pay the same harness. Where calls come in
//! batches (the sweep's threads, criterion's `iter_custom`) the context is
//! entered once per batch and each call is driven by [`finish`]: entering
//! costs tens of nanoseconds, more than a `tripword` call through a layer.
//!
//! [`now`] is for futures that must be ready on their first poll
//! (`call_async` on a ready future): one poll with a no-op waker and no
//! runtime, so what is measured is the future's own cost. [`poll_once`]
//! polls with a waker that unparks this thread.

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread::{self, Thread};

struct ThreadWaker(Thread);

impl Wake for ThreadWaker {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.0.unpark();
    }
}

thread_local! {
    static WAKER: Waker = Waker::from(Arc::new(ThreadWaker(thread::current())));
}

#[cfg(feature = "tokio")]
/// A current-thread tokio runtime with a time driver: the fallback of
/// [`block_on`].
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("tokio runtime")
}

#[cfg(feature = "tokio")]
/// Runs `future` to completion on this thread: one poll inside `rt`'s
/// context; if that is not enough, `rt.block_on` finishes it.
///
/// ```
/// use tripword_lab::exec::{block_on, runtime};
/// let rt = runtime();
/// assert_eq!(block_on(&rt, async { 1 + 1 }), 2);
/// ```
pub fn block_on<F: Future>(rt: &tokio::runtime::Runtime, future: F) -> F::Output {
    let _context = rt.enter();
    finish(rt, future)
}

#[cfg(feature = "tokio")]
/// [`block_on`] for a thread that is already in `rt`'s context (it holds
/// `rt.enter()` around a batch of calls): entering a tokio context clones
/// the runtime's handle and costs tens of nanoseconds, more than a
/// `tripword` call through a tower layer.
///
/// ```
/// use tripword_lab::exec::{finish, runtime};
/// let rt = runtime();
/// let _context = rt.enter();
/// assert_eq!(finish(&rt, async { 1 + 1 }), 2);
/// ```
pub fn finish<F: Future>(rt: &tokio::runtime::Runtime, future: F) -> F::Output {
    let mut future = pin!(future);
    // The first poll gets a no-op waker (the thread-local one costs about
    // 40 instructions a call to reach); a future still pending is polled
    // again at once by `rt.block_on`, with the runtime's waker, which it
    // registers in place of the first (tokio's locks and timers do).
    match future
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
    {
        Poll::Ready(out) => out,
        Poll::Pending => finish_pending(rt, future),
    }
}

/// The rare end of [`finish`], out of line so that the common one stays
/// small: `rt` drives the pinned future to completion.
#[cfg(feature = "tokio")]
#[cold]
#[inline(never)]
fn finish_pending<F: Future>(
    rt: &tokio::runtime::Runtime,
    future: std::pin::Pin<&mut F>,
) -> F::Output {
    rt.block_on(future)
}

/// Polls `future` once with a no-op waker and returns its output.
///
/// # Panics
///
/// If `future` is pending after that poll: use it only for futures that are
/// ready at once.
///
/// ```
/// use tripword_lab::exec::now;
/// assert_eq!(now(std::future::ready(7)), 7);
/// ```
#[inline]
pub fn now<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    match future
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
    {
        Poll::Ready(out) => out,
        Poll::Pending => panic!("`exec::now` needs a future that is ready on its first poll"),
    }
}

/// Polls `future` once with this thread's waker: `Some(output)` if it
/// completed, `None` if it is pending (and still owned by the caller).
pub fn poll_once<F: Future + Unpin>(future: &mut F) -> Option<F::Output> {
    WAKER.with(|waker| {
        let mut cx = Context::from_waker(waker);
        match std::pin::Pin::new(future).poll(&mut cx) {
            Poll::Ready(out) => Some(out),
            Poll::Pending => None,
        }
    })
}
