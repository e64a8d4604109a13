//! A breaker built outside the library crates, on the kit alone
//! (`docs/spec.md`, "Kit"), and run through everything `tripword-std` gives
//! `tripword`'s own breakers: `call`, `call_async`, the tower layer and a
//! registry.
//!
//! The breaker keeps its word behind an async lock, as a breaker whose word
//! lives in a store reached through an async API would. It writes no state
//! machine and no compare-and-swap loop of its own:
//! - the word's place is a cell: [`AsyncCell`] (async `load` and
//!   `compare_exchange`) and, for the sync path, [`Cell`];
//! - every event is applied by the core's one loop, driven by
//!   [`cell::update_async`] on the async path and [`cell::update`] on the
//!   sync path;
//! - [`CircuitBreaker`] says how to admit and release; its async path
//!   answers [`Reply::Ready`] when the lock is free at once and
//!   [`Reply::Wait`] with a future otherwise, so no executor thread waits.
//!
//! Run: `cargo run -p tripword-std --example custom_breaker --features tower,tokio`.
//! It checks what it prints and exits non-zero if a check fails.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::Mutex;
use tower::{Layer, Service, ServiceExt, service_fn};
use tripword::cell::{self, Applied, AsyncCell, CasError, Cell, Swap};
use tripword::kit::{CircuitBreaker, Reply, TickVerdict};
use tripword::transition::{self, Decision, Event, Verdict};
use tripword::{Cause, Clock, Config, Outcome, Rejected, Release, Status, ValidConfig, W64};
use tripword_std::classify::OkOrFailure;
use tripword_std::tower::{BreakerLayer, RegistryLayer};
use tripword_std::{BreakerExt, MonotonicClock, Registry};

/// The word behind an async lock.
struct LockedWord(Mutex<u64>);

impl AsyncCell<W64> for LockedWord {
    type Error = Infallible;

    async fn load(&self) -> Result<u64, Infallible> {
        Ok(*self.0.lock().await)
    }

    async fn compare_exchange(
        &self,
        current: u64,
        new: u64,
    ) -> Result<(), CasError<u64, Infallible>> {
        let mut word = self.0.lock().await;
        if *word != current {
            return Err(CasError::Changed(*word));
        }
        *word = new;
        Ok(())
    }
}

impl LockedWord {
    /// The lock, taken without awaiting: the sync path spins on `try_lock`
    /// (the lock is held only for a load or an exchange).
    fn lock_now(&self) -> tokio::sync::MutexGuard<'_, u64> {
        loop {
            if let Ok(word) = self.0.try_lock() {
                return word;
            }
            std::thread::yield_now();
        }
    }
}

impl Cell<W64> for LockedWord {
    type Error = Infallible;

    fn load(&self) -> Result<u64, Infallible> {
        Ok(*self.lock_now())
    }

    fn compare_exchange(&self, current: u64, new: u64) -> Result<(), CasError<u64, Infallible>> {
        let mut word = self.lock_now();
        if *word != current {
            return Err(CasError::Changed(*word));
        }
        *word = new;
        Ok(())
    }
}

/// What the breaker shares between its handles and its futures.
struct Shared {
    word: LockedWord,
    config: ValidConfig<W64>,
    clock: MonotonicClock,
    /// Transitions reported (each once, by the exchange that made it).
    transitions: AtomicU64,
}

impl Shared {
    fn report(&self, swap: Swap<W64>) {
        for t in swap.transitions() {
            self.transitions.fetch_add(1, Ordering::Relaxed);
            println!("  transition: {t}");
        }
    }

    /// One event through the sync driver.
    fn apply(&self, event: Event) -> Applied<W64> {
        let Ok(seen) = Cell::load(&self.word);
        let Ok(applied) = cell::update(
            &self.word,
            &self.config,
            seen,
            event,
            None,
            || self.clock.now(),
            |swap| self.report(swap),
        );
        applied
    }

    /// One event through the async driver: the same loop, awaited.
    async fn apply_async(&self, event: Event) -> Applied<W64> {
        let Ok(seen) = AsyncCell::load(&self.word).await;
        let Ok(applied) = cell::update_async(
            &self.word,
            &self.config,
            seen,
            event,
            None,
            || self.clock.now(),
            |swap| self.report(swap),
        )
        .await;
        applied
    }
}

/// The ticket: the state counter admitted under, as the core's own tickets.
#[derive(Debug)]
struct LockedTicket {
    counter: u32,
}

fn admission(applied: Applied<W64>) -> Result<LockedTicket, Rejected> {
    match applied.verdict() {
        Verdict::Admitted { counter, .. } => Ok(LockedTicket { counter }),
        Verdict::Rejected(why) => Err(why),
        other => unreachable!("an admission decides admitted or rejected, not {other:?}"),
    }
}

fn recorded(applied: Applied<W64>) -> Release {
    match applied.decision {
        Decision::Recorded => Release::Recorded,
        _ => Release::Stale,
    }
}

fn release_event(ticket: &LockedTicket, verdict: TickVerdict) -> Event {
    match verdict {
        TickVerdict::FailureFor(open_for) => Event::FailureFor {
            counter: ticket.counter,
            open_for,
        },
        other => Event::Release {
            counter: ticket.counter,
            outcome: other.outcome(),
        },
    }
}

/// The breaker: a cheap handle on the shared word.
#[derive(Clone)]
struct LockedBreaker(Arc<Shared>);

impl LockedBreaker {
    fn new(config: ValidConfig<W64>) -> Self {
        LockedBreaker(Arc::new(Shared {
            word: LockedWord(Mutex::new(0)), // the zero word is `Closed`
            config,
            clock: MonotonicClock,
            transitions: AtomicU64::new(0),
        }))
    }
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

impl CircuitBreaker for LockedBreaker {
    type Ticket = LockedTicket;
    type Clock = MonotonicClock;
    type Acquiring = BoxFuture<Result<LockedTicket, Rejected>>;
    type Releasing = BoxFuture<Release>;

    fn acquire(&self) -> Result<LockedTicket, Rejected> {
        admission(self.0.apply(Event::Admit))
    }

    fn release(&self, ticket: LockedTicket, outcome: Outcome) -> Release {
        self.release_verdict(ticket, TickVerdict::from(outcome))
    }

    fn release_failure_for(&self, ticket: LockedTicket, open_for: u64) -> Release {
        self.release_verdict(ticket, TickVerdict::FailureFor(open_for))
    }

    fn release_verdict(&self, ticket: LockedTicket, verdict: TickVerdict) -> Release {
        recorded(self.0.apply(release_event(&ticket, verdict)))
    }

    fn status(&self) -> Status {
        let Ok(word) = Cell::load(&self.0.word);
        transition::status_at(&self.0.config, word, || self.0.clock.now())
    }

    fn clock(&self) -> &MonotonicClock {
        &self.0.clock
    }

    fn abandon_outcome(&self) -> Outcome {
        self.0.config.abandon()
    }

    /// Ready when the lock is free now (the sync driver decides at once);
    /// otherwise a future that awaits the lock through the async driver.
    fn acquire_async(&self) -> Reply<Result<LockedTicket, Rejected>, Self::Acquiring> {
        if let Ok(word) = self.0.word.0.try_lock() {
            let seen = *word;
            drop(word);
            let Ok(applied) = cell::update(
                &self.0.word,
                &self.0.config,
                seen,
                Event::Admit,
                None,
                || self.0.clock.now(),
                |swap| self.0.report(swap),
            );
            return Reply::Ready(admission(applied));
        }
        let shared = self.0.clone();
        Reply::Wait(Box::pin(async move {
            admission(shared.apply_async(Event::Admit).await)
        }))
    }

    fn release_async(
        &self,
        ticket: LockedTicket,
        verdict: TickVerdict,
    ) -> Reply<Release, Self::Releasing> {
        let shared = self.0.clone();
        Reply::Wait(Box::pin(async move {
            recorded(shared.apply_async(release_event(&ticket, verdict)).await)
        }))
    }
}

/// A check the example makes: printed, and fatal when it fails.
fn check(what: &str, ok: bool) {
    println!("{} {what}", if ok { "ok:" } else { "FAILED:" });
    if !ok {
        std::process::exit(1);
    }
}

const OPEN_FOR: Duration = Duration::from_millis(20);

fn config() -> ValidConfig<W64> {
    Config::new()
        .failure_threshold(2)
        .open_for(OPEN_FOR.as_micros() as u64) // MonotonicClock ticks: µs
        .probe_timeout(60_000_000) // a descheduled probe stays current
        .check()
        .expect("in range")
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let breaker = LockedBreaker::new(config());

    println!("call (sync closures):");
    check(
        "a success passes",
        breaker.call(|| Ok::<_, &str>(1)) == Ok(1),
    );
    for _ in 0..2 {
        let _ = breaker.call(|| Err::<u32, _>("timeout"));
    }
    check("two failures trip it", breaker.status() == Status::Open);
    let mut ran = false;
    let r = breaker.call(|| {
        ran = true;
        Ok::<_, &str>(1)
    });
    check(
        "open: the closure is not run",
        !ran && r.as_ref().unwrap_err().cause() == Some(Cause::Open),
    );

    println!("call_async (futures):");
    tokio::time::sleep(OPEN_FOR + Duration::from_millis(5)).await;
    check(
        "after the open time it reads half-open",
        breaker.status() == Status::HalfOpen,
    );
    // 32 tasks race for the probe: the core's loop elects exactly one.
    let admitted = Arc::new(AtomicUsize::new(0));
    let gate = Arc::new(tokio::sync::Barrier::new(32));
    let tasks: Vec<_> = (0..32)
        .map(|_| {
            let (b, admitted, gate) = (breaker.clone(), admitted.clone(), gate.clone());
            tokio::spawn(async move {
                gate.wait().await;
                let slow_probe = async {
                    tokio::time::sleep(Duration::from_millis(5)).await;
                    Ok::<_, &str>(())
                };
                if b.call_async(slow_probe).await.is_ok() {
                    admitted.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.expect("task");
    }
    check(
        "32 racing tasks: exactly one probe ran",
        admitted.load(Ordering::Relaxed) == 1,
    );
    check(
        "its success closed the breaker",
        breaker.status() == Status::Closed,
    );
    // A call dropped before it completes (a timeout, a client gone) records
    // the cancel outcome: `Ignored`, no failure counted.
    let _ = breaker.call(|| Err::<(), _>("one failure"));
    let cancelled = tokio::time::timeout(
        Duration::from_millis(1),
        breaker.call_async(std::future::pending::<Result<(), ()>>()),
    )
    .await;
    check("a cancelled call timed out", cancelled.is_err());
    let _ = breaker.call(|| Ok::<_, ()>(())); // resets the run
    check(
        "the cancelled call counted no failure",
        breaker.status() == Status::Closed,
    );

    println!("tower (BreakerLayer):");
    let mut svc = BreakerLayer::new(breaker.clone())
        .classify(OkOrFailure)
        .layer(service_fn(|n: u32| async move {
            if n == 0 { Err("zero") } else { Ok(n) }
        }));
    check(
        "the layer passes a success",
        svc.ready().await.unwrap().call(7).await == Ok(7),
    );
    for _ in 0..2 {
        let _ = svc.ready().await.unwrap().call(0).await;
    }
    let r = svc.ready().await.unwrap().call(7).await;
    check(
        "two failures through the layer trip it, then it rejects",
        r.is_err_and(|e| e.is_open()),
    );

    println!("registry (one breaker per host, made on first use):");
    let hosts: Arc<Registry<String, LockedBreaker>> =
        Arc::new(Registry::new(|_host: &String| LockedBreaker::new(config())));
    // Through call_async on an entry...
    for _ in 0..2 {
        let a = hosts.get("a.example");
        let _ = a.call_async(async { Err::<(), _>("down") }).await;
    }
    check(
        "a failing host trips only its own breaker",
        hosts.get("a.example").status() == Status::Open
            && hosts.get("b.example").status() == Status::Closed,
    );
    // ...and through the registry's tower layer, keyed by the request.
    let mut client = RegistryLayer::new(hosts.clone(), |req: &(String, u32)| req.0.clone())
        .classify(OkOrFailure)
        .layer(service_fn(|(_host, n): (String, u32)| async move {
            if n == 0 { Err("zero") } else { Ok(n) }
        }));
    let mut send = async |host: &str, n: u32| {
        client
            .ready()
            .await
            .unwrap()
            .call((host.to_owned(), n))
            .await
    };
    check(
        "b.example still answers",
        send("b.example", 5).await == Ok(5),
    );
    let r = send("a.example", 5).await;
    check(
        "a.example is rejected, and the rejection names it",
        matches!(&r, Err(e) if e.key() == Some("a.example")),
    );
    if let Err(e) = r {
        println!("  {e}");
    }
    check("the registry made one breaker per host", hosts.len() == 2);
    println!(
        "transitions reported: {}",
        breaker.0.transitions.load(Ordering::Relaxed)
    );
}
