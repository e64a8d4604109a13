//! [`Deferral`]: how a response future of the tower layers holds a call it
//! makes later, boxed, so that its type names the inner future only.

use core::future::Future;
use core::pin::Pin;

use tower_service::Service;

/// A call the response future makes later, boxed (so that the response
/// future names only the inner service's future, `F`, never the service
/// or the request): it polls the inner service ready when that was not
/// done before `call`, then calls it; `Ok` with the inner future, or `Err`
/// with the output of the call (the readiness error) when the inner
/// service failed to become ready. What [`Deferral::Deferred`] is for the
/// two deferrals here.
type Boxed<F, O> = Pin<Box<dyn Future<Output = Result<F, O>> + Send>>;
/// [`Boxed`], not `Send`.
type LocalBoxed<F, O> = Pin<Box<dyn Future<Output = Result<F, O>>>>;

mod sealed {
    pub trait Sealed {}
}

/// How a response future holds a call it cannot make at once: a call
/// whose admission needs a round trip (a remote breaker), or one admitted
/// while the inner service was not polled ready (the breaker rejected at
/// `poll_ready` and admitted at `call`). The service and the request go
/// into a box that the response future polls; the box is made only on
/// those paths, never on a call admitted at once to a ready service.
///
/// [`SendDeferral`] (the default) makes a `Send` box, so the response
/// future is `Send` whenever the inner future is, whatever the request
/// type (a `&'static str` included); it needs the inner service and the
/// request to be `Send + 'static`. [`LocalDeferral`] makes a box that is
/// not `Send`, for a service that is not (one on a `LocalSet`): see
/// [`BreakerService::local`](crate::tower::BreakerService::local). Sealed.
pub trait Deferral: sealed::Sealed {
    /// The boxed call, for inner future `F`.
    type Deferred<F: Future>: Future<Output = Result<F, F::Output>>;
}

/// The [`Deferral`] of a service whose inner service and requests are
/// `Send + 'static`: the default.
#[derive(Clone, Copy, Debug)]
pub enum SendDeferral {}

/// The [`Deferral`] of a service whose inner service or requests are not
/// `Send` (but are `'static`).
#[derive(Clone, Copy, Debug)]
pub enum LocalDeferral {}

impl sealed::Sealed for SendDeferral {}
impl sealed::Sealed for LocalDeferral {}

impl Deferral for SendDeferral {
    type Deferred<F: Future> = Boxed<F, F::Output>;
}

impl Deferral for LocalDeferral {
    type Deferred<F: Future> = LocalBoxed<F, F::Output>;
}

/// A [`Deferral`] that can hold a request `Req` to service `Svc`: what the
/// tower services need of their deferral. Sealed.
#[diagnostic::on_unimplemented(
    message = "the tower layer's response future is `Send`: the inner service `{Svc}` and the request `{Req}` must be `Send + 'static`",
    note = "for a service that is not `Send`, call `.local()` on the layer's service"
)]
pub trait Defer<Svc: Service<Req>, Req>: Deferral {
    /// The call to `service` with `request`, polling `service` ready first
    /// unless `ready` (it was polled ready before `call`).
    #[doc(hidden)]
    fn defer(service: Svc, request: Req, ready: bool) -> Self::Deferred<Svc::Future>;
}

/// `service` polled ready unless `ready`, then called with `request`.
async fn ready_then_call<Svc: Service<Req>, Req>(
    mut service: Svc,
    request: Req,
    ready: bool,
) -> Result<Svc::Future, <Svc::Future as Future>::Output> {
    if !ready {
        core::future::poll_fn(|cx| service.poll_ready(cx))
            .await
            .map_err(Err)?;
    }
    Ok(service.call(request))
}

impl<Svc, Req> Defer<Svc, Req> for SendDeferral
where
    Svc: Service<Req> + Send + 'static,
    Req: Send + 'static,
{
    fn defer(
        service: Svc,
        request: Req,
        ready: bool,
    ) -> Boxed<Svc::Future, <Svc::Future as Future>::Output> {
        Box::pin(ready_then_call(service, request, ready))
    }
}

impl<Svc, Req> Defer<Svc, Req> for LocalDeferral
where
    Svc: Service<Req> + 'static,
    Req: 'static,
{
    fn defer(
        service: Svc,
        request: Req,
        ready: bool,
    ) -> LocalBoxed<Svc::Future, <Svc::Future as Future>::Output> {
        Box::pin(ready_then_call(service, request, ready))
    }
}
