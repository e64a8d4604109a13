//! An observer that keeps the transitions it is told about, so a test can
//! compare them with what it expected (SPEC I7: each reported once).

use core::cell::RefCell;
use critical_section::Mutex;
use tripword::{Observer, Transition};

const CAPACITY: usize = 16;

#[derive(Clone, Copy)]
pub struct Log {
    items: [Option<Transition>; CAPACITY],
    len: usize,
    /// Reports since the recorder was made, including those past `CAPACITY`.
    pub total: u32,
    /// Corrupt words reported.
    pub corrupt: u32,
}

impl Log {
    const EMPTY: Log = Log {
        items: [None; CAPACITY],
        len: 0,
        total: 0,
        corrupt: 0,
    };

    pub fn transitions(&self) -> impl Iterator<Item = Transition> + '_ {
        self.items[..self.len].iter().flatten().copied()
    }

    pub fn len(&self) -> usize {
        self.len
    }
}

pub struct Recorder {
    log: Mutex<RefCell<Log>>,
}

impl Recorder {
    pub const fn new() -> Self {
        Recorder {
            log: Mutex::new(RefCell::new(Log::EMPTY)),
        }
    }

    /// The transitions reported since the last `take`, and forgets them.
    pub fn take(&self) -> Log {
        critical_section::with(|cs| {
            let mut log = self.log.borrow_ref_mut(cs);
            let out = *log;
            log.items = [None; CAPACITY];
            log.len = 0;
            out
        })
    }
}

impl Observer for Recorder {
    fn on_transition(&self, t: Transition) {
        critical_section::with(|cs| {
            let mut log = self.log.borrow_ref_mut(cs);
            if log.len < CAPACITY {
                let i = log.len;
                log.items[i] = Some(t);
                log.len += 1;
            }
            log.total += 1;
        })
    }

    fn on_corrupt_word(&self, _raw: u64, _counter: u32) {
        critical_section::with(|cs| self.log.borrow_ref_mut(cs).corrupt += 1)
    }
}
