//! [`KeyedResponseFuture`], the response future of a
//! [`RegistryService`](crate::tower::RegistryService): a
//! [`ResponseFuture`] whose rejection names the request's key.

use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll, ready};

use pin_project_lite::pin_project;
use tripword::kit::CircuitBreaker;

use crate::call::error::CallError;
use crate::tower::deferral::{Deferral, SendDeferral};
use crate::tower::future::ResponseFuture;

pin_project! {
    /// The response future of a [`RegistryService`](crate::tower::RegistryService): the
    /// [`ResponseFuture`] of the request's breaker (`H` is its handle, an
    /// `Arc` of the registry's entry), with the request's key `Q` for the
    /// error of a rejected call. As for [`ResponseFuture`], its type names
    /// the inner future `F`, not the inner service or the request.
    #[must_use = "futures do nothing unless polled; dropped, an admitted call records its cancel outcome"]
    pub struct KeyedResponseFuture<Q, H, F, K, S, D = SendDeferral>
    where
        H: CircuitBreaker,
        F: Future,
        D: Deferral,
    {
        #[pin]
        response: ResponseFuture<H, F, K, S, D>,
        key: Option<Q>,
    }
}

impl<Q, H, F, K, S, D, T, E> Future for KeyedResponseFuture<Q, H, F, K, S, D>
where
    H: CircuitBreaker,
    F: Future,
    D: Deferral,
    Q: fmt::Debug,
    ResponseFuture<H, F, K, S, D>: Future<Output = Result<T, CallError<E>>>,
{
    type Output = Result<T, CallError<E>>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        Poll::Ready(match ready!(this.response.poll(cx)) {
            Ok(value) => Ok(value),
            Err(CallError::Inner(e)) => Err(CallError::Inner(e)),
            Err(CallError::Open(rejected)) => Err(CallError::Open(
                rejected.for_key(this.key.as_ref().expect("a key until the future completes")),
            )),
        })
    }
}

impl<Q, H, F, K, S, D> fmt::Debug for KeyedResponseFuture<Q, H, F, K, S, D>
where
    Q: fmt::Debug,
    H: CircuitBreaker,
    F: Future,
    D: Deferral,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyedResponseFuture")
            .field("key", &self.key)
            .field("response", &self.response)
            .finish()
    }
}

impl<Q, H, F, K, S, D> KeyedResponseFuture<Q, H, F, K, S, D>
where
    H: CircuitBreaker,
    F: Future,
    D: Deferral,
{
    /// `response`, its rejection to name `key`.
    pub(super) fn new(response: ResponseFuture<H, F, K, S, D>, key: Q) -> Self {
        KeyedResponseFuture {
            response,
            key: Some(key),
        }
    }
}
