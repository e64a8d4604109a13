//! The watcher: one thread per instance that keeps the mirror fresh, so
//! that calls never wait on the network to learn of a remote change.
//!
//! - It subscribes to the key's channel (every compare-and-set publishes the
//!   word it stored), then reads the word once, so nothing published before
//!   the subscription is missed.
//! - It reads the word again every refresh period whatever pub/sub
//!   delivers: a message lost with a broken connection is made up for
//!   within one period, and the server-time sample is renewed.
//! - Any error (Redis unreachable, slow past the operation timeout, paused)
//!   switches the instance to its local breaker; the watcher retries every
//!   retry period and switches back on the first read that succeeds.

use crate::breaker::Inner;
use crate::remote::parse_published;
use redis::RedisError;
use std::sync::Arc;
use std::thread::{self, Thread};
use std::time::{Duration, Instant};

pub(crate) fn spawn(inner: Arc<Inner>) -> std::io::Result<Thread> {
    let handle = thread::Builder::new()
        .name("tripword-redis watcher".into())
        .spawn(move || run(&inner))?;
    Ok(handle.thread().clone())
}

fn run(inner: &Inner) {
    while !inner.stopped() {
        let result = if inner.timing.pubsub {
            subscribed(inner)
        } else {
            polled(inner)
        };
        if result.is_err() {
            inner.detach();
        }
        nap(inner, inner.timing.retry);
    }
}

/// Sleeps up to `d`, waking early when the instance is dropped.
fn nap(inner: &Inner, d: Duration) {
    let until = Instant::now() + d;
    while !inner.stopped() {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return;
        }
        thread::park_timeout(left);
    }
}

fn polled(inner: &Inner) -> Result<(), RedisError> {
    while !inner.stopped() {
        inner.refresh(false)?;
        nap(inner, inner.timing.refresh);
    }
    Ok(())
}

fn subscribed(inner: &Inner) -> Result<(), RedisError> {
    let t = inner.timing;
    let mut con = inner.connect(Instant::now() + t.op_timeout)?;
    con.set_read_timeout(Some(t.op_timeout))?;
    con.set_write_timeout(Some(t.op_timeout))?;
    let mut sub = con.as_pubsub();
    sub.subscribe(&inner.channel)?;
    // Subscribed: every change from now on is delivered. Read the word once
    // for the changes made before.
    inner.refresh(false)?;
    let mut next = Instant::now() + t.refresh;
    while !inner.stopped() {
        let now = Instant::now();
        if now >= next {
            inner.refresh(false)?;
            next = Instant::now() + t.refresh;
            continue;
        }
        // Wake for the next refresh, or every 100 ms to notice a drop.
        let wait = (next - now).clamp(Duration::from_millis(1), Duration::from_millis(100));
        sub.set_read_timeout(Some(wait))?;
        match sub.get_message() {
            Ok(msg) => {
                let payload: Result<String, _> = msg.get_payload();
                if let Some((word, time)) = payload.ok().as_deref().and_then(parse_published) {
                    inner.published(word, time);
                }
            }
            Err(e) if e.is_timeout() => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
