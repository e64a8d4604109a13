//! How calls through a breaker count, and what a rejected call returns:
//! the classifier, the slow-call threshold, what a cancelled future
//! records, and the fallback.
//!
//! A [`CallPolicy`] is built once, kept next to its breaker, and passed with
//! each call ([`BreakerExt::call_with`](crate::BreakerExt::call_with),
//! [`call_async_with`](crate::BreakerExt::call_async_with)) or given to a
//! `tower` layer. The default policy is what
//! [`call`](crate::BreakerExt::call) and
//! [`call_async`](crate::BreakerExt::call_async) use: `Ok` a success, `Err`
//! a failure, no timing, a cancelled future [`Ignored`](Outcome::Ignored),
//! no fallback (a rejected call's error is
//! [`CallError::Open`](crate::CallError::Open)).
//! In a struct field, name a policy with a function-pointer classifier
//! as [`FnPolicy`], one with a capturing closure as [`DynPolicy`].
//!
//! ```
//! use std::time::Duration;
//! use tripword::{Outcome, Status};
//! use tripword_std::clock::ManualTime;
//! use tripword_std::{BreakerExt, CallPolicy, Settings};
//!
//! let clock = ManualTime::new();
//! let b: tripword::Breaker<&ManualTime> = Settings::new().failure_threshold(1).build_on(&clock, ())?;
//! let policy = CallPolicy::new()
//!     .classify(|r: &Result<u16, ()>| match r {
//!         Ok(code) if *code >= 500 => Outcome::Failure,
//!         Ok(code) if *code >= 400 => Outcome::Ignored,
//!         Ok(_) => Outcome::Success,
//!         Err(()) => Outcome::Failure,
//!     })
//!     .slow_after(Duration::from_millis(250));
//!
//! assert_eq!(b.call_with(&policy, || Ok(404)), Ok(404)); // ignored
//! // A 200 that took 300 ms (on the breaker's clock) is a failure.
//! let slow = b.call_with(&policy, || {
//!     clock.advance(Duration::from_millis(300));
//!     Ok(200)
//! });
//! assert_eq!(slow, Ok(200)); // the caller still gets the answer
//! assert_eq!(b.status(), Status::Open);
//! # Ok::<(), tripword_std::SettingsError>(())
//! ```

use core::convert::Infallible;
use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};
use std::sync::Arc;
use std::time::Duration;

use tripword::Outcome;

use crate::call::error::CallError;
use crate::call::rejection::Rejection;
use crate::classify::{Classify, DynClassifier, IntoVerdict, OkOrFailure, TickVerdict};
use crate::clock::{RealClock, elapsed_forward, span_to_ticks};

/// How calls through a breaker count, and what a rejected call returns: a
/// classifier `K` (see [`classify`](crate::classify)), a slow-call
/// threshold `S` ([`Untimed`], [`SlowAfter`] or [`SlowAfterTicks`]), the
/// outcome a future dropped before it completes records, and a fallback `G`
/// ([`NoFallback`], or a [`Fallback`] set by
/// [`fallback`](Self::fallback)). See the [module](self) docs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CallPolicy<K = OkOrFailure, S = Untimed, G = NoFallback> {
    classify: K,
    slow: S,
    on_cancel: Outcome,
    or_else: G,
}

impl Default for CallPolicy {
    /// Same as [`CallPolicy::new`].
    fn default() -> Self {
        Self::new()
    }
}

impl CallPolicy {
    /// `Ok` a success, `Err` a failure ([`OkOrFailure`]), calls not timed
    /// (no clock read), a cancelled future [`Ignored`](Outcome::Ignored), no
    /// fallback.
    ///
    /// ```
    /// use tripword::Outcome;
    /// use tripword_std::CallPolicy;
    /// assert_eq!(CallPolicy::new().cancel_outcome(), Outcome::Ignored);
    /// ```
    pub const fn new() -> Self {
        CallPolicy {
            classify: OkOrFailure,
            slow: Untimed,
            on_cancel: Outcome::Ignored,
            or_else: NoFallback,
        }
    }
}

impl<K, S, G> CallPolicy<K, S, G> {
    /// Classifies results with `classify` (a closure
    /// `Fn(&Result<T, E>) -> Outcome` or `-> Verdict`, or any
    /// [`Classify`]). A panic in the classifier is a failure, and the
    /// panic goes on. A closure's type has no name: to keep the policy in a
    /// struct field, use [`classify_fn`](Self::classify_fn) ([`FnPolicy`])
    /// or [`classify_dyn`](Self::classify_dyn) ([`DynPolicy`]).
    pub fn classify<K2>(self, classify: K2) -> CallPolicy<K2, S, G> {
        CallPolicy {
            classify,
            slow: self.slow,
            on_cancel: self.on_cancel,
            or_else: self.or_else,
        }
    }

    /// Classifies results with a function pointer: a `fn` item or a
    /// closure that captures nothing, coerced here, so that the policy's
    /// type can be named ([`FnPolicy`]) in a struct field or a `static`,
    /// which a closure's type cannot.
    ///
    /// ```
    /// use tripword_std::policy::FnPolicy;
    /// use tripword_std::{BreakerExt, CallPolicy, Outcome, Settings, StdBreaker, Status};
    ///
    /// fn by_status(r: &Result<u16, std::io::Error>) -> Outcome {
    ///     match r {
    ///         Ok(500..) | Err(_) => Outcome::Failure,
    ///         Ok(400..) => Outcome::Ignored,
    ///         Ok(_) => Outcome::Success,
    ///     }
    /// }
    ///
    /// struct Client {
    ///     breaker: StdBreaker,
    ///     policy: FnPolicy<u16, std::io::Error>,
    /// }
    ///
    /// let client = Client {
    ///     breaker: Settings::new().failure_threshold(1).build()?,
    ///     policy: CallPolicy::new().classify_fn(by_status),
    /// };
    /// let _ = client.breaker.call_with(&client.policy, || Ok(404));
    /// assert_eq!(client.breaker.status(), Status::Closed); // ignored
    /// let _ = client.breaker.call_with(&client.policy, || Ok(503));
    /// assert_eq!(client.breaker.status(), Status::Open);
    /// # Ok::<(), tripword_std::SettingsError>(())
    /// ```
    pub fn classify_fn<T, E, V>(self, classify: fn(&Result<T, E>) -> V) -> FnPolicy<T, E, V, S, G> {
        self.classify(classify)
    }

    /// Classifies results with any closure, captures included, kept behind
    /// an [`Arc`] ([`DynClassifier`]), so that the policy's type can be
    /// named ([`DynPolicy`]) in a struct field. Each classification is a
    /// call through a pointer; cloning the policy (a `tower` layer does, per
    /// request) clones the `Arc`.
    ///
    /// ```
    /// use tripword_std::policy::DynPolicy;
    /// use tripword_std::{BreakerExt, CallPolicy, Outcome, Settings, StdBreaker, Status};
    ///
    /// struct Client {
    ///     breaker: StdBreaker,
    ///     policy: DynPolicy<u16, ()>,
    /// }
    ///
    /// let ignored = vec![404, 409]; // read from a config file, say
    /// let client = Client {
    ///     breaker: Settings::new().failure_threshold(1).build()?,
    ///     policy: CallPolicy::new().classify_dyn(move |r: &Result<u16, ()>| match r {
    ///         Ok(code) if ignored.contains(code) => Outcome::Ignored,
    ///         Ok(code) if *code >= 400 => Outcome::Failure,
    ///         Ok(_) => Outcome::Success,
    ///         Err(()) => Outcome::Failure,
    ///     }),
    /// };
    /// let _ = client.breaker.call_with(&client.policy, || Ok(409));
    /// assert_eq!(client.breaker.status(), Status::Closed);
    /// # Ok::<(), tripword_std::SettingsError>(())
    /// ```
    pub fn classify_dyn<T, E, V>(
        self,
        classify: impl Fn(&Result<T, E>) -> V + Send + Sync + 'static,
    ) -> CallPolicy<DynClassifier<T, E, V>, S, G> {
        self.classify(DynClassifier::new(classify))
    }

    /// A success that took longer than `threshold`, measured on the
    /// breaker's clock from admission to completion, counts as a failure
    /// (the caller still gets the result). The clock is read twice per call;
    /// the breaker's clock must be a [`RealClock`]. The threshold is
    /// `threshold` rounded up to whole ticks, and a call is slow when more
    /// ticks than that passed.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tripword_std::CallPolicy;
    /// let p = CallPolicy::new().slow_after(Duration::from_secs(2));
    /// assert_eq!(p.slow_threshold().0, Duration::from_secs(2));
    /// ```
    pub fn slow_after(self, threshold: Duration) -> CallPolicy<K, SlowAfter, G> {
        CallPolicy {
            classify: self.classify,
            slow: SlowAfter(threshold),
            on_cancel: self.on_cancel,
            or_else: self.or_else,
        }
    }

    /// [`slow_after`](Self::slow_after) in the clock's ticks, for a clock
    /// with no stated tick length (a
    /// [`ManualClock`](tripword::clock::ManualClock)).
    pub fn slow_after_ticks(self, ticks: u64) -> CallPolicy<K, SlowAfterTicks, G> {
        CallPolicy {
            classify: self.classify,
            slow: SlowAfterTicks(ticks),
            on_cancel: self.on_cancel,
            or_else: self.or_else,
        }
    }

    /// What a future dropped before it completes (a cancelled request, an
    /// aborted task, a `select!` that took the other branch) records:
    /// [`Ignored`](Outcome::Ignored) by default, because a caller that went
    /// away is no evidence that the dependency is down. A future dropped
    /// while its thread panics records a failure whatever this says.
    ///
    /// ```
    /// use tripword::Outcome;
    /// use tripword_std::CallPolicy;
    /// let p = CallPolicy::new().on_cancel(Outcome::Failure);
    /// assert_eq!(p.cancel_outcome(), Outcome::Failure);
    /// ```
    pub const fn on_cancel(mut self, outcome: Outcome) -> Self {
        self.on_cancel = outcome;
        self
    }

    /// What a call the breaker did not admit returns: the value `fallback`
    /// makes from the [`Rejection`] (its cause and wait) instead of
    /// [`CallError::Open`]. The call's result is then `Result<T, E>`, the
    /// fallback's value or the call's own, where it was
    /// `Result<T, CallError<E>>`.
    ///
    /// A fallback answers in the form of its call: for a closure
    /// ([`call_with`](crate::BreakerExt::call_with)) it returns the
    /// `Result<T, E>` (`|rejection| Ok(cached)`), for a future
    /// ([`call_async_with`](crate::BreakerExt::call_async_with)) it makes a
    /// future of one (`|rejection| async move { .. }`), awaited in the
    /// call's place. It runs only for a rejected call, is not counted by the
    /// breaker (the call was not made), and, as a policy serves many calls,
    /// is an `Fn`.
    ///
    /// ```
    /// use tripword::{Breaker, Config};
    /// use tripword::clock::ManualClock;
    /// use tripword_std::{BreakerExt, CallPolicy};
    ///
    /// let clock = ManualClock::new(0);
    /// let b = Breaker::new(Config::new().failure_threshold(1).open_for(100), &clock);
    /// let cached = CallPolicy::new().fallback(|open| {
    ///     assert_eq!(open.retry_after_ticks(), Some(100));
    ///     Ok("cached")
    /// });
    /// let fetch = || Err::<&str, _>("down");
    /// assert_eq!(b.call_with(&cached, fetch), Err("down")); // admitted: trips
    /// assert_eq!(b.call_with(&cached, fetch), Ok("cached")); // rejected
    /// ```
    ///
    /// A fallback of the other form does not compile, and the error points
    /// at its closure:
    ///
    /// ```compile_fail,E0271
    /// # use tripword::{Breaker, Config};
    /// # use tripword::clock::ManualClock;
    /// # use tripword_std::{BreakerExt, CallPolicy};
    /// # let clock = ManualClock::new(0);
    /// # let b = Breaker::new(Config::new(), &clock);
    /// let cached = CallPolicy::new().fallback(|_| async { Ok::<u32, ()>(1) });
    /// // error[E0271]: expected `{closure}` to return `Result<_, _>`, but it returns `{async block}`
    /// let _ = b.call_with(&cached, || Ok::<u32, ()>(2));
    /// ```
    pub fn fallback<Fb, R>(self, fallback: Fb) -> CallPolicy<K, S, Fallback<Fb>>
    where
        Fb: Fn(Rejection) -> R,
    {
        CallPolicy {
            classify: self.classify,
            slow: self.slow,
            on_cancel: self.on_cancel,
            or_else: Fallback(fallback),
        }
    }

    /// The classifier.
    pub const fn classifier(&self) -> &K {
        &self.classify
    }

    /// The slow-call threshold.
    pub const fn slow_threshold(&self) -> &S {
        &self.slow
    }

    /// What a cancelled future records.
    pub const fn cancel_outcome(&self) -> Outcome {
        self.on_cancel
    }

    /// The fallback: [`NoFallback`], or the [`Fallback`] that
    /// [`fallback`](Self::fallback) set.
    pub const fn or_else(&self) -> &G {
        &self.or_else
    }

    /// How `result` counts: the classifier's verdict, made a failure if it
    /// is a success and `elapsed` (ticks since admission, read only when
    /// there is a threshold; a clock that stepped back reads 0, see
    /// [`elapsed_forward`]) is past the threshold.
    #[inline]
    pub(crate) fn judge<T, E, C>(&self, result: &Result<T, E>, elapsed: Option<u64>) -> TickVerdict
    where
        K: Classify<T, E>,
        K::Verdict: IntoVerdict<C>,
        S: Timing<C>,
    {
        let verdict = self.classify.classify(result).into_ticks();
        match (verdict, elapsed, self.slow.threshold()) {
            (TickVerdict::Success, Some(elapsed), Some(threshold))
                if elapsed_forward(elapsed) > threshold =>
            {
                TickVerdict::Failure
            }
            _ => verdict,
        }
    }
}

/// A [`CallPolicy`] whose classifier is a function pointer
/// ([`classify_fn`](CallPolicy::classify_fn)): a type to name in a struct
/// field. `T` and `E` are the call's `Ok` and `Err` types, `V` what the
/// classifier returns (an [`Outcome`], a
/// [`Verdict`](crate::classify::Verdict) or a [`TickVerdict`]), `S` the
/// slow-call threshold ([`SlowAfter`] after
/// [`slow_after`](CallPolicy::slow_after)), `G` the fallback.
pub type FnPolicy<T, E, V = Outcome, S = Untimed, G = NoFallback> =
    CallPolicy<fn(&Result<T, E>) -> V, S, G>;

/// A [`CallPolicy`] whose classifier is any closure behind an [`Arc`]
/// ([`classify_dyn`](CallPolicy::classify_dyn)): a type to name in a
/// struct field, as [`FnPolicy`] but for closures that capture.
pub type DynPolicy<T, E, V = Outcome, S = Untimed, G = NoFallback> =
    CallPolicy<DynClassifier<T, E, V>, S, G>;

/// No slow-call threshold: calls are not timed, and the clock is not read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Untimed;

/// A slow-call threshold in real time (see [`CallPolicy::slow_after`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SlowAfter(pub Duration);

/// A slow-call threshold in ticks (see [`CallPolicy::slow_after_ticks`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SlowAfterTicks(pub u64);

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::Untimed {}
    impl Sealed for super::SlowAfter {}
    impl Sealed for super::SlowAfterTicks {}
    impl Sealed for super::NoFallback {}
    impl<Fb> Sealed for super::Fallback<Fb> {}
    impl<K, S, G> Sealed for super::CallPolicy<K, S, G> {}
    impl<K, S, G> Sealed for &super::CallPolicy<K, S, G> {}
    impl<K, S, G> Sealed for std::sync::Arc<super::CallPolicy<K, S, G>> {}
}

/// A slow-call threshold for a breaker on clock `C`: [`Untimed`] and
/// [`SlowAfterTicks`] on any clock, [`SlowAfter`] on a [`RealClock`].
/// Sealed.
#[diagnostic::on_unimplemented(
    message = "`{Self}` needs a breaker on a `RealClock`, and `{C}` is not one",
    note = "use `slow_after_ticks` on a clock with no stated tick length, or a `RealClock` such as `tripword_std::clock::ManualTime`"
)]
pub trait Timing<C>: sealed::Sealed {
    /// The threshold in `C`'s ticks; `None` when calls are not timed.
    fn threshold(&self) -> Option<u64>;
}

impl<C> Timing<C> for Untimed {
    #[inline(always)]
    fn threshold(&self) -> Option<u64> {
        None
    }
}

impl<C> Timing<C> for SlowAfterTicks {
    #[inline(always)]
    fn threshold(&self) -> Option<u64> {
        Some(self.0)
    }
}

impl<C: RealClock> Timing<C> for SlowAfter {
    #[inline]
    fn threshold(&self) -> Option<u64> {
        Some(span_to_ticks(self.0, C::TICK))
    }
}

/// A [`CallPolicy`] by value, by reference or in an [`Arc`]: what the
/// `*_with` call forms take and a call future holds. Sealed.
pub trait AsPolicy: sealed::Sealed {
    /// The classifier type.
    type Classify;
    /// The slow-call threshold type.
    type Timing;
    /// The fallback type ([`NoFallback`] or a [`Fallback`]).
    type Fallback;
    /// The policy.
    fn policy(&self) -> &CallPolicy<Self::Classify, Self::Timing, Self::Fallback>;
}

impl<K, S, G> AsPolicy for CallPolicy<K, S, G> {
    type Classify = K;
    type Timing = S;
    type Fallback = G;
    #[inline(always)]
    fn policy(&self) -> &CallPolicy<K, S, G> {
        self
    }
}

impl<K, S, G> AsPolicy for &CallPolicy<K, S, G> {
    type Classify = K;
    type Timing = S;
    type Fallback = G;
    #[inline(always)]
    fn policy(&self) -> &CallPolicy<K, S, G> {
        self
    }
}

impl<K, S, G> AsPolicy for Arc<CallPolicy<K, S, G>> {
    type Classify = K;
    type Timing = S;
    type Fallback = G;
    #[inline(always)]
    fn policy(&self) -> &CallPolicy<K, S, G> {
        self
    }
}

/// No fallback, the default: a call the breaker did not admit returns
/// [`CallError::Open`], and the call's result is `Result<T, CallError<E>>`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct NoFallback;

/// A fallback (see [`CallPolicy::fallback`]): `Fb` makes what a call the
/// breaker did not admit returns from its [`Rejection`], and the call's
/// result is `Result<T, E>`.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Fallback<Fb>(Fb);

impl<Fb> fmt::Debug for Fallback<Fb> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Fallback(..)")
    }
}

/// What a policy does with a call its breaker did not admit:
/// [`NoFallback`] or [`Fallback`]. Sealed. [`OrElseCall`] and
/// [`OrElseFuture`] say how, for a closure and for a future.
pub trait OrElse: sealed::Sealed {
    /// What the fallback makes of a rejection: for a closure's call the
    /// value, for a future's the future a call future awaits in its place;
    /// [`Infallible`] without a fallback.
    type Made;
}

impl OrElse for NoFallback {
    type Made = Infallible;
}

impl<Fb, R> OrElse for Fallback<Fb>
where
    Fb: Fn(Rejection) -> R,
{
    type Made = R;
}

/// How a closure's call through a breaker ends, by the policy's fallback
/// `Self`, for a closure returning `Result<T, E>`: what
/// [`call_with`](crate::BreakerExt::call_with) returns. Sealed.
#[diagnostic::on_unimplemented(
    message = "the policy's fallback `{Self}` does not answer a closure's call returning `Result<{T}, {E}>`",
    note = "for a closure's call the fallback returns the call's `Result<T, E>` (`|rejection| Ok(cached)`); a fallback that makes a future serves `call_async_with`"
)]
pub trait OrElseCall<T, E>: OrElse {
    /// The call's result: `Result<T, CallError<E>>` without a fallback,
    /// `Result<T, E>` with one.
    type Output;
    /// The result of a call that was admitted and returned `result`.
    fn admitted(result: Result<T, E>) -> Self::Output;
    /// The result of a call that was not admitted.
    fn rejected(&self, rejection: Rejection) -> Self::Output;
}

impl<T, E> OrElseCall<T, E> for NoFallback {
    type Output = Result<T, CallError<E>>;
    #[inline(always)]
    fn admitted(result: Result<T, E>) -> Self::Output {
        result.map_err(CallError::Inner)
    }
    #[inline(always)]
    fn rejected(&self, rejection: Rejection) -> Self::Output {
        Err(CallError::Open(rejection))
    }
}

impl<T, E, Fb> OrElseCall<T, E> for Fallback<Fb>
where
    Fb: Fn(Rejection) -> Result<T, E>,
{
    type Output = Result<T, E>;
    #[inline(always)]
    fn admitted(result: Result<T, E>) -> Self::Output {
        result
    }
    #[inline]
    fn rejected(&self, rejection: Rejection) -> Self::Output {
        (self.0)(rejection)
    }
}

/// How a future's call through a breaker ends, by the policy's fallback
/// `Self`, for a future of `Result<T, E>`: what a
/// [`CallAsync`](crate::future::CallAsync) resolves to. Sealed.
#[diagnostic::on_unimplemented(
    message = "the policy's fallback `{Self}` does not answer a future's call of `Result<{T}, {E}>`",
    note = "for a future's call the fallback makes a future of the call's `Result<T, E>` (`|rejection| async move {{ Ok(cached) }}`); a fallback that returns the `Result` serves `call_with`"
)]
pub trait OrElseFuture<T, E>: OrElse {
    /// The call's output: `Result<T, CallError<E>>` without a fallback,
    /// `Result<T, E>` with one.
    type Output;
    /// The output of a call that was admitted and whose future gave
    /// `result`.
    fn admitted(result: Result<T, E>) -> Self::Output;
    /// A call that was not admitted: its output now, or the future the
    /// fallback makes, to await in its place.
    fn rejected(&self, rejection: Rejection) -> Result<Self::Output, Self::Made>;
    /// Polls the future the fallback made.
    fn poll_made(made: Pin<&mut Self::Made>, cx: &mut Context<'_>) -> Poll<Self::Output>;
}

impl<T, E> OrElseFuture<T, E> for NoFallback {
    type Output = Result<T, CallError<E>>;
    #[inline(always)]
    fn admitted(result: Result<T, E>) -> Self::Output {
        result.map_err(CallError::Inner)
    }
    #[inline(always)]
    fn rejected(&self, rejection: Rejection) -> Result<Self::Output, Infallible> {
        Ok(Err(CallError::Open(rejection)))
    }
    #[inline(always)]
    fn poll_made(made: Pin<&mut Infallible>, _: &mut Context<'_>) -> Poll<Self::Output> {
        match *made {}
    }
}

impl<T, E, Fb, G> OrElseFuture<T, E> for Fallback<Fb>
where
    Fb: Fn(Rejection) -> G,
    G: Future<Output = Result<T, E>>,
{
    type Output = Result<T, E>;
    #[inline(always)]
    fn admitted(result: Result<T, E>) -> Self::Output {
        result
    }
    #[inline]
    fn rejected(&self, rejection: Rejection) -> Result<Self::Output, G> {
        Err((self.0)(rejection))
    }
    #[inline]
    fn poll_made(made: Pin<&mut G>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        made.poll(cx)
    }
}

/// The [`CallPolicy`] setters of the tower layers, written once here:
/// each gives the layer back with its policy changed by the
/// [`CallPolicy`] method of the same name. `policy_setters!(Layer<P..>,
/// [fields..])`: the layer's type parameters before `K, S`, and its fields
/// other than `policy`.
#[cfg(feature = "tower")]
macro_rules! policy_setters {
    ($Layer:ident < $($p:ident),* >, [$($field:ident),*]) => {
        impl<$($p,)* K, S> $Layer<$($p,)* K, S> {
            /// Classifies results with `classify` ([`CallPolicy::classify`]):
            /// a closure over `&Result<Response, Error>` returning an
            /// [`Outcome`](tripword::Outcome) or a
            /// [`Verdict`](crate::classify::Verdict), or any
            /// [`Classify`](crate::classify::Classify) (for HTTP status
            /// codes, `StatusClassifier`, feature `http`). Cloned for every
            /// call: keep it cheap to clone.
            pub fn classify<K2>(self, classify: K2) -> $Layer<$($p,)* K2, S> {
                self.map_policy(|p| p.classify(classify))
            }

            /// A success slower than `threshold` counts as a failure
            /// ([`CallPolicy::slow_after`]).
            pub fn slow_after(
                self,
                threshold: std::time::Duration,
            ) -> $Layer<$($p,)* K, $crate::policy::SlowAfter> {
                self.map_policy(|p| p.slow_after(threshold))
            }

            /// [`slow_after`](Self::slow_after) in the clock's ticks
            /// ([`CallPolicy::slow_after_ticks`]).
            pub fn slow_after_ticks(
                self,
                ticks: u64,
            ) -> $Layer<$($p,)* K, $crate::policy::SlowAfterTicks> {
                self.map_policy(|p| p.slow_after_ticks(ticks))
            }

            /// What a response future dropped before it completes records
            /// ([`CallPolicy::on_cancel`]).
            pub fn on_cancel(self, outcome: tripword::Outcome) -> Self {
                self.map_policy(|p| p.on_cancel(outcome))
            }

            /// Replaces the whole [`CallPolicy`] (one built once and shared
            /// with the service's own `call_with`, say).
            pub fn policy<K2, S2>(self, policy: CallPolicy<K2, S2>) -> $Layer<$($p,)* K2, S2> {
                self.map_policy(|_| policy)
            }

            /// The layer's [`CallPolicy`].
            pub fn call_policy(&self) -> &CallPolicy<K, S> {
                &self.policy
            }

            #[inline]
            fn map_policy<K2, S2>(
                self,
                f: impl FnOnce(CallPolicy<K, S>) -> CallPolicy<K2, S2>,
            ) -> $Layer<$($p,)* K2, S2> {
                $Layer {
                    $($field: self.$field,)*
                    policy: f(self.policy),
                }
            }
        }
    };
}
#[cfg(feature = "tower")]
pub(crate) use policy_setters;
