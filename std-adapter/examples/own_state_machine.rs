//! A breaker with its own state machine (no core word): failures in a row behind a `Mutex`, a
//! cooldown on a hand-moved clock. It implements only [`LocalBreaker`], rejects with
//! [`Rejected::new`], and as a [`Local`] runs through `call`, `call_async`, the tower layer and a
//! registry (`docs/spec.md`, "Kit"). A failed check panics. Run it with
//! `cargo run -p tripword-std --example own_state_machine --features tower,tokio`.

use std::sync::{Arc, Mutex, atomic::AtomicU32, atomic::Ordering::Relaxed};
use tower::{Layer, Service, ServiceExt, service_fn};
use tripword::kit::{CircuitBreaker, Local, LocalBreaker};
use tripword::{Cause, Clock, Outcome, Rejected, Release, Status};
use tripword_std::tower::{BreakerLayer, RegistryLayer};
use tripword_std::{BreakerExt, ManualTime, Registry};

static CLOCK: ManualTime = ManualTime::new();
static RAN: AtomicU32 = AtomicU32::new(0); // calls of `work` (the protected call) that ran
const LIMIT: u32 = 3; // failures in a row that open it
const COOLDOWN: u64 = 5_000; // ticks (µs) it stays open
#[derive(Default)] // failures in a row, open until (tick), trips (a ticket's generation)
struct Streak(Mutex<(u32, u64, u32)>);

impl LocalBreaker for Streak {
    type Ticket = u32; // the trips when admitted
    type Clock = ManualTime;
    fn acquire(&self) -> Result<u32, Rejected> {
        let (_, until, trips) = *self.0.lock().unwrap();
        match until.checked_sub(CLOCK.now()) {
            Some(wait @ 1..) => Err(Rejected::new(Cause::Open, Some(wait))),
            _ => Ok(trips),
        }
    }
    fn release(&self, ticket: u32, outcome: Outcome) -> Release {
        let (failures, until, trips) = &mut *self.0.lock().unwrap();
        match outcome {
            _ if ticket != *trips => return Release::Stale, // from before a trip
            Outcome::Success => *failures = 0,
            Outcome::Failure if *failures + 1 == LIMIT => {
                (*failures, *until, *trips) = (0, CLOCK.now() + COOLDOWN, *trips + 1)
            }
            Outcome::Failure => *failures += 1,
            Outcome::Ignored => {}
        }
        Release::Recorded
    }
    fn status(&self) -> Status {
        self.acquire().map_or(Status::Open, |_| Status::Closed)
    }
    fn clock(&self) -> &ManualTime {
        &CLOCK
    }
}

fn check(what: &str, ok: bool) {
    println!("{} {what}", if ok { "ok:" } else { "FAILED:" });
    assert!(ok, "{what}"); // a non-zero exit
}

fn work(ok: bool) -> Result<u32, &'static str> {
    RAN.fetch_add(1, Relaxed);
    if ok { Ok(1) } else { Err("down") }
}

/// One path: after a cooldown a success passes; `LIMIT` failures open it.
async fn exercise(path: &str, mut call: impl AsyncFnMut(bool) -> bool) {
    CLOCK.advance_ticks(COOLDOWN);
    check(&format!("{path}: a success passes"), call(true).await);
    for _ in 0..LIMIT {
        call(false).await;
    }
    let ran = RAN.load(Relaxed);
    let unrun = !call(true).await && RAN.load(Relaxed) == ran;
    check(&format!("{path}: open, the call not run"), unrun);
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let b = Local(Arc::new(Streak::default())); // a cheap handle, for the layer
    exercise("call", async |ok| b.call(|| work(ok)).is_ok()).await;
    let why = b.call(|| work(true)).unwrap_err(); // its own rejection, in durations
    let open = (why.cause(), why.rejected().map(|r| r.retry_after_ticks()))
        == (Some(Cause::Open), Some(Some(COOLDOWN)));
    check(&format!("its own rejection: {why}"), open);
    let stale = b.release(0, Outcome::Success) == Release::Stale;
    check("a ticket from before the trip is stale", stale);
    let call_async = async |ok| b.call_async(async move { work(ok) }).await.is_ok();
    exercise("call_async", call_async).await;
    let layer = BreakerLayer::new(b.clone()); // any `Err` a failure
    let mut svc = layer.layer(service_fn(|ok| async move { work(ok) }));
    let tower = async |ok| svc.ready().await.unwrap().call(ok).await.is_ok();
    exercise("tower", tower).await;
    let make = |_: &String| Local(Streak::default()); // one breaker per key
    let hosts = Arc::new(Registry::new(make));
    let mut client = RegistryLayer::new(hosts.clone(), |r: &(&str, bool)| r.0.to_owned())
        .layer(service_fn(|(_, ok): (&str, bool)| async move { work(ok) }));
    let mut send = async |host, ok| client.ready().await.unwrap().call((host, ok)).await.is_ok();
    exercise("registry", async |ok| send("a.example", ok).await).await;
    check("registry: b.example answers", send("b.example", true).await);
    let a_open = hosts.get("a.example").status() == Status::Open;
    check("registry: one breaker per host", a_open && hosts.len() == 2);
}
