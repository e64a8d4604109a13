//! The figures the documentation states about the word layouts and time,
//! checked against what the core computes, so that the text cannot drift
//! from the code.
//!
//! Each check computes a figure through the core's public API (a
//! `Config::check`, a `ValidConfig` getter, `Word::LAYOUT`, the bucket
//! layout of the rate policy), formats it as the docs write it, and requires
//! the page to say exactly that: a table cell, found by its row's label, or
//! a phrase (whitespace, line breaks included, counts as one space). Edit a
//! figure in a page and the check that states it fails, naming the page,
//! what the code computes and what the page says.
//!
//! Where a figure is a threshold (the longest duration a shift can hold),
//! the test finds it by searching the config space through `Config::check`,
//! not by repeating the core's formula.
//!
//! Pages checked: `docs/spec.md` ("Time", "Word layouts", "Counter wrap",
//! "Policies", "Failure rate"), `docs/design-word.md` (bit diagrams, the
//! ranges table, "Time in units", "Open until", "Counter wrap"),
//! `docs/design.md` ("Fast paths", "Failure rate"), `docs/design-kit.md`
//! (the metrics gauge), `docs/embedded.md` (the tick table, "Which word on
//! which core").

use tripword::rate::{BucketLayout, Rate};
use tripword::word::{Layout, TAG_BITS};
use tripword::{Config, Field, ValidConfig, W32, W64, Word};

/// A documentation page, as it is in the repository when the test is built.
struct Page {
    path: &'static str,
    text: &'static str,
}

const SPEC: Page = Page {
    path: "docs/spec.md",
    text: include_str!("../../docs/spec.md"),
};
const DESIGN: Page = Page {
    path: "docs/design.md",
    text: include_str!("../../docs/design.md"),
};
const DESIGN_WORD: Page = Page {
    path: "docs/design-word.md",
    text: include_str!("../../docs/design-word.md"),
};
const DESIGN_KIT: Page = Page {
    path: "docs/design-kit.md",
    text: include_str!("../../docs/design-kit.md"),
};
const EMBEDDED: Page = Page {
    path: "docs/embedded.md",
    text: include_str!("../../docs/embedded.md"),
};

/// Ticks per second of the tick each width is documented with: 1 µs for
/// `W64`, 1 kHz for `W32` (the default horizons are an hour of each).
const US: f64 = 1_000_000.0;
const KHZ: f64 = 1_000.0;

impl Page {
    /// The page with every run of whitespace made one space.
    fn flat(&self) -> String {
        self.text.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    /// Fails unless the page says `phrase` (whitespace-insensitive).
    #[track_caller]
    fn says(&self, phrase: &str) {
        let phrase = phrase.split_whitespace().collect::<Vec<_>>().join(" ");
        if self.flat().contains(&phrase) {
            return;
        }
        // Help the reader find the sentence that drifted: the lines that
        // share the phrase's first words.
        let anchor: String = phrase.split(' ').take(3).collect::<Vec<_>>().join(" ");
        let near: Vec<&str> = self
            .text
            .lines()
            .filter(|l| l.contains(anchor.split(' ').next().unwrap_or("")))
            .filter(|l| anchor.split(' ').all(|w| l.contains(w)) || l.contains(&anchor))
            .take(5)
            .collect();
        panic!(
            "{}: the code gives\n    {phrase}\nbut the page does not say so.{}",
            self.path,
            if near.is_empty() {
                String::new()
            } else {
                format!(" Lines near it:\n    {}", near.join("\n    "))
            }
        );
    }

    /// The cells of the one table row of the page whose first cell is
    /// `label` (the row's cells trimmed, the label first).
    #[track_caller]
    fn row(&self, label: &str) -> Vec<&'static str> {
        let rows: Vec<Vec<&str>> = self
            .text
            .lines()
            .filter(|l| l.trim_start().starts_with('|'))
            .map(|l| {
                let l = l.trim();
                l.trim_start_matches('|')
                    .trim_end_matches('|')
                    .split('|')
                    .map(str::trim)
                    .collect()
            })
            .filter(|cells: &Vec<&str>| cells.first() == Some(&label))
            .collect();
        assert_eq!(
            rows.len(),
            1,
            "{}: expected one table row labelled {label:?}, found {}",
            self.path,
            rows.len()
        );
        rows.into_iter().next().unwrap()
    }

    /// Fails unless the row labelled `label` has `expected` in column
    /// `column` (1 is the first column after the label).
    #[track_caller]
    fn cell(&self, label: &str, column: usize, expected: &str) {
        let row = self.row(label);
        let got = row.get(column).copied().unwrap_or("<no such column>");
        assert_eq!(
            got, expected,
            "{}: row {label:?}, column {column}: the page says\n    {got}\nthe code gives\n    {expected}",
            self.path
        );
    }

    /// The text of every fenced ```text block of the page, each with the
    /// nearest heading above it.
    fn text_blocks(&self) -> Vec<(&'static str, String)> {
        let mut blocks = Vec::new();
        let mut heading = "";
        // In a fenced block: `Some(Some(text))` for a ```text block.
        let mut fence: Option<Option<String>> = None;
        for line in self.text.lines() {
            let is_fence = line.trim_start().starts_with("```");
            match &mut fence {
                None if is_fence => {
                    fence = Some((line.trim() == "```text").then(String::new));
                }
                None if line.starts_with('#') => heading = line,
                None => {}
                Some(block) if is_fence => {
                    if let Some(text) = block.take() {
                        blocks.push((heading, text));
                    }
                    fence = None;
                }
                Some(Some(text)) => {
                    text.push_str(line);
                    text.push('\n');
                }
                Some(None) => {}
            }
        }
        blocks
    }
}

// ---------------------------------------------------------------- formatting

/// `n` with its digits in groups of three, as the docs write numbers:
/// `3 600 000`. Four-digit numbers too (`4 095`), as the pages do.
fn num(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

/// `2^k` for a power of two.
#[track_caller]
fn pow2(n: u64) -> String {
    assert!(n.is_power_of_two(), "{n} is not a power of two");
    format!("2^{}", n.trailing_zeros())
}

/// `ticks` of a clock of `per_second` ticks, in `unit` (`s`, `min`, `h`,
/// `days`), with `decimals` digits after the point.
fn span(ticks: u64, per_second: f64, unit: &str, decimals: usize) -> String {
    let seconds = ticks as f64 / per_second;
    let value = match unit {
        "s" => seconds,
        "min" => seconds / 60.0,
        "h" => seconds / 3_600.0,
        "days" => seconds / 86_400.0,
        _ => panic!("unit {unit}"),
    };
    format!("{value:.decimals$} {unit}")
}

// ------------------------------------------------------------- the core's side

fn valid<W: Word>(config: Config) -> ValidConfig<W> {
    match config.check::<W>() {
        Ok(v) => v,
        Err(e) => panic!("{e:?}"),
    }
}

/// The shift a config gets with durations of `longest` ticks at most.
fn shift_for<W: Word>(base: Config, longest: u64) -> Option<u32> {
    base.open_for(longest)
        .probe_timeout(1)
        .check::<W>()
        .ok()
        .map(|v| v.time_shift())
}

/// The longest duration (in ticks) a config built on `base` can have and
/// still get a shift of at most `s`: searched through `Config::check`.
fn longest_at_shift<W: Word>(base: Config, s: u32) -> u64 {
    assert!(
        shift_for::<W>(base, 1).is_some_and(|got| got <= s),
        "no config on this base reaches shift {s}"
    );
    let (mut lo, mut hi) = (1u64, u64::MAX);
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if shift_for::<W>(base, mid).is_some_and(|got| got <= s) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    lo
}

/// The largest duration a config of width `W` accepts at all: at the
/// largest shift, with no horizon to cover.
fn longest_accepted<W: Word>() -> u64 {
    longest_at_shift::<W>(Config::new().horizon(0), W::LAYOUT.max_shift())
}

/// The largest value `field` accepts, from the range its error names.
#[track_caller]
fn max_of(result: Result<impl Sized, tripword::ConfigError>, field: Field) -> u64 {
    match result {
        Ok(_) => panic!("expected {field:?} to be out of range"),
        Err(e) => {
            assert_eq!(e.field, field);
            e.max
        }
    }
}

/// What the docs state for one word width.
struct Figures {
    layout: Layout,
    /// The default config's horizon, shift, ring and longest hint.
    horizon: u64,
    shift: u32,
    ring: u64,
    hint: u64,
    /// The longest duration that keeps the default horizon's shift.
    keeps_shift: u64,
    /// The ring and shift one shift up (a duration one tick longer).
    next_ring: u64,
    next_shift: u32,
    /// The largest failure threshold, backoff factor and shift.
    max_threshold: u64,
    max_doubling: u64,
    max_shift: u32,
    /// The largest duration accepted at all, and the largest ring.
    longest: u64,
    max_ring: u64,
}

fn figures<W: Word>() -> Figures {
    let default = valid::<W>(Config::new());
    let keeps_shift = longest_at_shift::<W>(Config::new(), default.time_shift());
    let next = valid::<W>(Config::new().open_for(keeps_shift + 1));
    assert_eq!(
        next.time_shift(),
        default.time_shift() + 1,
        "one tick more takes the next shift"
    );
    // The largest horizon any shift covers, and the shift it takes.
    let most = max_of(Config::new().horizon(u64::MAX).check::<W>(), Field::Horizon);
    let widest = valid::<W>(Config::new().horizon(most));
    assert!(Config::new().horizon(most + 1).check::<W>().is_err());
    Figures {
        layout: W::LAYOUT,
        horizon: default.horizon(),
        shift: default.time_shift(),
        ring: default.ring(),
        hint: default.longest_hint(),
        keeps_shift,
        next_ring: next.ring(),
        next_shift: next.time_shift(),
        max_threshold: max_of(
            Config::new().failure_threshold(u32::MAX).check::<W>(),
            Field::FailureThreshold,
        ),
        max_doubling: max_of(
            Config::new()
                .open_for(1)
                .exponential_backoff(u64::MAX)
                .check::<W>(),
            Field::BackoffCap,
        ),
        max_shift: widest.time_shift(),
        longest: longest_accepted::<W>(),
        max_ring: widest.ring(),
    }
}

/// The longest duration a shift `s` holds, as the docs write it:
/// `2^(h+s) − 2^s + 1` ticks with `2^h` units in half the ring, checked at
/// every shift against the search through `Config::check` (capped by the
/// largest duration accepted at all).
fn longest_duration_formula<W: Word>() -> String {
    let half = W::LAYOUT.time_bits - 1;
    let cap = longest_accepted::<W>();
    for s in 0..=W::LAYOUT.max_shift() {
        let formula = (1u128 << (half + s)) - (1u128 << s) + 1;
        let expected = formula.min(cap as u128) as u64;
        assert_eq!(
            longest_at_shift::<W>(Config::new().horizon(0), s),
            expected,
            "the longest duration at shift {s}"
        );
    }
    format!("2^({half}+s) − 2^s + 1")
}

// ------------------------------------------------------------------ the checks

#[test]
fn the_bit_diagrams_match_the_layouts() {
    for page in [&SPEC, &DESIGN_WORD] {
        let mut seen = (0, 0);
        for (heading, block) in page.text_blocks() {
            // A block holds one diagram per width, each under a line that
            // names it, or one diagram under a heading that does.
            let mut width = if heading.contains("W64") {
                Some(64)
            } else if heading.contains("W32") {
                Some(32)
            } else {
                None
            };
            let mut diagrams: Vec<(u32, String)> = Vec::new();
            for line in block.lines() {
                match line.trim() {
                    "W64" => width = Some(64),
                    "W32" => width = Some(32),
                    _ => {}
                }
                if let Some(w) = width {
                    match diagrams.last_mut() {
                        Some((lw, text)) if *lw == w => {
                            text.push_str(line);
                            text.push('\n');
                        }
                        _ => diagrams.push((w, format!("{line}\n"))),
                    }
                }
            }
            for (w, text) in diagrams {
                if !text.contains("counter") {
                    continue;
                }
                let layout = if w == 64 { W64::LAYOUT } else { W32::LAYOUT };
                check_diagram(page.path, &text, &layout);
                if w == 64 {
                    seen.0 += 1;
                } else {
                    seen.1 += 1;
                }
            }
        }
        assert!(
            seen.0 >= 1 && seen.1 >= 1,
            "{}: both bit diagrams expected, found {seen:?}",
            page.path
        );
    }
}

/// One width's diagram: the bit numbers of the header and the width of
/// every labelled field.
fn check_diagram(path: &str, diagram: &str, l: &Layout) {
    let counter_lo = TAG_BITS;
    let trips_lo = TAG_BITS + l.counter_bits;
    let time_lo = trips_lo + l.trips_bits;
    assert_eq!(
        time_lo + l.time_bits,
        l.word_bits,
        "the timed layout fills the word"
    );
    let header = diagram
        .lines()
        .find(|line| {
            !line.trim().is_empty() && line.split_whitespace().all(|t| t.parse::<u32>().is_ok())
        })
        .unwrap_or_else(|| panic!("{path}: a diagram without its bit numbers:\n{diagram}"));
    let bits: Vec<u32> = header
        .split_whitespace()
        .map(|t| t.parse().unwrap())
        .collect();
    let expected = vec![
        l.word_bits - 1,
        time_lo,
        time_lo - 1,
        trips_lo,
        trips_lo - 1,
        counter_lo,
        counter_lo - 1,
        0,
    ];
    assert_eq!(
        bits, expected,
        "{path}: the bit numbers of the {}-bit diagram",
        l.word_bits
    );
    let zero = l.word_bits - TAG_BITS - l.counter_bits - l.failure_bits;
    let mut found = [0; 5];
    for line in diagram.lines() {
        for field in line.split('|') {
            let Some((label, rest)) = field.split_once('(') else {
                continue;
            };
            let n: u32 = rest
                .chars()
                .take_while(char::is_ascii_digit)
                .collect::<String>()
                .parse()
                .unwrap_or(u32::MAX);
            let (i, want) = match label.trim() {
                "time" => (0, l.time_bits),
                "trips" => (1, l.trips_bits),
                "counter" => (2, l.counter_bits),
                "failures" => (3, l.failure_bits),
                "0" => (4, zero),
                other => panic!("{path}: an unknown field {other:?} in\n{diagram}"),
            };
            assert_eq!(
                n,
                want,
                "{path}: field {:?} of the {}-bit diagram",
                label.trim(),
                l.word_bits
            );
            found[i] += 1;
        }
    }
    assert!(
        found.iter().all(|&n| n > 0),
        "{path}: every field labelled with its width: {found:?}"
    );
}

#[test]
fn spec_time_table() {
    let (w64, w32) = (figures::<W64>(), figures::<W32>());
    SPEC.says(&format!(
        "The time field has T bits ({} for `W64`, {} for `W32`)",
        w64.layout.time_bits, w32.layout.time_bits
    ));
    SPEC.cell(
        "default horizon",
        1,
        &format!(
            "{} ticks ({} of 1 µs ticks)",
            num(w64.horizon),
            span(w64.horizon, US, "h", 0)
        ),
    );
    SPEC.cell(
        "default horizon",
        2,
        &format!(
            "{} ticks ({} of a 1 kHz tick)",
            num(w32.horizon),
            span(w32.horizon, KHZ, "h", 0)
        ),
    );
    SPEC.cell(
        "s at the default horizon",
        1,
        &format!(
            "{} for every duration up to {} ticks ({} at 1 µs); longer ones raise it",
            w64.shift,
            pow2(w64.keeps_shift),
            span(w64.keeps_shift, US, "h", 2)
        ),
    );
    SPEC.cell(
        "s at the default horizon",
        2,
        &format!(
            "{} while the longest duration is at most {} ticks ({} at 1 kHz), then {}, and higher as durations grow",
            w32.shift,
            num(w32.keeps_shift),
            span(w32.keeps_shift, KHZ, "min", 1),
            w32.next_shift
        ),
    );
    SPEC.cell(
        "ring",
        1,
        &format!(
            "{} ticks: {} at 1 µs (s = {})",
            pow2(w64.ring),
            span(w64.ring, US, "h", 2),
            w64.shift
        ),
    );
    SPEC.cell(
        "ring",
        2,
        &format!(
            "{} ticks: {} at 1 kHz (s = {}); {} ticks: {} (s = {})",
            pow2(w32.ring),
            span(w32.ring, KHZ, "min", 1),
            w32.shift,
            pow2(w32.next_ring),
            span(w32.next_ring, KHZ, "min", 1),
            w32.next_shift
        ),
    );
    SPEC.cell(
        "longest duration at shift s",
        1,
        &format!(
            "{} ticks, at most {}: {} ticks, {} at 1 µs, at s = {}",
            longest_duration_formula::<W64>(),
            pow2(w64.longest),
            pow2(w64.keeps_shift),
            span(w64.keeps_shift, US, "h", 2),
            w64.shift
        ),
    );
    SPEC.cell(
        "longest duration at shift s",
        2,
        &format!("{} ticks", longest_duration_formula::<W32>()),
    );
    // The hint's clamp is exactly half the ring.
    assert_eq!(w64.hint * 2, w64.ring);
    assert_eq!(w32.hint * 2, w32.ring);
    SPEC.cell(
        "longest open-time hint (half the ring)",
        1,
        &format!(
            "2^({}+s) ticks: {}, {} at 1 µs (s = {})",
            w64.layout.time_bits - 1,
            pow2(w64.hint),
            span(w64.hint, US, "h", 2),
            w64.shift
        ),
    );
    SPEC.cell(
        "longest open-time hint (half the ring)",
        2,
        &format!(
            "2^({}+s) ticks: {}, {} at 1 kHz (s = {})",
            w32.layout.time_bits - 1,
            pow2(w32.hint),
            span(w32.hint, KHZ, "min", 1),
            w32.shift
        ),
    );
    SPEC.says(&format!(
        "a config whose longest duration (open time, probe timeout or backoff cap) is {} ticks keeps {}-tick \
         units, and one tick more doubles them",
        num(w32.keeps_shift),
        1u64 << w32.shift
    ));
    SPEC.says(&format!(
        "at multiples of the ring ({} for `W32`, s = {}, 1 kHz; {} for `W64`, 1 µs)",
        span(w32.ring, KHZ, "min", 1),
        w32.shift,
        span(w64.ring, US, "h", 2)
    ));
}

#[test]
fn spec_word_layout_table() {
    let (w64, w32) = (figures::<W64>(), figures::<W32>());
    SPEC.cell(
        "`failure_threshold`",
        1,
        &format!("1 ..= {}", num(w64.max_threshold)),
    );
    SPEC.cell(
        "`failure_threshold`",
        2,
        &format!("1 ..= {}", num(w32.max_threshold)),
    );
    assert_eq!(w64.max_threshold, u64::from(w64.layout.max_failures()));
    SPEC.cell(
        "durations (`open_for`, `probe_timeout`, backoff cap)",
        1,
        &format!(
            "1 ..= {} ticks, within the longest duration at the config's shift (Time)",
            pow2(w64.longest)
        ),
    );
    SPEC.cell(
        "durations (`open_for`, `probe_timeout`, backoff cap)",
        2,
        &format!(
            "1 ..= {} ticks ({} at 1 kHz, s = {}), the same way",
            num(w32.longest),
            span(w32.longest, KHZ, "days", 1),
            w32.max_shift
        ),
    );
    SPEC.cell(
        "trips kept (saturating)",
        1,
        &w64.layout.max_trips().to_string(),
    );
    SPEC.cell(
        "trips kept (saturating)",
        2,
        &w32.layout.max_trips().to_string(),
    );
    for (w, column) in [(&w64, 1), (&w32, 2)] {
        let period = u64::from(w.layout.max_counter()) + 1;
        SPEC.cell(
            "counter period (state changes)",
            column,
            &format!("{} = {}", pow2(period), num(period)),
        );
    }
}

#[test]
fn counter_wrap_figures() {
    let p64 = u64::from(W64::LAYOUT.max_counter()) + 1;
    let p32 = u64::from(W32::LAYOUT.max_counter()) + 1;
    // A trip-and-recover cycle makes 4 changes per open time, a probe
    // timeout or an ignored probe 2, a forcing operation 1.
    let (open32, probe32) = (p32 / 4, p32 / 2);
    let (open64, probe64) = (p64 / 4, p64 / 2);
    SPEC.says(&format!(
        "So on `W32` a ticket is misread only after {} changes: at least {} open times or {} probe timeouts \
         (at 1 kHz, `open_for` 1 000, `probe_timeout` 500: {} of continuous cycling), or {} ignored probes, \
         or {} forcing operations. On `W64`: {} open times ({} at 1 s each), {} probe timeouts or ignored \
         probes, or {} forcing operations.",
        num(p32),
        num(open32),
        num(probe32),
        span(open32 * 1_000, KHZ, "s", 0),
        num(probe32),
        num(p32),
        num(open64),
        span(open64, 1.0, "days", 0),
        num(probe64),
        num(p64),
    ));
    // Both timed cycles cost the same time in that example.
    assert_eq!(open32 * 1_000, probe32 * 500);
    DESIGN_WORD.says(&format!(
        "**W64**: {} changes: at least {} probe timeouts or {} open times (with a 1 µs tick and the minimum \
         durations of 1 tick, {} of continuous cycling; with a 1 s probe timeout, {}). Ignored probes at one \
         per microsecond would take {} of *continuous* probing while one call is held; at a realistic 1 000 \
         probes per second, {}.",
        num(p64),
        num(probe64),
        num(open64),
        span(probe64, US, "s", 1),
        span(probe64, 1.0, "days", 0),
        span(probe64, US, "s", 1),
        span(probe64, 1_000.0, "min", 0),
    ));
    DESIGN_WORD.says(&format!(
        "**W32**: {} changes: at least {} probe timeouts or {} open times. With `probe_timeout(1)` and \
         `open_for(1_000)` at 1 kHz, that is {} ticks of timeouts plus one open time ({}); with a probe \
         timeout of 1 s, {}; with only trips of `open_for` 1 s, {}.",
        num(p32),
        num(probe32),
        num(open32),
        num(probe32),
        span(probe32 + 1_000, KHZ, "s", 1),
        span(probe32, 1.0, "min", 1),
        span(open32, 1.0, "s", 0),
    ));
    DESIGN_WORD.says(&format!(
        "A test pins the limit (a ticket held across exactly {} changes is misread; across {} or {} it is stale)",
        num(p32),
        num(p32 - 1),
        num(p32 + 1)
    ));
    EMBEDDED.says(&format!(
        "its state counter wraps after {} state changes",
        num(p32)
    ));
    DESIGN_KIT.says(&format!("(the counter wraps at {} on `W64`)", pow2(p64)));
}

#[test]
fn spec_policies_and_failure_rate() {
    let (l64, l32) = (W64::LAYOUT, W32::LAYOUT);
    SPEC.says(&format!(
        "with k saturated at the trips field's maximum ({} for `W64`, {} for `W32`)",
        l64.max_trips(),
        l32.max_trips()
    ));
    SPEC.says(&format!(
        "`b` the trip field's width ({} for `W64`, {} for `W32`)",
        l64.trips_bits, l32.trips_bits
    ));
    let (b64, b32) = (
        BucketLayout::for_bits(l64.word_bits),
        BucketLayout::for_bits(l32.word_bits),
    );
    // The bucket's largest count is the largest minimum of calls accepted.
    assert!(
        Rate::new()
            .minimum_calls(b64.max_count() as u32)
            .check::<W64, 8>()
            .is_ok()
    );
    assert!(
        Rate::new()
            .minimum_calls(b64.max_count() as u32 + 1)
            .check::<W64, 8>()
            .is_err()
    );
    assert!(
        Rate::new()
            .minimum_calls(b32.max_count() as u32)
            .check::<W32, 8>()
            .is_ok()
    );
    assert!(
        Rate::new()
            .minimum_calls(b32.max_count() as u32 + 1)
            .check::<W32, 8>()
            .is_err()
    );
    SPEC.says(&format!(
        "`minimum_calls` (1 to the bucket's largest count: {} for `W64`, {} for `W32`)",
        num(b64.max_count()),
        num(b32.max_count())
    ));
    SPEC.says(&format!(
        "stamped with the slice number modulo `2^{}` (`W64`) or `2^{}` (`W32`) and the `Closed` counter \
         modulo `2^{}` or `2^{}`: a bucket untouched for a multiple of `2^{}`/`2^{}` slices",
        b64.epoch_bits, b32.epoch_bits, b64.counter_bits, b32.counter_bits, b64.epoch_bits, b32.epoch_bits
    ));
    SPEC.says(&format!(
        "A slice with more calls than the bucket holds ({} or {}) halves both its counts",
        num(b64.max_count()),
        num(b32.max_count())
    ));
    DESIGN.says(&format!(
        "Buckets of their own hold {} calls per slice (W64) over up to 64 slices",
        num(b64.max_count())
    ));
}

#[test]
fn design_ranges_table() {
    let (w64, w32) = (figures::<W64>(), figures::<W32>());
    let page = &DESIGN_WORD;
    for (w, column) in [(&w64, 1), (&w32, 2)] {
        let l = &w.layout;
        page.cell(
            "`failure_threshold`",
            column,
            &format!("1 ..= {}", num(w.max_threshold)),
        );
        page.cell("time field", column, &format!("2^{} units", l.time_bits));
        assert_eq!(
            w.max_shift,
            l.max_shift(),
            "the largest horizon takes the largest shift"
        );
        page.cell(
            "time unit",
            column,
            &format!("2^s ticks, s = 0 ..= {}", w.max_shift),
        );
        page.cell(
            "backoff cap",
            column,
            &format!(
                "`open_for` ..= `open_for · {}`, and within the longest duration",
                pow2(w.max_doubling)
            ),
        );
        let period = u64::from(l.max_counter()) + 1;
        page.cell(
            "counter period (state changes)",
            column,
            &format!("{} = {}", pow2(period), num(period)),
        );
        // The trip count saturates at its largest value: one doubling fewer.
        assert_eq!(w.max_doubling, 1 << (l.max_trips() - 1));
        page.cell(
            "trips kept (saturating)",
            column,
            &format!(
                "{}, so at most {} doublings",
                l.max_trips(),
                l.max_trips() - 1
            ),
        );
    }
    page.cell(
        "s with the default horizon",
        1,
        &format!(
            "{} (1 µs ticks: ring {} µs = {}) for every duration up to {} ticks ({})",
            w64.shift,
            pow2(w64.ring),
            span(w64.ring, US, "h", 2),
            pow2(w64.keeps_shift),
            span(w64.keeps_shift, US, "h", 2)
        ),
    );
    page.cell(
        "s with the default horizon",
        2,
        &format!(
            "{} (1 kHz: {} ms units, ring {}); {} once the longest duration passes {} ticks ({}; {} ms units, ring {})",
            w32.shift,
            1u64 << w32.shift,
            span(w32.ring, KHZ, "min", 1),
            w32.next_shift,
            num(w32.keeps_shift),
            span(w32.keeps_shift, KHZ, "min", 1),
            1u64 << w32.next_shift,
            span(w32.next_ring, KHZ, "min", 1),
        ),
    );
    page.cell(
        "`open_for`, backoff cap, `probe_timeout`",
        1,
        &format!(
            "1 tick ..= {} ticks at shift s (half the ring less one unit's rounding), at most {}",
            longest_duration_formula::<W64>(),
            pow2(w64.longest)
        ),
    );
    page.cell(
        "`open_for`, backoff cap, `probe_timeout`",
        2,
        &format!(
            "1 tick ..= {} ticks, at most {}",
            longest_duration_formula::<W32>(),
            num(w32.longest)
        ),
    );
}

#[test]
fn design_time_in_units() {
    let (w64, w32) = (figures::<W64>(), figures::<W32>());
    let exact = valid::<W32>(Config::new().horizon(0));
    let kept_in_ticks = longest_at_shift::<W32>(Config::new().horizon(0), 0);
    assert_eq!(exact.time_shift(), 0);
    let page = &DESIGN_WORD;
    page.says(&format!(
        "Kept in ticks, a 1 kHz tick would wrap every {} and open times would be capped at {}",
        span(exact.ring(), KHZ, "s", 1),
        span(kept_in_ticks, KHZ, "s", 1)
    ));
    page.says(&format!(
        "({} ticks for W32 at 1 kHz, {} for W64 at 1 µs). For W32 the shift is at most {}",
        num(w32.horizon),
        num(w64.horizon),
        w32.max_shift
    ));
    page.says(&format!(
        "units of {} ms, or {} ms once the longest duration passes {} ticks ({}). On W64 at 1 µs nothing changes \
         (`s = {}` for every duration up to {} ticks, {}).",
        1u64 << w32.shift,
        1u64 << w32.next_shift,
        num(w32.keeps_shift),
        span(w32.keeps_shift, KHZ, "min", 1),
        w64.shift,
        pow2(w64.keeps_shift),
        span(w64.keeps_shift, US, "h", 2)
    ));
    page.says(&format!(
        "Figures: W32 at 1 kHz with `s = {}`, ring {}; W64 at 1 µs, ring {}.",
        w32.shift,
        span(w32.ring, KHZ, "min", 1),
        span(w64.ring, US, "h", 2)
    ));
    page.says(&format!(
        "(`ValidConfig::longest_hint`: {} ticks = {} on `W64` at 1 µs, {} ticks = {} on `W32` at 1 kHz with the \
         default horizon)",
        pow2(w64.hint),
        span(w64.hint, US, "h", 2),
        pow2(w32.hint),
        span(w32.hint, KHZ, "min", 1)
    ));
}

#[test]
fn design_fast_paths() {
    let (l64, l32) = (W64::LAYOUT, W32::LAYOUT);
    DESIGN.says(&format!(
        "the word's counter field, left where the word holds it (bits {}–{} in `W64`, {}–{} in `W32`)",
        TAG_BITS,
        TAG_BITS + l64.counter_bits - 1,
        TAG_BITS,
        TAG_BITS + l32.counter_bits - 1
    ));
    // Bit 31 of a W64 word, where a probe flag in the stamp would sit, is a
    // failure-count bit: that many failures set it.
    let l = W64::LAYOUT;
    let failures_lo = TAG_BITS + l.counter_bits;
    assert!(failures_lo <= 31 && 31 < failures_lo + l.failure_bits);
    DESIGN.says(&format!(
        "would match a `Closed` word that has {} failures under its counter",
        1u64 << (31 - failures_lo)
    ));
}

#[test]
fn embedded_tick_table() {
    let (w64, w32) = (figures::<W64>(), figures::<W32>());
    let exact = valid::<W32>(Config::new().horizon(0));
    let kept_in_ticks = longest_at_shift::<W32>(Config::new().horizon(0), 0);
    let page = &EMBEDDED;
    let row = page.row("`W32`, 1 kHz");
    assert_eq!(
        row[2],
        format!(
            "{} ms (`s` = {}); {} ms once the longest duration passes {} ticks ({})",
            1u64 << w32.shift,
            w32.shift,
            1u64 << w32.next_shift,
            num(w32.keeps_shift),
            span(w32.keeps_shift, KHZ, "min", 1)
        ),
        "{}: the unit of W32 at 1 kHz",
        page.path
    );
    assert_eq!(
        row[3],
        format!(
            "{} ({} with {} ms units)",
            span(w32.ring, KHZ, "min", 1),
            span(w32.next_ring, KHZ, "min", 1),
            1u64 << w32.next_shift
        ),
        "{}: the ring of W32 at 1 kHz",
        page.path
    );
    page.cell(
        "`W32`, 1 kHz, `.horizon(0)`",
        2,
        &format!("1 ms while the durations fit {} ticks", pow2(kept_in_ticks)),
    );
    page.cell(
        "`W32`, 1 kHz, `.horizon(0)`",
        3,
        &span(exact.ring(), KHZ, "s", 1),
    );
    page.cell(
        "`W32`, 1 kHz, `.horizon(0)`",
        4,
        &format!("up to {} in whole ticks", span(kept_in_ticks, KHZ, "s", 1)),
    );
    page.cell(
        "`W64`, 1 µs (`tripword-std`)",
        2,
        &format!(
            "1 µs (`s` = {}) for every duration up to {} ticks ({})",
            w64.shift,
            pow2(w64.keeps_shift),
            span(w64.keeps_shift, US, "h", 2)
        ),
    );
    page.cell(
        "`W64`, 1 µs (`tripword-std`)",
        3,
        &span(w64.ring, US, "h", 2),
    );
    page.says(&format!(
        "(`ValidConfig::ring()`, at most {} ticks for `W32`)",
        pow2(w32.max_ring)
    ));
    page.says(&format!(
        "on `W64` ({}-bit time field)",
        w64.layout.time_bits
    ));
    page.says(&format!(
        "W32's default horizon ({} ticks) would be {}",
        num(w32.horizon),
        span(w32.horizon, US, "s", 1)
    ));
    page.says(&format!(
        "(whole microseconds, a ring of {})",
        span(w64.ring, US, "h", 2)
    ));
    let (p64, p32) = (
        u64::from(w64.layout.max_counter()) + 1,
        u64::from(w32.layout.max_counter()) + 1,
    );
    page.says(&format!(
        "(thresholds to {}, durations to {} ticks in whole ticks at the default horizon, a counter period of {} \
         changes)",
        num(w64.max_threshold),
        pow2(w64.keeps_shift),
        num(p64)
    ));
    page.says(&format!("a {}× longer counter period", num(p64 / p32)));
}
