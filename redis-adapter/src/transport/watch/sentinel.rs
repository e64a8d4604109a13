//! A failover is followed when the sentinels announce it: a thread per
//! hub holds a subscription to `+switch-master` on one sentinel, and on an
//! announcement for the service the hub drops every connection to the old
//! primary and the watcher subscribes again
//! (`Hub::switched`); the next operation
//! connects afresh, asking the sentinels, and reaches the new primary
//! without meeting an error on the old one (which, alive, would still
//! answer until Sentinel makes it a replica, a write there then lost).
//! When that subscription is lost, it is taken again on the next sentinel
//! that answers, every retry period, and the hub drops its connections
//! then too (an announcement may have been missed).
//!
//! A failover the announcement has not reached the hub for yet is noticed
//! by the errors it causes: the old primary is gone (its connections
//! fail), or it was made a replica (Sentinel closes its clients'
//! connections when it reconfigures it, and a write there fails with
//! `READONLY`). The failed operation falls back as on any error; the next
//! connect asks the sentinels again.

use super::pace::{SLICE, nap};
use crate::transport::hub::Hub;
use crate::transport::script::deadline_passed;
use crate::transport::sentinel::Sentinels;
use redis::RedisError;
use std::io;
use std::sync::{Arc, Weak};
use std::time::Duration;

/// The channel on which a sentinel announces a new primary: `<service>
/// <old-ip> <old-port> <new-ip> <new-port>`.
const SWITCH: &str = "+switch-master";

/// Starts the thread that follows the sentinels' announcements of a new
/// primary for `hub`, when it follows sentinels. It holds the hub weakly
/// and ends within [`SLICE`] of the hub's end.
pub(crate) fn spawn(hub: &Arc<Hub>) -> io::Result<()> {
    let Some(sentinels) = hub.sentinels.clone() else {
        return Ok(());
    };
    let weak = Arc::downgrade(hub);
    std::thread::Builder::new()
        .name("tripword-redis sentinel watcher".into())
        .spawn(move || announcements(&sentinels, &weak))?;
    Ok(())
}

/// Listens on one sentinel after another until the hub is gone.
fn announcements(sentinels: &Sentinels, hub: &Weak<Hub>) {
    let mut lost = false;
    loop {
        let Some(timing) = hub.upgrade().map(|h| h.timing) else {
            return;
        };
        if listen(sentinels, hub, timing.op_timeout, lost).is_ok() {
            return;
        }
        lost = true;
        if !nap(hub, timing.retry) {
            return;
        }
    }
}

/// Whether `payload`, a `+switch-master` message, is about `service`.
fn is_switch_of(payload: &str, service: &str) -> bool {
    payload.split(' ').next() == Some(service)
}

/// Subscribes to `+switch-master` on the first sentinel that answers
/// (each connect and setup reply within `timeout`) and tells the hub of
/// each announcement for the service. `Ok` when the hub is gone; the error
/// when the subscription fails or no sentinel answers. After a lost
/// subscription (`lost`), the hub drops its connections as soon as the
/// new one is taken: an announcement may have been missed meanwhile.
fn listen(
    sentinels: &Sentinels,
    weak: &Weak<Hub>,
    timeout: Duration,
    lost: bool,
) -> Result<(), RedisError> {
    let mut last = None;
    for i in sentinels.order() {
        let con = sentinels
            .tls
            .client(sentinels.nodes[i].clone())
            .and_then(|c| {
                let con = c.get_connection_with_timeout(timeout)?;
                con.set_read_timeout(Some(timeout))?;
                con.set_write_timeout(Some(timeout))?;
                Ok(con)
            });
        let mut con = match con {
            Ok(con) => con,
            Err(e) => {
                last = Some(e);
                continue;
            }
        };
        let mut sub = con.as_pubsub();
        if let Err(e) = sub.subscribe(SWITCH) {
            last = Some(e);
            continue;
        }
        if lost {
            let Some(hub) = weak.upgrade() else {
                return Ok(());
            };
            hub.switched();
        }
        loop {
            if weak.strong_count() == 0 {
                return Ok(());
            }
            sub.set_read_timeout(Some(SLICE))?;
            match sub.get_message() {
                Ok(msg) => {
                    let payload: String = msg.get_payload().unwrap_or_default();
                    if is_switch_of(&payload, &sentinels.service) {
                        let Some(hub) = weak.upgrade() else {
                            return Ok(());
                        };
                        hub.switched();
                    }
                }
                Err(e) if e.is_timeout() => {}
                Err(e) => return Err(e),
            }
        }
    }
    Err(last.unwrap_or_else(deadline_passed))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_announcement_is_about_its_service() {
        assert!(is_switch_of("svc 127.0.0.1 1 127.0.0.1 2", "svc"));
        assert!(!is_switch_of("svc2 127.0.0.1 1 127.0.0.1 2", "svc"));
        assert!(!is_switch_of("", "svc"));
    }
}
