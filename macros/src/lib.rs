//! The procedural macros of `tripword-std`: [`breakers!`] declares named
//! circuit breakers in `static`s, their settings checked at compile time,
//! and [`#[breaker]`](macro@breaker) runs a function's body through one.
//!
//! Use them through `tripword-std`'s `macros` feature, as
//! `tripword_std::breakers!` and `#[tripword_std::breaker(..)]`: the code
//! they generate names `::tripword_std`, and this crate is not meant to be
//! a dependency of its own.
//!
//! ```
//! use tripword_std::{BreakerExt, breaker, breakers};
//! use tripword_std::prelude::Rejection;
//!
//! breakers! {
//!     /// The payment provider.
//!     pub PAYMENTS: failure_threshold = 5, open_for = 30s, probe_timeout = 10s;
//! }
//!
//! #[derive(Debug, PartialEq)]
//! enum PayError { Declined, Unavailable(Rejection) }
//! impl From<Rejection> for PayError {
//!     fn from(rejected: Rejection) -> Self { PayError::Unavailable(rejected) }
//! }
//!
//! #[breaker(PAYMENTS)]
//! fn charge(cents: u64) -> Result<u64, PayError> {
//!     if cents > 0 { Ok(cents) } else { Err(PayError::Declined) }
//! }
//!
//! assert_eq!(charge(250), Ok(250));
//! assert_eq!(PAYMENTS.name(), "payments");
//! ```

#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod attribute;
mod declare;
mod duration;

use proc_macro::TokenStream;

/// Declares named circuit breakers, each a `static`
/// `tripword_std::NamedBreaker` whose config is checked at compile time.
///
/// ```text
/// breakers! {
///     /// docs, attributes
///     VIS NAME: key = value, key = value, ...;
///     VIS NAME;                       // every setting at its default
/// }
/// ```
///
/// | key | value | default |
/// |---|---|---|
/// | `failure_threshold` | consecutive failures that trip (`u32`) | 5 |
/// | `open_for` | a duration: how long a trip keeps the breaker open | `1s` |
/// | `exponential_backoff` | a duration: the cap of the open time, doubled on each failed probe | none (fixed) |
/// | `probe_timeout` | a duration: a probe that has not reported by then is given up | `5s` |
/// | `horizon` | a duration (`Settings::horizon`) | the word's default |
/// | `abandon_as` | an `Outcome`: what a permit dropped without one records | `Outcome::Failure` |
/// | `probes` | probes admitted in half-open (`u8`; 1..=15 on `W64`, 1..=3 on `W32`) | 1 |
/// | `probes_to_close` | how many of them must succeed to close (`u8`, `1..=probes`) | all of them |
/// | `ramp` | `progressive(1s)`, `linear(10s, 4)`, `stages(500ms, [100, 1000, 5000])` (shares in basis points): `RampSettings`' constructors with a duration; or a `const` `RampSettings` | none |
/// | `name` | a string literal, as observers and `NamedBreaker::name` give it | the static's name in lower case |
/// | `clock` | a unit-struct `RealClock` (`MillisClock`, a test clock of your own) | `MonotonicClock` |
/// | `word` | the word width, `W64` or `W32` | `W64` |
/// | `observer` | a function from the name to an `Observer`: `TracingObserver::new`, `\|name\| (TracingObserver::new(name), MetricsObserver::new(name))` | none |
///
/// A duration is a number with a unit, `30s`, `250ms`, `1.5s` (units `ns`,
/// `us`, `ms`, `s`, `m` or `min`, `h`), or any `const` expression of type
/// `Duration`. The other values are expressions and paths resolved where
/// the macro is called.
///
/// Each setting is one of `tripword_std::Settings`' setters, and the
/// breaker is built by `NamedBreaker::new` in the `static`'s initializer:
/// a value out of range for the word is a **compile error** there, naming
/// the field, as `Breaker::new` in a `static` is.
///
/// With an `observer`, the static is a `NamedBreaker<LazyObserver, ..>`:
/// the observer is made from the breaker's name on its first event (the
/// project's observers are not `const`), then kept.
///
/// ```
/// use tripword_std::breakers;
/// use tripword_std::prelude::*;
/// use tripword::OnTransition;
///
/// breakers! {
///     /// The payment provider: a minute's rest after five failures in a row.
///     pub PAYMENTS: failure_threshold = 5, open_for = 1m, probe_timeout = 10s,
///         observer = |name| OnTransition(move |t| eprintln!("{name}: {t}"));
///     /// Search: quick to trip, quick to retry, backing off to 30 s.
///     pub(crate) SEARCH: failure_threshold = 2, open_for = 500ms,
///         exponential_backoff = 30s, name = "search-v2";
///     INVENTORY;
/// }
///
/// assert_eq!(PAYMENTS.name(), "payments");
/// assert_eq!(SEARCH.name(), "search-v2");
/// assert_eq!(INVENTORY.config().failure_threshold(), 5);
/// assert_eq!(PAYMENTS.config().open_for(), 60_000_001); // µs, at least a minute
/// assert_eq!(SEARCH.call(|| Ok::<_, ()>("results")), Ok("results"));
/// assert_eq!(PAYMENTS.status(), Status::Closed);
/// ```
///
/// Several probes in half-open and a ramp after them (`Settings::probes`,
/// `Settings::ramp`, `docs/services.md`, "Recovery options"):
///
/// ```
/// tripword_std::breakers! {
///     /// Five probes, four of which must pass; then 0.1 % to 50 % of
///     /// calls, two seconds a stage.
///     INVENTORY_API: open_for = 30s, probes = 5, probes_to_close = 4,
///         ramp = progressive(2s);
///     PRICES: probes = 3, ramp = stages(500ms, [1000, 5000]), word = tripword_std::W32,
///         clock = tripword_std::MillisClock;
/// }
/// assert_eq!(INVENTORY_API.config().probes(), 5);
/// assert_eq!(INVENTORY_API.config().ramp().stages_count(), 6);
/// assert_eq!(PRICES.config().ramp().step(), 501); // ms, at least 500
/// ```
///
/// Out of range, the declaration does not compile: the 64-bit word counts
/// at most 65 535 failures.
///
/// ```compile_fail,E0080
/// tripword_std::breakers! {
///     TOO_PATIENT: failure_threshold = 70_000;
/// }
/// ```
///
/// Nor do more probes than the word holds (15 on `W64`):
///
/// ```compile_fail,E0080
/// tripword_std::breakers! {
///     TOO_MANY: probes = 16;
/// }
/// ```
///
/// Nor does a backoff cap shorter than the open time:
///
/// ```compile_fail,E0080
/// tripword_std::breakers! {
///     BACKWARDS: open_for = 10s, exponential_backoff = 1s;
/// }
/// ```
///
/// A duration needs a unit, and an unknown key is named:
///
/// ```compile_fail
/// tripword_std::breakers! {
///     NO_UNIT: open_for = 30;
/// }
/// ```
///
/// ```compile_fail
/// tripword_std::breakers! {
///     TYPO: failure_treshold = 3;
/// }
/// ```
#[proc_macro]
pub fn breakers(input: TokenStream) -> TokenStream {
    declare::expand(input.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// Runs a function's body through a circuit breaker: `#[breaker(BREAKER)]`
/// on a `fn` or an `async fn` that returns `Result<T, E>`.
///
/// ```text
/// #[breaker(BREAKER)]
/// #[breaker(BREAKER, classify = CLASSIFIER)]
/// #[breaker(BREAKER, policy = POLICY)]
/// ```
///
/// `BREAKER` is an expression for any breaker (`tripword::kit::CircuitBreaker`),
/// borrowed for the call: a `static` from `breakers!`, `self.breaker`, a
/// registry's entry. The function keeps its signature; its body runs as
/// `BreakerExt::call_with` (a `fn`) or `call_async_with` (an `async fn`)
/// runs a closure or a future:
///
/// - the breaker is asked first; **rejected, the body does not run** and
///   the function returns `Err(E::from(rejected))`, so **`E` must implement
///   `From<tripword_std::Rejection>`** (`tripword_std::CallError<E>` does,
///   and so do `Box<dyn Error>` and `anyhow::Error`, as `Rejection` is an
///   `Error`; or give your error a variant for it). The rejection names
///   the breaker and its wait: `circuit 'payments' open: call not admitted
///   (retry after 30.0s)`;
/// - admitted, the body's result is returned as it is, and counted: `Ok` a
///   success, `Err` a failure, or as `classify` says (any classifier of
///   `tripword_std::classify`, named by a path or written as an
///   expression), or as `policy` says (an expression for a `CallPolicy`:
///   its classifier, slow-call threshold and cancel outcome);
/// - a panic in the body is a failure, and keeps unwinding;
/// - an `async fn`'s future dropped before it completes records the
///   policy's cancel outcome, `Ignored` by default.
///
/// In the body, `return` and `?` return from the guarded body, as they
/// would from the function. The breaker expression is evaluated before the
/// body runs; with `&mut self`, the body must not need `self` whole while
/// the breaker is a field of it (keep the breaker in a `static` or an
/// `Arc`).
///
/// ```
/// use tripword_std::{breaker, breakers};
/// use tripword_std::classify::by_error;
/// use tripword_std::prelude::{Outcome, Rejection, Status};
///
/// breakers! {
///     INVENTORY: failure_threshold = 1, open_for = 1h;
/// }
///
/// #[derive(Debug, PartialEq)]
/// enum Lookup { NotFound, Timeout, Unavailable(Rejection) }
/// impl From<Rejection> for Lookup {
///     fn from(rejected: Rejection) -> Self { Lookup::Unavailable(rejected) }
/// }
///
/// fn unhealthy(e: &Lookup) -> Outcome {
///     match e {
///         Lookup::NotFound => Outcome::Ignored, // the caller's mistake
///         _ => Outcome::Failure,
///     }
/// }
///
/// #[breaker(INVENTORY, classify = by_error(unhealthy))]
/// fn stock(sku: &str) -> Result<u32, Lookup> {
///     match sku {
///         "apple" => Ok(12),
///         "pear" => Err(Lookup::Timeout),
///         _ => Err(Lookup::NotFound),
///     }
/// }
///
/// assert_eq!(stock("kiwi"), Err(Lookup::NotFound));
/// assert_eq!(INVENTORY.status(), Status::Closed); // ignored
/// assert_eq!(stock("pear"), Err(Lookup::Timeout));
/// assert_eq!(INVENTORY.status(), Status::Open);
/// assert!(matches!(stock("apple"), Err(Lookup::Unavailable(_)))); // not run
/// ```
///
/// An `async fn`:
///
/// ```
/// use tripword_std::{breaker, breakers};
///
/// breakers! {
///     SEARCH: failure_threshold = 3, open_for = 30s;
/// }
///
/// #[breaker(SEARCH)]
/// async fn search(query: &str) -> Result<Vec<String>, Box<dyn std::error::Error>> {
///     let n: usize = query.parse()?; // `?` returns from the body, a failure
///     Ok(vec![query.to_string(); n])
/// }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// assert_eq!(search("2").await.unwrap(), ["2", "2"]);
/// assert!(search("two").await.is_err());
/// # });
/// ```
///
/// The error type must take a rejection:
///
/// ```compile_fail,E0277
/// use tripword_std::{breaker, breakers};
///
/// breakers! { B; }
///
/// #[breaker(B)]
/// fn read() -> Result<Vec<u8>, std::io::Error> { std::fs::read("/etc/hostname") }
/// ```
#[proc_macro_attribute]
pub fn breaker(args: TokenStream, item: TokenStream) -> TokenStream {
    let item: proc_macro2::TokenStream = item.into();
    match attribute::expand(args.into(), item.clone()) {
        Ok(tokens) => tokens.into(),
        // The function as written, with the error: no second error for a
        // function that would otherwise be missing.
        Err(e) => {
            let mut tokens = e.into_compile_error();
            tokens.extend(item);
            tokens.into()
        }
    }
}
