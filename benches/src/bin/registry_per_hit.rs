//! Makes `HITS` lookups of existing keys in `tripword_std::Registry`
//! (`with`, or `local`: through a `Registry::local` handle) or in a `RwLock<HashMap>` with the same hasher (`rwlock`), 64
//! keys round robin by `&str`, for an instruction count that does not depend
//! on how busy the machine is (valgrind's cachegrind, as
//! `benches/per-call.sh` does):
//!
//! ```text
//! for m in with rwlock; do for n in 0 100000; do
//!   valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
//!     target/release/registry-per-hit $m $n 2>&1 | grep 'I *refs'
//! done; done
//! ```
//!
//! The difference of the two counts divided by `HITS` is the cost of one
//! hit in instructions. It does not weigh them: the `RwLock`'s two atomic
//! read-modify-writes count as two, and the registry's hit has none.
//!
//! A third argument runs the lookups on that many threads at once (each
//! makes `HITS`), for CPU time per hit under `perf stat -e task-clock`,
//! which does not count the time a thread was descheduled (on a machine
//! shared with other builds, wall time does).

use std::collections::HashMap;
use std::hint::black_box;
use std::sync::{Arc, RwLock};

use tripword::{Breaker, Config, W64};
use tripword_std::{MonotonicClock, Registry};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(mode), Some(hits)) = (args.first(), args.get(1).and_then(|n| n.parse().ok())) else {
        eprintln!("usage: registry-per-hit with|local|rwlock HITS [THREADS]");
        std::process::exit(2);
    };
    let hits: usize = hits;
    let threads: usize = args.get(2).and_then(|n| n.parse().ok()).unwrap_or(1);
    let keys: Vec<String> = (0..64).map(|i| format!("host-{i}.internal:443")).collect();
    let config = Config::new().check::<W64>().expect("default config");
    let registry: Registry<String> =
        Registry::new(move |_: &String| Breaker::from_parts(config, MonotonicClock, ()));
    let mut map: HashMap<String, Arc<Breaker<MonotonicClock, W64>>, foldhash::fast::RandomState> =
        HashMap::default();
    for k in &keys {
        registry.with(k.as_str(), |_| ());
        map.insert(
            k.clone(),
            Arc::new(Breaker::from_parts(config, MonotonicClock, ())),
        );
    }
    let map = RwLock::new(map);
    if !["with", "local", "rwlock"].contains(&mode.as_str()) {
        eprintln!("unknown mode {mode}");
        std::process::exit(2);
    }
    let lookups = || {
        if mode == "local" {
            let mut local = registry.local();
            for i in 0..hits {
                let key = keys[i % 64].as_str();
                local.with(black_box(key), |e| {
                    black_box(std::ptr::from_ref(e.breaker()))
                });
            }
        } else if mode == "with" {
            for i in 0..hits {
                let key = keys[i % 64].as_str();
                registry.with(black_box(key), |e| {
                    black_box(std::ptr::from_ref(e.breaker()))
                });
            }
        } else {
            for i in 0..hits {
                let key = keys[i % 64].as_str();
                let guard = map.read().unwrap_or_else(|e| e.into_inner());
                black_box(guard.get(black_box(key)).map(Arc::as_ptr));
            }
        }
    };
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(lookups);
        }
    });
}
