//! A fixed table of named breakers for firmware: keys fixed at build time,
//! built by a `const` constructor, so the whole table can be a `static`; no
//! heap, no lock, lookups by key or by index.
//!
//! ```
//! use tripword::clock::ManualClock;
//! use tripword::table::{BreakerTable, TableBreaker};
//! use tripword::{Config, Status, ValidConfig, W32};
//!
//! static CLOCK: ManualClock = ManualClock::new(0);
//! static CONFIG: ValidConfig<W32> = ValidConfig::new(Config::new().failure_threshold(2));
//!
//! // One breaker per peripheral, each named in its events.
//! static BREAKERS: BreakerTable<&str, TableBreaker<&ManualClock, W32>, 3> =
//!     tripword::breaker_table!(["uart", "i2c", "radio"], |_name| {
//!         tripword::Breaker::from_parts(&CONFIG, &CLOCK, ())
//!     });
//!
//! let radio = BREAKERS.get(&"radio").unwrap();
//! radio.force_open();
//! assert_eq!(BREAKERS.at(2).status(), Status::Open);
//! assert_eq!(BREAKERS.get(&"uart").unwrap().status(), Status::Closed);
//! assert!(BREAKERS.get(&"spi").is_none());
//! let open: Vec<&str> = BREAKERS.iter().filter(|(_, b)| b.status() == Status::Open).map(|(k, _)| *k).collect();
//! assert_eq!(open, ["radio"]);
//! ```

use crate::breaker::Breaker;
use crate::config::ValidConfig;
use crate::word::W64;

/// The usual breaker of a table: its config a `static` shared by all
/// ([`StaticBreaker`](crate::StaticBreaker)), so RAM per breaker is its word
/// (and its clock and observer, often a reference or zero-sized).
pub type TableBreaker<C, W = W64, O = ()> = Breaker<C, W, O, &'static ValidConfig<W>>;

/// `N` breakers of type `B`, each under a key `K` fixed at build time (a
/// `&'static str`, an enum of peripherals). Build one in a `static` with
/// [`breaker_table!`](crate::breaker_table) or [`BreakerTable::new`].
/// Lookup by key is a scan of `N` keys (for the few breakers firmware has);
/// by index, [`at`](Self::at), it is direct.
#[derive(Debug)]
pub struct BreakerTable<K, B, const N: usize> {
    entries: [(K, B); N],
}

impl<K, B, const N: usize> BreakerTable<K, B, N> {
    /// A table of `entries`, each a key and its breaker. `const`: a table
    /// can be a `static`. Keys should be distinct: lookups find the first.
    pub const fn new(entries: [(K, B); N]) -> Self {
        BreakerTable { entries }
    }

    /// The breaker under `key`, if any.
    pub fn get(&self, key: &K) -> Option<&B>
    where
        K: PartialEq,
    {
        self.entries.iter().find(|(k, _)| k == key).map(|(_, b)| b)
    }

    /// The index of `key`, if any: to look it up once and use
    /// [`at`](Self::at) after (from an interrupt handler, say).
    pub fn index_of(&self, key: &K) -> Option<usize>
    where
        K: PartialEq,
    {
        self.entries.iter().position(|(k, _)| k == key)
    }

    /// The `index`-th breaker.
    ///
    /// # Panics
    /// If `index >= N`.
    pub const fn at(&self, index: usize) -> &B {
        &self.entries[index].1
    }

    /// The `index`-th key.
    ///
    /// # Panics
    /// If `index >= N`.
    pub const fn key(&self, index: usize) -> &K {
        &self.entries[index].0
    }

    /// Every key and its breaker, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&K, &B)> {
        self.entries.iter().map(|(k, b)| (k, b))
    }

    /// `N`.
    pub const fn len(&self) -> usize {
        N
    }

    /// Whether `N` is 0.
    pub const fn is_empty(&self) -> bool {
        N == 0
    }
}

/// Builds a [`BreakerTable`] in a `const` or `static`: one breaker per key,
/// each made by the closure-like body from its key, so that its observer can
/// carry the key (see `log::TransitionLog`, with the
/// `heapless` feature).
///
/// ```
/// use tripword::clock::ManualClock;
/// use tripword::table::{BreakerTable, TableBreaker};
/// use tripword::{Breaker, Config, ValidConfig, W32};
///
/// #[derive(Clone, Copy, Debug, PartialEq, Eq)]
/// enum Peripheral { Uart, Radio }
///
/// static CLOCK: ManualClock = ManualClock::new(0);
/// static CONFIG: ValidConfig<W32> = ValidConfig::new(Config::new());
/// static TABLE: BreakerTable<Peripheral, TableBreaker<&ManualClock, W32>, 2> =
///     tripword::breaker_table!([Peripheral::Uart, Peripheral::Radio], |_p| {
///         Breaker::from_parts(&CONFIG, &CLOCK, ())
///     });
/// assert!(TABLE.get(&Peripheral::Radio).unwrap().acquire().is_ok());
/// ```
#[macro_export]
macro_rules! breaker_table {
    ([$($key:expr),* $(,)?], |$k:ident| $make:expr) => {
        $crate::table::BreakerTable::new([$({
            #[allow(unused_variables)]
            let $k = $key;
            ($k, $make)
        }),*])
    };
}
