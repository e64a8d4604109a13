//! A simulated flaky peripheral: each read follows the next step of a
//! script (answer, fail, or hang far past any sensible timeout), taking
//! embassy time as a bus transaction would.

use core::sync::atomic::{AtomicU32, Ordering};
use embassy_time::Timer;

/// What the next read does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Answers after 2 ms.
    Answer,
    /// Fails (a NAK on the bus) after 2 ms.
    Nak,
    /// Hangs for a second: only a timeout ends it.
    Hang,
}

/// The peripheral's error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Nak;

/// A peripheral that follows `script`, then answers.
pub struct Flaky {
    script: &'static [Step],
    reads: AtomicU32,
}

impl Flaky {
    pub const fn new(script: &'static [Step]) -> Self {
        Flaky {
            script,
            reads: AtomicU32::new(0),
        }
    }

    /// Reads started so far (a read that a rejection kept from running is
    /// not one).
    pub fn reads(&self) -> u32 {
        self.reads.load(Ordering::Relaxed)
    }

    /// One read: a sample, or the error, after the script's delay.
    pub async fn read(&self) -> Result<u16, Nak> {
        let n = self.reads.fetch_add(1, Ordering::Relaxed);
        match self.script.get(n as usize).copied().unwrap_or(Step::Answer) {
            Step::Answer => {
                Timer::after_millis(2).await;
                Ok(1000 + n as u16)
            }
            Step::Nak => {
                Timer::after_millis(2).await;
                Err(Nak)
            }
            Step::Hang => {
                Timer::after_secs(1).await;
                Ok(0)
            }
        }
    }
}
