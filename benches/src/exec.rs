//! Driving a future from plain code without a runtime scheduling every
//! call.
//!
//! Used for `tower-resilience-circuitbreaker` (a tower `Service`, whose calls
//! are futures) on plain threads and in criterion: [`block_on`] polls the
//! future once, on the current thread, with a thread-parking waker. The
//! futures it is given complete on that first poll when the inner service is
//! ready and the breaker's state lock is free, so the measured cost is the
//! breaker's own (its boxed future, its async mutex, its clock reads) plus a
//! runtime-context enter. Only a future that is still pending (its lock is
//! contended: it waits for the holder, or arms a 1 ms tokio timer) is handed
//! to a current-thread tokio runtime, which drives the timer to completion.

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

/// A current-thread tokio runtime with a time driver: the fallback of
/// [`block_on`].
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("tokio runtime")
}

/// Runs `future` to completion on this thread: one poll inside `rt`'s
/// context; if that is not enough, `rt.block_on` finishes it.
///
/// ```
/// use tripword_benches::exec::{block_on, runtime};
/// let rt = runtime();
/// assert_eq!(block_on(&rt, async { 1 + 1 }), 2);
/// ```
pub fn block_on<F: Future>(rt: &tokio::runtime::Runtime, future: F) -> F::Output {
    let _context = rt.enter();
    let mut future = pin!(future);
    match poll_once(&mut future) {
        Some(out) => out,
        None => rt.block_on(future),
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
