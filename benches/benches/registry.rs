//! The registry's hit path: looking up an existing key's breaker
//! in `tripword_std::Registry`, at 1 and 2 threads, side by side with the
//! usual hand-made registry, a `RwLock<HashMap<String, Arc<Breaker>>>`.
//! Both maps use the same hasher (foldhash), so the difference is the lock.
//!
//! 64 keys (`host-N.internal:443`), looked up round robin by `&str`; every
//! worker walks the same keys. One iteration is one lookup on every worker;
//! the time is the wall time until the last worker finishes, so the figure
//! is the cost of one hit as a caller sees it. Workers are spawned once per
//! subject and released by a barrier.
//!
//! - `registry_with`: `Registry::with(key, |breaker| ..)`, no reference
//!   count touched;
//! - `registry_local`: `Local::with(key, ..)` on a handle from
//!   `Registry::local()` kept by the worker (no thread-local lookup);
//! - `registry_get`: `Registry::get(key)`, an `Arc` handle (one shared
//!   reference-count increment and decrement);
//! - `rwlock_hashmap`: `map.read().unwrap().get(key)`.
//!
//! `cargo bench -p tripword-benches --bench registry -- --warm-up-time 1 --measurement-time 3`

use std::collections::HashMap;
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier, RwLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use tripword::{Breaker, Config, W64};
use tripword_std::{MonotonicClock, Registry};

const KEYS: usize = 64;

fn keys() -> Vec<String> {
    (0..KEYS)
        .map(|i| format!("host-{i}.internal:443"))
        .collect()
}

/// `threads` workers, each running `lookups(worker, n)` when released.
struct Workers {
    start: Arc<Barrier>,
    end: Arc<Barrier>,
    n: Arc<AtomicU64>,
    quit: Arc<AtomicBool>,
    handles: Vec<JoinHandle<()>>,
}

impl Workers {
    fn new(threads: usize, lookups: Arc<dyn Fn(u64) + Send + Sync>) -> Workers {
        let start = Arc::new(Barrier::new(threads + 1));
        let end = Arc::new(Barrier::new(threads + 1));
        let n = Arc::new(AtomicU64::new(0));
        let quit = Arc::new(AtomicBool::new(false));
        let handles = (0..threads)
            .map(|_| {
                let (start, end, n, quit, lookups) = (
                    start.clone(),
                    end.clone(),
                    n.clone(),
                    quit.clone(),
                    lookups.clone(),
                );
                std::thread::spawn(move || {
                    loop {
                        start.wait();
                        if quit.load(Ordering::Relaxed) {
                            return;
                        }
                        lookups(n.load(Ordering::Relaxed));
                        end.wait();
                    }
                })
            })
            .collect();
        Workers {
            start,
            end,
            n,
            quit,
            handles,
        }
    }

    fn run(&self, iters: u64) -> Duration {
        self.n.store(iters, Ordering::Relaxed);
        let t0 = Instant::now();
        self.start.wait();
        self.end.wait();
        t0.elapsed()
    }
}

impl Drop for Workers {
    fn drop(&mut self) {
        self.quit.store(true, Ordering::Relaxed);
        self.start.wait();
        for h in self.handles.drain(..) {
            let _ = h.join();
        }
    }
}

type Plain = Breaker<MonotonicClock, W64>;

fn registry_hit(c: &mut Criterion) {
    let config = Config::new().check::<W64>().unwrap();
    let keys = Arc::new(keys());

    let registry: Arc<Registry<String>> = Arc::new(Registry::new(move |_: &String| {
        Plain::from_parts(config, MonotonicClock, ())
    }));
    for k in keys.iter() {
        registry.with(k.as_str(), |_| ());
    }
    let mut locked: HashMap<String, Arc<Plain>, foldhash::fast::RandomState> = HashMap::default();
    for k in keys.iter() {
        locked.insert(
            k.clone(),
            Arc::new(Breaker::from_parts(config, MonotonicClock, ())),
        );
    }
    let locked = Arc::new(RwLock::new(locked));

    let mut g = c.benchmark_group("registry_hit");
    for threads in [1, 2] {
        let (r, k) = (registry.clone(), keys.clone());
        let with: Arc<dyn Fn(u64) + Send + Sync> = Arc::new(move |n| {
            for i in 0..n {
                let key = k[i as usize % KEYS].as_str();
                r.with(black_box(key), |e| {
                    black_box(std::ptr::from_ref(e.breaker()))
                });
            }
        });
        let (r, k) = (registry.clone(), keys.clone());
        let local: Arc<dyn Fn(u64) + Send + Sync> = Arc::new(move |n| {
            let mut local = r.local();
            for i in 0..n {
                let key = k[i as usize % KEYS].as_str();
                local.with(black_box(key), |e| {
                    black_box(std::ptr::from_ref(e.breaker()))
                });
            }
        });
        let (r, k) = (registry.clone(), keys.clone());
        let get: Arc<dyn Fn(u64) + Send + Sync> = Arc::new(move |n| {
            for i in 0..n {
                let key = k[i as usize % KEYS].as_str();
                black_box(r.get(black_box(key)));
            }
        });
        let (m, k) = (locked.clone(), keys.clone());
        let rwlock: Arc<dyn Fn(u64) + Send + Sync> = Arc::new(move |n| {
            for i in 0..n {
                let key = k[i as usize % KEYS].as_str();
                let map = m.read().unwrap();
                black_box(map.get(black_box(key)).map(Arc::as_ptr));
            }
        });
        for (name, f) in [
            ("registry_with", with),
            ("registry_local", local),
            ("registry_get", get),
            ("rwlock_hashmap", rwlock),
        ] {
            let workers = Workers::new(threads, f);
            g.bench_function(format!("{name}/{threads}"), |b| {
                b.iter_custom(|iters| workers.run(iters))
            });
        }
    }
    g.finish();
}

criterion_group!(benches, registry_hit);
criterion_main!(benches);
