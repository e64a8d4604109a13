//! The breaker's observer: logs each transition with the context that made
//! it (the bus interrupt handler or the async task), and counts stale
//! releases per context. Lock-free, so both contexts report into it.

use core::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use tripword::{Observer, Outcome, Status, Transition};

/// Set by the handler while it runs (nothing preempts it, so this tells the
/// observer which context it runs in).
pub static IN_HANDLER: AtomicBool = AtomicBool::new(false);

/// Who made a transition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum By {
    Handler,
    Task,
}

/// One logged transition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    pub from: Status,
    pub to: Status,
    pub counter: u32,
    pub by: By,
}

const CAPACITY: usize = 32;

pub struct Trace {
    log: [AtomicU32; CAPACITY],
    len: AtomicU32,
    stale_in_task: AtomicU32,
    stale_in_handler: AtomicU32,
}

impl Trace {
    pub const fn new() -> Self {
        Trace {
            log: [const { AtomicU32::new(0) }; CAPACITY],
            len: AtomicU32::new(0),
            stale_in_task: AtomicU32::new(0),
            stale_in_handler: AtomicU32::new(0),
        }
    }

    /// The transitions logged so far, in order.
    pub fn entries(&self) -> impl Iterator<Item = Entry> + '_ {
        let len = (self.len.load(Ordering::Acquire) as usize).min(CAPACITY);
        self.log[..len]
            .iter()
            .map(|slot| decode(slot.load(Ordering::Acquire)))
    }

    pub fn len(&self) -> usize {
        self.len.load(Ordering::Acquire) as usize
    }

    /// Stale releases made by the async task and by the handler.
    pub fn stale(&self) -> (u32, u32) {
        (
            self.stale_in_task.load(Ordering::Relaxed),
            self.stale_in_handler.load(Ordering::Relaxed),
        )
    }
}

impl Observer for Trace {
    fn on_transition(&self, t: Transition) {
        let by = if IN_HANDLER.load(Ordering::Relaxed) {
            By::Handler
        } else {
            By::Task
        };
        let n = self.len.fetch_add(1, Ordering::AcqRel) as usize;
        if let Some(slot) = self.log.get(n) {
            slot.store(encode(t, by), Ordering::Release);
        }
    }

    fn on_stale(&self, _: Outcome) {
        let count = if IN_HANDLER.load(Ordering::Relaxed) {
            &self.stale_in_handler
        } else {
            &self.stale_in_task
        };
        count.fetch_add(1, Ordering::Relaxed);
    }
}

fn status_bits(s: Status) -> u32 {
    match s {
        Status::Closed => 0,
        Status::Open => 1,
        Status::HalfOpen => 2,
        Status::Probing => 3,
        Status::Recovering => 4,
    }
}

fn status_of(bits: u32) -> Status {
    match bits & 7 {
        0 => Status::Closed,
        1 => Status::Open,
        2 => Status::HalfOpen,
        3 => Status::Probing,
        _ => Status::Recovering,
    }
}

fn encode(t: Transition, by: By) -> u32 {
    status_bits(t.from)
        | status_bits(t.to) << 3
        | u32::from(by == By::Handler) << 6
        | (t.counter & 0xffff) << 16
}

fn decode(raw: u32) -> Entry {
    Entry {
        from: status_of(raw),
        to: status_of(raw >> 3),
        counter: raw >> 16,
        by: if raw & 1 << 6 != 0 {
            By::Handler
        } else {
            By::Task
        },
    }
}
