//! The scripts and the round trips of the fleet's protocol, as values:
//! what each sends and how its reply reads, with no I/O. The blocking
//! driver (`super::remote`) and the async one (`super::aio`) send the same
//! steps, as the core's `cell::Update` is stepped by `update` and
//! `update_async`.
//!
//! Every script reads the word under its key and the server's `TIME` read
//! after the `GET`, atomically.

mod lua;
#[cfg(test)]
mod tests;

use lua::Lua;
pub(crate) use lua::{CAS, CLAIM, LOAD, LOAD_MANY, PUBLISH_CONFIG, QUORUM_TRIP, VOTE};
use redis::{Cmd, FromRedisValue, Pipeline, RedisError, Value};
use std::io;
use std::sync::LazyLock;
use std::time::Duration;

/// The word a value that is not a canonical decimal `u64` (or a key of
/// another type) reads as: `ForcedOpen` (tag 4) with every payload bit set,
/// which no state is (the recovery states' tags 6 and 7 hold every
/// pattern), so the kit repairs it (spec I8) with the compare-and-set below
/// replacing whatever is there. The scripts send it as
/// `18446744073709551612`.
pub(crate) const CORRUPT: u64 = u64::MAX - 3;

/// Parses a word as the scripts send it; anything else (which they never
/// send) reads as corrupt.
pub(crate) fn parse_word(s: &str) -> u64 {
    s.parse().unwrap_or(CORRUPT)
}

/// Parses a word the scripts read: the word, and whether the key was
/// missing (then the word is the one the caller said a missing key reads
/// as, sent back with an `m` before it).
pub(crate) fn parse_read(s: &str) -> (u64, bool) {
    match s.strip_prefix('m') {
        Some(missing) => (parse_word(missing), true),
        None => (parse_word(s), false),
    }
}

/// Parses the server time the scripts send (microseconds, decimal).
pub(crate) fn parse_time(s: &str) -> Result<u64, RedisError> {
    s.parse().map_err(|_| {
        RedisError::from(io::Error::new(
            io::ErrorKind::InvalidData,
            "tripword-redis: unreadable server time",
        ))
    })
}

/// A published change: `"word micros"`.
pub(crate) fn parse_published(payload: &str) -> Option<(u64, u64)> {
    let (word, time) = payload.split_once(' ')?;
    Some((word.parse().ok()?, time.parse().ok()?))
}

/// The error a command gets when the operation's deadline has passed.
pub(crate) fn deadline_passed() -> RedisError {
    RedisError::from(io::Error::new(
        io::ErrorKind::TimedOut,
        "tripword-redis: operation timeout reached",
    ))
}

/// The `WAIT` timeout for `left` remaining: whole milliseconds, at least 1
/// (`WAIT n 0` would block for good).
pub(crate) fn wait_millis(left: Duration) -> u64 {
    u64::try_from(left.as_millis()).unwrap_or(u64::MAX).max(1)
}

/// The error of a change that fewer replicas than asked acknowledged.
pub(crate) fn unacknowledged(acked: u64, wanted: u32) -> RedisError {
    RedisError::from(io::Error::new(
        io::ErrorKind::TimedOut,
        format!("tripword-redis: the change reached {acked} of the {wanted} replicas asked for"),
    ))
}

fn malformed() -> RedisError {
    RedisError::from(io::Error::new(
        io::ErrorKind::InvalidData,
        "tripword-redis: a script and WAIT got an unexpected reply",
    ))
}

/// The error of a trip whose script the server still lacks after loading
/// it.
pub(crate) fn script_lost() -> RedisError {
    RedisError::from(io::Error::new(
        io::ErrorKind::InvalidData,
        "tripword-redis: the server lost the script again as it was loaded",
    ))
}

/// Whether a pipeline's first reply says the script is not in the server's
/// cache (a restarted or promoted server).
fn no_script(replies: &[Value]) -> bool {
    matches!(
        replies.first(),
        Some(Value::ServerError(e)) if e.kind() == Some(redis::ServerErrorKind::NoScript)
    )
}

/// A word as a script read it: the word, whether the key was missing
/// (then the word is the caller's stand-in), and the server time read
/// after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Read {
    pub(crate) word: u64,
    pub(crate) missing: bool,
    pub(crate) now: u64,
}

/// A compare-and-set's reply: whether it swapped, and the word the key
/// holds after (the new one when it swapped) as [`Read`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Swapped {
    pub(crate) swapped: bool,
    pub(crate) read: Read,
}

/// A reply of [`VOTE`] or [`QUORUM_TRIP`]: the word under the key and the
/// server time read after it, the live votes, and whether the trip was
/// stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Ballot {
    pub(crate) read: Read,
    pub(crate) votes: u64,
    pub(crate) stored: bool,
}

/// The words of a refresh (each with whether its key was missing), and
/// the server time read after them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Many {
    pub(crate) words: Vec<(u64, bool)>,
    pub(crate) now: u64,
}

/// What a driver sends for a [`Trip`].
pub(crate) enum Request {
    /// The script alone.
    One(Cmd),
    /// The script and `WAIT`, in one round trip (a pipeline).
    Waited(Pipeline),
}

/// What a [`Trip`]'s reply calls for.
#[derive(Debug)]
pub(crate) enum Answer<T> {
    /// The script's reply read, and how many replicas acknowledged (`None`
    /// when none must); or the error the trip ends with.
    Done(Result<(T, Option<u64>), RedisError>),
    /// The server does not have the script (`NOSCRIPT`: restarted, or a
    /// replica promoted): send [`Trip::load`], then the trip again.
    Load,
}

/// One round trip of the protocol as a value: a script with its keys and
/// arguments, the replicas that must acknowledge it (`WAIT` in the same
/// round trip), and how its reply reads. Sans-IO: [`request`](Self::request)
/// says what to send, [`answer`](Self::answer) reads what came back; a
/// driver sends and receives. Each is sent at most twice: once more after
/// a `NOSCRIPT` and a load.
pub(crate) struct Trip<T> {
    lua: &'static Lua,
    keys: Vec<String>,
    args: Vec<String>,
    replicas: u32,
    read: fn(Value) -> Result<T, RedisError>,
}

impl<T> Trip<T> {
    fn new(lua: &'static LazyLock<Lua>, read: fn(Value) -> Result<T, RedisError>) -> Trip<T> {
        Trip {
            lua: LazyLock::force(lua),
            keys: Vec::new(),
            args: Vec::new(),
            replicas: 0,
            read,
        }
    }

    fn key(mut self, key: &str) -> Self {
        self.keys.push(key.to_owned());
        self
    }

    fn arg(mut self, arg: impl ToString) -> Self {
        self.args.push(arg.to_string());
        self
    }

    /// The trip, counted only once `replicas` replicas acknowledged it.
    pub(crate) fn acknowledged_by(mut self, replicas: u32) -> Self {
        self.replicas = replicas;
        self
    }

    /// The `EVALSHA` of the script (what [`request`](Self::request) sends
    /// when no replica must acknowledge it).
    pub(crate) fn eval(&self) -> Cmd {
        let mut cmd = redis::cmd("EVALSHA");
        cmd.arg(self.lua.hash())
            .arg(self.keys.len())
            .arg(&self.keys)
            .arg(&self.args);
        cmd
    }

    /// What to send, `left` remaining of the operation (`WAIT`'s timeout).
    pub(crate) fn request(&self, left: Duration) -> Request {
        if self.replicas == 0 {
            return Request::One(self.eval());
        }
        let mut pipe = redis::pipe();
        pipe.ignore_errors()
            .add_command(self.eval())
            .cmd("WAIT")
            .arg(self.replicas)
            .arg(wait_millis(left));
        Request::Waited(pipe)
    }

    /// What loads the script, after [`Answer::Load`].
    pub(crate) fn load(&self) -> Cmd {
        self.lua.load()
    }

    /// Reads what the request got: the replies of [`Request::Waited`], or
    /// the one of [`Request::One`] (a vector of one), or the error that
    /// came instead.
    pub(crate) fn answer(&self, sent: Result<Vec<Value>, RedisError>) -> Answer<T> {
        let replies = match sent {
            Ok(replies) => replies,
            Err(e) if e.kind() == redis::ErrorKind::Server(redis::ServerErrorKind::NoScript) => {
                return Answer::Load;
            }
            Err(e) => return Answer::Done(Err(e)),
        };
        if no_script(&replies) {
            return Answer::Load;
        }
        if self.replicas == 0 {
            let Ok([reply]) = <[Value; 1]>::try_from(replies) else {
                return Answer::Done(Err(malformed()));
            };
            return Answer::Done(self.reply(reply).map(|v| (v, None)));
        }
        let Ok([script, wait]) = <[Value; 2]>::try_from(replies) else {
            return Answer::Done(Err(malformed()));
        };
        let acked = match wait {
            Value::ServerError(e) => return Answer::Done(Err(e.into())),
            Value::Int(n) => match u64::try_from(n) {
                Ok(n) => n,
                Err(_) => return Answer::Done(Err(malformed())),
            },
            _ => return Answer::Done(Err(malformed())),
        };
        Answer::Done(self.reply(script).map(|v| (v, Some(acked))))
    }

    fn reply(&self, reply: Value) -> Result<T, RedisError> {
        match reply {
            Value::ServerError(e) => Err(e.into()),
            v => (self.read)(v),
        }
    }
}

/// A reply's parts as the scripts send them.
fn parts<R: FromRedisValue>(v: Value) -> Result<R, RedisError> {
    Ok(redis::from_redis_value(v)?)
}

/// A word and the time read after it, as the scripts send them.
fn read(word: &str, now: &str) -> Result<Read, RedisError> {
    let (word, missing) = parse_read(word);
    Ok(Read {
        word,
        missing,
        now: parse_time(now)?,
    })
}

/// The word under `key` (a missing key read as `missing`) and the server
/// time read after it ([`LOAD`]).
pub(crate) fn fetch(key: &str, missing: u64) -> Trip<Read> {
    Trip::new(&LOAD, |v| {
        let (word, now): (String, String) = parts(v)?;
        read(&word, &now)
    })
    .key(key)
    .arg(missing)
}

/// The words under `keys`, each with what its missing key reads as, and
/// the server time read after them ([`LOAD_MANY`]).
pub(crate) fn fetch_many(keys: &[(&str, u64)]) -> Trip<Many> {
    let mut trip = Trip::new(&LOAD_MANY, |v| many(parts(v)?));
    for (key, _) in keys {
        trip = trip.key(key);
    }
    for (_, missing) in keys {
        trip = trip.arg(missing);
    }
    trip
}

/// A [`LOAD_MANY`] reply: the words, the server time last.
pub(crate) fn many(mut reply: Vec<String>) -> Result<Many, RedisError> {
    let now = parse_time(&reply.pop().unwrap_or_default())?;
    Ok(Many {
        words: reply.iter().map(|w| parse_read(w)).collect(),
        now,
    })
}

/// Where a compare-and-set publishes the word it stored: the channel
/// (none when empty) and the command (`PUBLISH`, or `SPUBLISH` on a
/// cluster's sharded channels).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Publish<'a> {
    pub(crate) channel: &'a str,
    pub(crate) command: &'static str,
}

/// `new` in place of `current` under `key` ([`CAS`]); a missing key holds
/// `missing`.
pub(crate) fn cas(
    key: &str,
    current: u64,
    new: u64,
    publish: Publish<'_>,
    missing: u64,
) -> Trip<Swapped> {
    Trip::new(&CAS, |v| {
        let (swapped, word, now): (i64, String, String) = parts(v)?;
        Ok(Swapped {
            swapped: swapped == 1,
            read: read(&word, &now)?,
        })
    })
    .key(key)
    .arg(current)
    .arg(new)
    .arg(publish.channel)
    .arg(missing)
    .arg(publish.command)
}

/// The fleet's config fingerprint under `key`, claimed with `ours` if
/// there is none ([`CLAIM`]).
pub(crate) fn claim(key: &str, ours: &str) -> Trip<String> {
    Trip::new(&CLAIM, parts).key(key).arg(ours)
}

/// `ours` published as the fleet's fingerprint under `key`
/// ([`PUBLISH_CONFIG`]); what is stored after.
pub(crate) fn publish_config(key: &str, ours: &str) -> Trip<String> {
    Trip::new(&PUBLISH_CONFIG, parts).key(key).arg(ours)
}

/// A vote as `voter` under `votes` for tripping the word under `key`
/// ([`VOTE`]).
pub(crate) fn vote(key: &str, votes: &str, voter: &str, window: u64, missing: u64) -> Trip<Ballot> {
    Trip::new(&VOTE, |v| {
        let (word, now, votes): (String, String, u64) = parts(v)?;
        Ok(Ballot {
            read: read(&word, &now)?,
            votes,
            stored: false,
        })
    })
    .key(key)
    .key(votes)
    .arg(voter)
    .arg(window)
    .arg(missing)
}

/// The quorum's trip of the word under `key` from `expected` to `new`
/// ([`QUORUM_TRIP`]).
#[allow(clippy::too_many_arguments)]
pub(crate) fn quorum_trip(
    key: &str,
    votes: &str,
    expected: u64,
    new: u64,
    publish: Publish<'_>,
    missing: u64,
    window: u64,
    quorum: u32,
) -> Trip<Ballot> {
    Trip::new(&QUORUM_TRIP, |v| {
        let (swapped, word, now, votes): (i64, String, String, u64) = parts(v)?;
        Ok(Ballot {
            read: read(&word, &now)?,
            votes,
            stored: swapped == 1,
        })
    })
    .key(key)
    .key(votes)
    .arg(expected)
    .arg(new)
    .arg(publish.channel)
    .arg(missing)
    .arg(window)
    .arg(quorum)
    .arg(publish.command)
}
