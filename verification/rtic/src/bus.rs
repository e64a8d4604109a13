//! The simulated bus: a flaky peripheral that the async task reads (each
//! read follows the next step of a script, and may raise the bus interrupt
//! while it is in flight), and the outcomes the interrupt handler reports
//! for the transfers it completes.

use core::sync::atomic::{AtomicU32, Ordering};

use lm3s6965::Interrupt;
use rtic_monotonics::Timebase;
use rtic_monotonics::fugit::ExtU32;
use tripword::Outcome;

use crate::Mono;

/// The interrupt that stands for the bus's transfer-complete interrupt.
pub const BUS_IRQ: Interrupt = Interrupt::GPIOA;

/// How a read ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ends {
    /// An answer after 2 ms.
    Answer,
    /// A NAK after 2 ms.
    Nak,
    /// Nothing for a second: only a timeout ends it.
    Hang,
}

/// One read of the script: how it ends, and whether the bus interrupt
/// fires 1 ms into it (while the read is in flight).
#[derive(Clone, Copy, Debug)]
pub struct Step {
    pub ends: Ends,
    pub irq_midway: bool,
}

/// The peripheral's error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Nak;

/// A peripheral that follows its script, then answers.
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

    /// Reads started so far.
    pub fn reads(&self) -> u32 {
        self.reads.load(Ordering::Relaxed)
    }

    /// One read: a sample or a NAK, after the script's delay.
    pub async fn read(&self) -> Result<u16, Nak> {
        let n = self.reads.fetch_add(1, Ordering::Relaxed);
        let step = self.script.get(n as usize).copied().unwrap_or(Step {
            ends: Ends::Answer,
            irq_midway: false,
        });
        Mono::delay(1.millis()).await;
        if step.irq_midway {
            // The handler preempts this task here and runs to completion.
            rtic::pend(BUS_IRQ);
        }
        match step.ends {
            Ends::Answer => {
                Mono::delay(1.millis()).await;
                Ok(1000 + n as u16)
            }
            Ends::Nak => {
                Mono::delay(1.millis()).await;
                Err(Nak)
            }
            Ends::Hang => {
                Mono::delay(1_000.millis()).await;
                Ok(0)
            }
        }
    }
}

/// The outcomes of the transfers the interrupt handler completes, in order
/// (one per admitted run; a rejected run takes none).
pub struct HandlerScript {
    outcomes: &'static [Outcome],
    next: AtomicU32,
}

impl HandlerScript {
    pub const fn new(outcomes: &'static [Outcome]) -> Self {
        HandlerScript {
            outcomes,
            next: AtomicU32::new(0),
        }
    }

    /// The next outcome (success once the script is done).
    pub fn next(&self) -> Outcome {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        self.outcomes
            .get(n as usize)
            .copied()
            .unwrap_or(Outcome::Success)
    }
}
