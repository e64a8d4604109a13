//! Every `W32` word against the reference model (see
//! `tripword_verification::every_word`).
//!
//! ```text
//! every_word [--config NAME|all] [--shard K/N] [--threads T] [--w64-fields]
//! ```
//!
//! Checks the words of shard `K` of `N` (default `0/1`: all `2^32`) under
//! each config named (default `all`), on `T` threads (default: every core),
//! and prints, per config, the words, the checks, the words per second and
//! the disagreements, the first few in full. `--w64-fields` checks the
//! `W64` boundary words instead (every config, the shard ignored). Exits
//! non-zero on any disagreement.

use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use tripword::{W32, W64};
use tripword_verification::every_word::{self, Checker, Tally, fields};

struct Args {
    config: String,
    shard: (u64, u64),
    threads: usize,
    w64: bool,
}

fn parse() -> Result<Args, String> {
    let mut a = Args {
        config: "all".into(),
        shard: (0, 1),
        threads: std::thread::available_parallelism().map_or(1, usize::from),
        w64: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = || it.next().ok_or(format!("{arg} needs a value"));
        match arg.as_str() {
            "--config" => a.config = value()?,
            "--shard" => {
                let v = value()?;
                let (k, n) = v.split_once('/').ok_or("--shard K/N")?;
                let k: u64 = k.parse().map_err(|_| "--shard K/N")?;
                let n: u64 = n.parse().map_err(|_| "--shard K/N")?;
                if n == 0 || k >= n || n > 1 << 32 {
                    return Err(format!("--shard {v}: need 0 <= K < N <= 2^32"));
                }
                a.shard = (k, n);
            }
            "--threads" => a.threads = value()?.parse().map_err(|_| "--threads T")?,
            "--w64-fields" => a.w64 = true,
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(a)
}

fn report(name: &str, what: &str, tally: &Tally, secs: f64) {
    println!(
        "every_word {name}: {what}: {} words, {} checks, {} disagreements, {:.1} s, {:.0} words/s",
        tally.words,
        tally.checks,
        tally.disagreements,
        secs,
        tally.words as f64 / secs.max(1e-9)
    );
    for d in &tally.first {
        println!("  {d}");
    }
}

fn main() -> ExitCode {
    let args = match parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("every_word: {e}");
            return ExitCode::from(2);
        }
    };
    let all = if args.w64 {
        fields::configs()
    } else {
        every_word::configs()
    };
    let chosen: Vec<_> = all
        .into_iter()
        .filter(|(n, _)| args.config == "all" || *n == args.config)
        .collect();
    if chosen.is_empty() {
        eprintln!("every_word: no config named {}", args.config);
        return ExitCode::from(2);
    }
    let mut bad = 0;
    for (name, config) in chosen {
        let started = Instant::now();
        let tally = if args.w64 {
            let checker = Checker::<W64>::new(name, config).expect("a valid config");
            let words = fields::words(&checker);
            let mut tally = Tally::default();
            for raw in words {
                checker.word(raw, &mut tally);
            }
            report(
                name,
                "W64 boundary words",
                &tally,
                started.elapsed().as_secs_f64(),
            );
            tally
        } else {
            let checker = Checker::<W32>::new(name, config).expect("a valid config");
            let (k, n) = args.shard;
            let (first, last) = every_word::shard(k, n, 32);
            let step = ((last - first) / 100).max(1 << 16);
            let mark = AtomicU64::new(step);
            let progress = |done: u64| {
                if done >= mark.load(Ordering::Relaxed) && done < last - first {
                    mark.fetch_add(step, Ordering::Relaxed);
                    let secs = started.elapsed().as_secs_f64();
                    eprintln!(
                        "every_word {name}: {done} of {} words, {:.0} words/s",
                        last - first,
                        done as f64 / secs.max(1e-9)
                    );
                }
            };
            let tally = every_word::run(&checker, first, last, args.threads, 1 << 12, &progress);
            let what = format!(
                "W32 shard {k}/{n} (words {first:#x}..{last:#x}, {} threads)",
                args.threads
            );
            report(name, &what, &tally, started.elapsed().as_secs_f64());
            tally
        };
        bad += tally.disagreements;
    }
    if bad == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
