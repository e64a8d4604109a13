//! SPEC I9, checked on the running code: on a closed breaker, admission and
//! a success release never write the breaker's memory and never read the
//! clock.
//!
//! `no-store-probe` runs closed calls, then failure calls, on `static`
//! breakers between markers; valgrind's `lackey` tool traces every load and
//! store the process makes, with its address. This test counts the accesses
//! that fall on the breakers and on the clock in each window. The failure
//! windows are the control: there every call must write (the failure count
//! is a compare-and-swap), which shows the trace does see the writes the
//! closed windows lack.
//!
//! Skipped (with a message) where valgrind is not installed.

use std::collections::HashMap;
use std::process::Command;

#[derive(Clone, Copy, Debug)]
struct Range {
    start: u64,
    len: u64,
}

impl Range {
    fn hits(&self, addr: u64, size: u64) -> bool {
        addr < self.start + self.len && self.start < addr + size
    }
}

#[derive(Debug, Default, Clone, Copy)]
struct Counts {
    loads: u64,
    writes: u64,
}

fn parse_hex(s: &str) -> u64 {
    u64::from_str_radix(s.trim_start_matches("0x"), 16).expect("hex address")
}

#[test]
#[cfg_attr(
    not(tripword_valgrind),
    ignore = "needs valgrind on PATH (apt-get install valgrind)"
)]
fn closed_path_never_writes_the_word_and_never_reads_the_clock() {
    let calls = 50u64;
    let log = std::env::temp_dir().join(format!("tripword-lackey-{}.log", std::process::id()));
    let out = Command::new("valgrind")
        .arg("--tool=lackey")
        .arg("--trace-mem=yes")
        .arg(format!("--log-file={}", log.display()))
        .arg(env!("CARGO_BIN_EXE_no-store-probe"))
        .arg(calls.to_string())
        .output()
        .expect("run valgrind");
    assert!(out.status.success(), "valgrind failed: {out:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let mut ranges = HashMap::new();
    for line in stdout.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() == 3 {
            ranges.insert(
                f[0].to_string(),
                Range {
                    start: parse_hex(f[1]),
                    len: f[2].parse().expect("size"),
                },
            );
        }
    }
    let watched = ["breaker64", "breaker32", "clock"];
    let mark = ranges["mark"];
    let trace = std::fs::read_to_string(&log).expect("lackey log");
    let _ = std::fs::remove_file(&log);

    // windows[w][name]: accesses in window w (1..=4) to `name`.
    let mut window = 0usize;
    let mut windows = vec![HashMap::<&str, Counts>::new(); 6];
    for line in trace.lines() {
        let Some(rest) = line.strip_prefix(' ') else {
            continue; // instruction fetches and valgrind's own messages
        };
        let mut parts = rest.split_whitespace();
        let (Some(kind), Some(access)) = (parts.next(), parts.next()) else {
            continue;
        };
        let Some((addr, size)) = access.split_once(',') else {
            continue;
        };
        let (addr, size) = (parse_hex(addr), size.parse::<u64>().unwrap_or(1));
        let write = matches!(kind, "S" | "M");
        if write && mark.hits(addr, size) {
            window += 1;
            continue;
        }
        if window == 0 || window >= windows.len() {
            continue;
        }
        for name in watched {
            if ranges[name].hits(addr, size) {
                let c = windows[window].entry(name).or_default();
                if write {
                    c.writes += 1;
                }
                if matches!(kind, "L" | "M") {
                    c.loads += 1;
                }
            }
        }
    }
    assert_eq!(window, 5, "expected 5 markers in the trace");
    let get = |w: usize, name: &str| windows[w].get(name).copied().unwrap_or_default();
    for (w, name) in [(1, "breaker64"), (2, "breaker32")] {
        let b = get(w, name);
        let clock = get(w, "clock");
        eprintln!("closed window {name}: {b:?}, clock {clock:?} for {calls} calls");
        assert_eq!(b.writes, 0, "closed calls wrote to {name}");
        assert!(b.loads >= calls, "the trace should see the word's loads");
        assert_eq!(clock.loads + clock.writes, 0, "closed calls read the clock");
    }
    for (w, name) in [(3, "breaker64"), (4, "breaker32")] {
        let b = get(w, name);
        eprintln!("failure window {name}: {b:?} for {calls} calls");
        assert!(
            b.writes >= calls,
            "control: every failure call writes {name}"
        );
    }
}
