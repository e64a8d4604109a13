//! Following a primary through Redis Sentinel: on each connect (a pooled
//! connection, the watcher's subscription, the async connection) the
//! sentinels are asked which server is the primary of the service, and the
//! connection is kept only if that server says it is one (`ROLE`), as the
//! Sentinel client protocol asks.
//!
//! The `redis` crate's own sentinel client connects and reads with no
//! timeout; here every step is bounded by what is left of the operation
//! timeout, so a mute sentinel costs an operation no more than any other
//! mute server.
//!
//! The thread that follows the sentinels' announcements of a new primary
//! is the watcher's (`super::watch::sentinel`).

use super::script::deadline_passed;
use super::tls::{Tls, addr_like};
use redis::{Connection, ConnectionInfo, IntoConnectionInfo, RedisError, Value};
use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The sentinels of one service, and the settings (user, password,
/// database, protocol, TLS or not) of the connections to its primary.
pub(crate) struct Sentinels {
    pub(crate) nodes: Vec<ConnectionInfo>,
    pub(crate) service: String,
    /// The primary's settings; its address is replaced by the one the
    /// sentinels name.
    primary: ConnectionInfo,
    pub(crate) tls: Tls,
    /// The sentinel that answered last: asked first next time.
    first: AtomicUsize,
}

impl core::fmt::Debug for Sentinels {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Sentinels")
            .field("nodes", &self.nodes.len())
            .field("service", &self.service)
            .finish_non_exhaustive()
    }
}

fn invalid(what: &'static str) -> RedisError {
    RedisError::from(io::Error::new(io::ErrorKind::InvalidData, what))
}

/// Whether a `ROLE` reply is a primary's.
fn is_primary(role: &Value) -> bool {
    let Value::Array(parts) = role else {
        return false;
    };
    match parts.first() {
        Some(Value::BulkString(s)) => s == b"master",
        Some(Value::SimpleString(s)) => s == "master",
        _ => false,
    }
}

impl Sentinels {
    /// The sentinels at `urls` (`redis://host:port`, or `rediss://` over
    /// TLS), watching `service`; the primary is reached with the settings
    /// of `primary` (over TLS when its URL is `rediss://`), every TLS
    /// connection with `tls`'s certificates.
    pub(crate) fn new(
        urls: &[String],
        service: &str,
        primary: ConnectionInfo,
        tls: Tls,
    ) -> Result<Sentinels, RedisError> {
        if urls.is_empty() {
            return Err(RedisError::from(io::Error::new(
                io::ErrorKind::InvalidInput,
                "tripword-redis: no sentinel given",
            )));
        }
        let nodes = urls
            .iter()
            .map(|u| {
                let info = u.as_str().into_connection_info()?;
                let settings = info.redis_settings().clone().set_skip_set_lib_name();
                Ok(info.set_redis_settings(settings))
            })
            .collect::<Result<Vec<_>, RedisError>>()?;
        Ok(Sentinels {
            nodes,
            service: service.to_owned(),
            primary,
            tls,
            first: AtomicUsize::new(0),
        })
    }

    /// The connection info of the primary at `host:port`.
    fn primary_at(&self, host: String, port: u16) -> Result<ConnectionInfo, RedisError> {
        let addr = addr_like(self.primary.addr(), host, port);
        Ok(self.primary.clone().set_addr(addr))
    }

    /// The address the sentinel behind `con` gives for the service.
    fn ask(&self, con: &mut Connection) -> Result<(String, u16), RedisError> {
        let reply: Option<(String, String)> = redis::cmd("SENTINEL")
            .arg("GET-MASTER-ADDR-BY-NAME")
            .arg(&self.service)
            .query(con)?;
        let (host, port) = reply
            .ok_or_else(|| invalid("tripword-redis: the sentinel does not know the service"))?;
        let port = port
            .parse()
            .map_err(|_| invalid("tripword-redis: the sentinel gave an unreadable port"))?;
        Ok((host, port))
    }

    /// The sentinels in the order to ask them: the one that answered last
    /// first.
    pub(crate) fn order(&self) -> impl Iterator<Item = usize> + '_ {
        let first = self.first.load(Ordering::Relaxed);
        (0..self.nodes.len()).map(move |i| (first + i) % self.nodes.len())
    }

    /// The primary's address as the first sentinel that answers gives it.
    /// Each sentinel is given at most half of what is left, so that the
    /// connection to the primary has time too.
    fn locate(&self, deadline: Instant) -> Result<ConnectionInfo, RedisError> {
        let mut last = None;
        for i in self.order() {
            let left = deadline.saturating_duration_since(Instant::now());
            if left < Duration::from_micros(200) {
                break;
            }
            let slice = left / 2;
            let asked = self.tls.client(self.nodes[i].clone()).and_then(|c| {
                let mut con = c.get_connection_with_timeout(slice)?;
                con.set_read_timeout(Some(slice))?;
                con.set_write_timeout(Some(slice))?;
                self.ask(&mut con)
            });
            match asked {
                Ok((host, port)) => {
                    self.first.store(i, Ordering::Relaxed);
                    return self.primary_at(host, port);
                }
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(deadline_passed))
    }

    /// A connection to the primary, found and opened before `deadline`:
    /// `timeout(left)` is the connect timeout for `left` remaining (the
    /// hub's split between the connection's setup replies).
    pub(crate) fn connect(
        &self,
        deadline: Instant,
        timeout: impl Fn(Duration) -> Duration,
    ) -> Result<Connection, RedisError> {
        let info = self.locate(deadline)?;
        let left = deadline.saturating_duration_since(Instant::now());
        if left < Duration::from_micros(100) {
            return Err(deadline_passed());
        }
        let mut con = self
            .tls
            .client(info)?
            .get_connection_with_timeout(timeout(left))?;
        let left = deadline.saturating_duration_since(Instant::now());
        if left < Duration::from_micros(100) {
            return Err(deadline_passed());
        }
        con.set_read_timeout(Some(left))?;
        con.set_write_timeout(Some(left))?;
        let role: Value = redis::cmd("ROLE").query(&mut con)?;
        if !is_primary(&role) {
            return Err(invalid(
                "tripword-redis: the server the sentinels name is not a primary",
            ));
        }
        Ok(con)
    }

    /// The async form of [`connect`](Self::connect): a multiplexed
    /// connection to the primary. Bounded by the caller's timeout.
    #[cfg(feature = "tokio")]
    pub(crate) async fn connect_async(
        &self,
        config: &redis::AsyncConnectionConfig,
    ) -> Result<redis::aio::MultiplexedConnection, RedisError> {
        let mut last = None;
        let mut found = None;
        for i in self.order() {
            let asked = async {
                let mut con = self
                    .tls
                    .client(self.nodes[i].clone())?
                    .get_multiplexed_async_connection_with_config(config)
                    .await?;
                let reply: Option<(String, String)> = redis::cmd("SENTINEL")
                    .arg("GET-MASTER-ADDR-BY-NAME")
                    .arg(&self.service)
                    .query_async(&mut con)
                    .await?;
                let (host, port) = reply.ok_or_else(|| {
                    invalid("tripword-redis: the sentinel does not know the service")
                })?;
                let port: u16 = port
                    .parse()
                    .map_err(|_| invalid("tripword-redis: the sentinel gave an unreadable port"))?;
                Ok::<_, RedisError>((host, port))
            };
            match asked.await {
                Ok(address) => {
                    self.first.store(i, Ordering::Relaxed);
                    found = Some(address);
                    break;
                }
                Err(e) => last = Some(e),
            }
        }
        let Some((host, port)) = found else {
            return Err(last.unwrap_or_else(deadline_passed));
        };
        let mut con = self
            .tls
            .client(self.primary_at(host, port)?)?
            .get_multiplexed_async_connection_with_config(config)
            .await?;
        let role: Value = redis::cmd("ROLE").query_async(&mut con).await?;
        if !is_primary(&role) {
            return Err(invalid(
                "tripword-redis: the server the sentinels name is not a primary",
            ));
        }
        Ok(con)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_primary_says_master() {
        let reply = |first: &[u8]| Value::Array(vec![Value::BulkString(first.to_vec())]);
        assert!(is_primary(&reply(b"master")));
        assert!(!is_primary(&reply(b"slave")));
        assert!(!is_primary(&reply(b"sentinel")));
        assert!(!is_primary(&Value::Nil));
        assert!(!is_primary(&Value::Array(vec![])));
    }

    #[test]
    fn the_sentinel_that_answered_is_asked_first() {
        let urls: Vec<String> = (1..=3).map(|p| format!("redis://127.0.0.1:{p}/")).collect();
        let s = Sentinels::new(
            &urls,
            "svc",
            "redis://127.0.0.1:1/".into_connection_info().unwrap(),
            Tls::default(),
        )
        .unwrap();
        assert_eq!(s.order().collect::<Vec<_>>(), [0, 1, 2]);
        s.first.store(2, Ordering::Relaxed);
        assert_eq!(s.order().collect::<Vec<_>>(), [2, 0, 1]);
        assert!(
            Sentinels::new(
                &[],
                "svc",
                "redis://127.0.0.1:1/".into_connection_info().unwrap(),
                Tls::default()
            )
            .is_err()
        );
    }

    #[test]
    fn nobody_listening_is_an_error_within_the_deadline() {
        let s = Sentinels::new(
            &["redis://127.0.0.1:1/".to_owned()],
            "svc",
            "redis://127.0.0.1:1/".into_connection_info().unwrap(),
            Tls::default(),
        )
        .unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        assert!(s.connect(deadline, |left| left).is_err());
    }

    #[test]
    fn a_mute_sentinel_is_given_up_at_the_deadline() {
        // Accepts, reads, never answers.
        let listener = std::net::TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, 0)).unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            let mut held = Vec::new();
            for s in listener.incoming() {
                let Ok(s) = s else { return };
                held.push(s);
            }
        });
        let s = Sentinels::new(
            &[format!("redis://127.0.0.1:{port}/")],
            "svc",
            "redis://127.0.0.1:1/".into_connection_info().unwrap(),
            Tls::default(),
        )
        .unwrap();
        let deadline = Instant::now() + Duration::from_millis(300);
        let Err(e) = s.connect(deadline, |left| left) else {
            panic!("a mute sentinel named a primary");
        };
        assert!(e.is_timeout() || e.to_string().contains("timeout"), "{e}");
    }
}
