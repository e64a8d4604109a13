//! The watcher on one Redis (or the primary the sentinels name): one
//! pattern subscription, `tripword:*`, on which every compare-and-set of
//! every breaker publishes the word it stored.

use super::pace::{End, SLICE};
use crate::transport::CHANNEL_PREFIX;
use crate::transport::hub::Hub;
use crate::transport::script::parse_published;
use std::sync::Weak;
use std::time::{Duration, Instant};

pub(crate) fn subscribed(weak: &Weak<Hub>) -> End {
    match subscribe(weak) {
        Ok(end) | Err(end) => end,
    }
}

fn subscribe(weak: &Weak<Hub>) -> Result<End, End> {
    let hub = weak.upgrade().ok_or(End::Gone)?;
    let t = hub.timing;
    let switches = hub.switches();
    let mut con = hub.connect(Instant::now() + t.op_timeout)?;
    con.set_read_timeout(Some(t.op_timeout))?;
    con.set_write_timeout(Some(t.op_timeout))?;
    let mut sub = con.as_pubsub();
    sub.psubscribe(format!("{CHANNEL_PREFIX}*"))?;
    // Subscribed: every change from now on is delivered. Read the words
    // once for the changes made before.
    hub.refresh_all()?;
    drop(hub);
    let mut next = Instant::now() + t.refresh;
    loop {
        let hub = weak.upgrade().ok_or(End::Gone)?;
        if hub.switches() != switches {
            return Err(End::Switched);
        }
        let now = Instant::now();
        if now >= next {
            hub.refresh_all()?;
            next = Instant::now() + t.refresh;
            continue;
        }
        drop(hub);
        // Wake for the next refresh, or every slice to notice the hub went.
        let wait = (next - now).clamp(Duration::from_millis(1), SLICE);
        sub.set_read_timeout(Some(wait))?;
        match sub.get_message() {
            Ok(msg) => {
                let payload: Result<String, _> = msg.get_payload();
                let Some((word, time)) = payload.ok().as_deref().and_then(parse_published) else {
                    continue;
                };
                let hub = weak.upgrade().ok_or(End::Gone)?;
                for member in hub.on_channel(msg.get_channel_name()) {
                    member.published(word, time);
                }
            }
            Err(e) if e.is_timeout() => {}
            Err(e) => return Err(e.into()),
        }
    }
}
