//! The word's layout and encoding, bit by bit.

use super::*;

#[test]
fn layouts_fill_their_words_exactly() {
    for l in [W64::LAYOUT, W32::LAYOUT] {
        assert_eq!(
            TAG_BITS + l.counter_bits + l.trips_bits + l.time_bits,
            l.word_bits
        );
        assert!(TAG_BITS + l.counter_bits + l.failure_bits <= l.word_bits);
    }
}

#[test]
fn zero_word_is_initial_closed() {
    assert_eq!(Snapshot::decode::<W64>(0), Ok(Snapshot::INITIAL));
    assert_eq!(Snapshot::decode::<W32>(0), Ok(Snapshot::INITIAL));
}

fn round_trip<W: Word>() {
    let l = W::LAYOUT;
    let states = [
        State::Closed { failures: 0 },
        State::Closed {
            failures: l.max_failures(),
        },
        State::Open {
            since: l.time_mask(),
            trips: l.max_trips(),
        },
        State::Open { since: 0, trips: 1 },
        State::HalfOpen { trips: 3 },
        State::Probing {
            since: 12345 & l.time_mask(),
            trips: 2,
        },
        State::ForcedOpen,
    ];
    for state in states {
        for counter in [0, 1, l.max_counter()] {
            let snap = Snapshot { state, counter };
            assert_eq!(Snapshot::decode::<W>(snap.encode::<W>()), Ok(snap));
        }
    }
}

#[test]
fn every_state_round_trips_both_widths() {
    round_trip::<W64>();
    round_trip::<W32>();
}

#[test]
fn encode_reduces_out_of_range_fields() {
    let snap = Snapshot {
        state: State::Open {
            since: u64::MAX,
            trips: u32::MAX,
        },
        counter: u32::MAX,
    };
    let back = Snapshot::decode::<W32>(snap.encode::<W32>()).unwrap();
    assert_eq!(
        back,
        Snapshot {
            state: State::Open {
                since: W32::LAYOUT.time_mask(),
                trips: W32::LAYOUT.max_trips()
            },
            counter: W32::LAYOUT.max_counter(),
        }
    );
    let closed = Snapshot {
        state: State::Closed { failures: u32::MAX },
        counter: 0,
    };
    assert_eq!(
        Snapshot::decode::<W64>(closed.encode::<W64>())
            .unwrap()
            .state,
        State::Closed {
            failures: W64::LAYOUT.max_failures()
        }
    );
}

#[test]
fn corrupt_words_are_named() {
    // Tags 6 and 7 are the recovery states where they exist.
    if !crate::word::RECOVERY {
        assert_eq!(Snapshot::decode::<W64>(6), Err(Corruption::UnknownTag(6)));
        assert_eq!(Snapshot::decode::<W32>(7), Err(Corruption::UnknownTag(7)));
        assert_eq!(
            Snapshot::decode::<W64>(u64::MAX),
            Err(Corruption::UnknownTag(7))
        );
    }
    // Closed with a bit set above the failure field.
    assert_eq!(Snapshot::decode::<W64>(1 << 63), Err(Corruption::StrayBits));
    assert_eq!(Snapshot::decode::<W32>(1 << 31), Err(Corruption::StrayBits));
    // HalfOpen with a timestamp, ForcedOpen with trips.
    assert_eq!(
        Snapshot::decode::<W64>(TAG_HALF_OPEN | 1 << 40),
        Err(Corruption::StrayBits)
    );
    assert_eq!(
        Snapshot::decode::<W32>(4 | 1 << 13),
        Err(Corruption::StrayBits)
    );
}

#[test]
fn elapsed_is_modular_and_backwards_reads_large() {
    let l = W32::LAYOUT;
    assert_eq!(l.elapsed(10, 15), 5);
    // Wrapped clock: since near the top of the field, now past the wrap.
    assert_eq!(l.elapsed(l.time_mask() - 1, 3), 5);
    // Backwards by 1 tick reads as the whole range minus one.
    assert_eq!(l.elapsed(10, 9), l.time_mask());
    assert!(l.elapsed(10, 9) >= l.max_units());
}

#[test]
fn counter_wraps() {
    let l = W32::LAYOUT;
    assert_eq!(l.next_counter(l.max_counter()), 0);
    assert_eq!(l.next_counter(5), 6);
}

/// The closed fast path's two forms agree: the MCU's (`closed_below`, the
/// threshold shifted or the word shifted) and the 64-bit targets' (the
/// config's precomputed bound on the whole word), on every tag and around
/// every boundary.
#[cfg(target_pointer_width = "64")]
#[test]
fn the_closed_bound_in_the_config_agrees_with_closed_below() {
    fn check<W: Word>(thresholds: &[u32]) {
        let l = W::LAYOUT;
        for &n in thresholds {
            let config = crate::Config::new()
                .failure_threshold(n)
                .check::<W>()
                .unwrap();
            let limit = config.closed_limit();
            let ps = TAG_BITS + l.counter_bits;
            for f in [0, 1, n.saturating_sub(1), n, n + 1, l.max_failures()] {
                for c in [0u64, 1, u64::from(l.max_counter())] {
                    for tag in 0..8u64 {
                        let raw = (u64::from(f) << ps | c << TAG_BITS | tag) & mask(l.word_bits);
                        assert_eq!(
                            l.closed_below(raw, n),
                            tag_of(raw) == TAG_CLOSED && raw < limit,
                            "{raw:#x} threshold {n}"
                        );
                    }
                }
            }
        }
    }
    check::<W64>(&[1, 2, 5, 1_000, 65_535]);
    check::<W32>(&[1, 2, 5, 1_000, 4_095]);
}
