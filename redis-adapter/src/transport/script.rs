//! The scripts and the round trips of the fleet's protocol, as values:
//! what each sends and how its reply reads, with no I/O. The blocking
//! driver (`super::remote`) and the async one (`super::aio`) send the same
//! steps, as the core's `cell::Update` is stepped by `update` and
//! `update_async`.
//!
//! Every script reads the word under its key and the server's `TIME` read
//! after the `GET`, atomically.

use redis::{Cmd, FromRedisValue, Pipeline, RedisError, Script, Value};
use std::io;
use std::sync::LazyLock;
use std::time::Duration;

/// The word a value that is not a canonical decimal `u64` (or a key of
/// another type) reads as: tag 7, which no state uses, so the kit repairs it
/// (spec I8) with the compare-and-set below replacing whatever is there.
pub(crate) const CORRUPT: u64 = u64::MAX;

/// Shared by the scripts: the word under a key as a canonical decimal
/// string (`missing` for a missing key, the word the caller reads a lost
/// key as: see `Inner::missing_word`; `CORRUPT` for anything that is not
/// a canonical `u64`), and the server's time in microseconds, read after
/// the `GET`.
const PRELUDE: &str = r"
local function word(key, missing)
  local cur = redis.pcall('GET', key)
  if type(cur) == 'table' then return '18446744073709551615' end
  if not cur then return missing, true end
  if cur == '0' then return cur end
  if string.find(cur, '^[1-9]%d*$') and (#cur < 20 or (#cur == 20 and cur <= '18446744073709551615')) then
    return cur
  end
  return '18446744073709551615'
end
local function now()
  local t = redis.call('TIME')
  return t[1] .. string.format('%06d', tonumber(t[2]))
end
";

/// `{word, now}`; a missing key reads as `ARGV[1]`.
pub(crate) static LOAD: LazyLock<Lua> = LazyLock::new(|| {
    Lua::new(&format!(
        "{PRELUDE}
local w, gone = word(KEYS[1], ARGV[1])
if gone then w = 'm' .. w end
return {{w, now()}}"
    ))
});

/// `{word1, word2, ..., now}`: the words under `KEYS`, then the server's
/// time read after them (the watcher's refresh of many breakers in one
/// round trip); a missing `KEYS[i]` reads as `ARGV[i]`.
pub(crate) static LOAD_MANY: LazyLock<Lua> = LazyLock::new(|| {
    Lua::new(&format!(
        "{PRELUDE}
local out = {{}}
for i, key in ipairs(KEYS) do
  local w, gone = word(key, ARGV[i])
  if gone then w = 'm' .. w end
  out[i] = w
end
out[#KEYS + 1] = now()
return out"
    ))
});

/// The fleet's config fingerprint under `KEYS[1]`: stored as `ARGV[1]` if
/// there is none (the first instance to join claims it), returned as it
/// is.
pub(crate) static CLAIM: LazyLock<Lua> = LazyLock::new(|| {
    Lua::new(
        "local cur = redis.call('GET', KEYS[1])
if not cur then
  redis.call('SET', KEYS[1], ARGV[1])
  return ARGV[1]
end
return cur",
    )
});

/// Publishes the config fingerprint `ARGV[1]` under `KEYS[1]`, the key
/// [`CLAIM`] reads: stored as `<fingerprint> generation=<n>`, `n` one past
/// the generation stored (a plain fingerprint, as a first claim stores it,
/// is generation 0). Nothing changes when the stored fingerprint is
/// `ARGV[1]` already. Returns what is stored.
pub(crate) static PUBLISH_CONFIG: LazyLock<Lua> = LazyLock::new(|| {
    Lua::new(
        "local cur = redis.call('GET', KEYS[1])
local gen = 0
if cur then
  local base, g = string.match(cur, '^(.-) generation=(%d+)$')
  if base then gen = tonumber(g) else base = cur end
  if base == ARGV[1] then return cur end
end
local new = ARGV[1] .. ' generation=' .. (gen + 1)
redis.call('SET', KEYS[1], new)
return new",
    )
});

/// `{1, new, now}` when the key held `ARGV[1]` and now holds `ARGV[2]`
/// (published on channel `ARGV[3]` as `"new now"` unless it is empty, by
/// the command `ARGV[5]`, `PUBLISH` when absent: `SPUBLISH` in a cluster);
/// `{0, word, now}` with the word it holds otherwise; a missing key holds
/// `ARGV[4]`.
pub(crate) static CAS: LazyLock<Lua> = LazyLock::new(|| {
    Lua::new(&format!(
        "{PRELUDE}
local cur, gone = word(KEYS[1], ARGV[4])
local t = now()
if cur ~= ARGV[1] then
  if gone then cur = 'm' .. cur end
  return {{0, cur, t}}
end
redis.call('SET', KEYS[1], ARGV[2])
if ARGV[3] ~= '' then redis.call(ARGV[5] or 'PUBLISH', ARGV[3], ARGV[2] .. ' ' .. t) end
return {{1, ARGV[2], t}}"
    ))
});

/// Shared by the quorum's scripts: drops the votes under `votes` older
/// than `window` microseconds before `t` (the server time, a decimal
/// string: kept as a string, since Lua's numbers print 16 digits in
/// exponent form) and returns how many are left.
const VOTES: &str = r"
local function live(votes, t, window)
  local oldest = string.format('%.0f', tonumber(t) - tonumber(window))
  redis.call('ZREMRANGEBYSCORE', votes, '-inf', '(' .. oldest)
  return redis.call('ZCARD', votes)
end
";

/// A vote for tripping the shared word: `ARGV[1]` (the instance) is added
/// to the sorted set `KEYS[2]` with the server time as its score, votes
/// older than `ARGV[2]` microseconds are dropped, and the set expires a
/// second after the window unless voted in again. Replies
/// `{word, now, votes}`: the word under `KEYS[1]` (a missing key reads as
/// `ARGV[3]`, marked), the server time read after it, and the votes in the
/// window.
pub(crate) static VOTE: LazyLock<Lua> = LazyLock::new(|| {
    Lua::new(&format!(
        "{PRELUDE}{VOTES}
local w, gone = word(KEYS[1], ARGV[3])
if gone then w = 'm' .. w end
local t = now()
redis.call('ZADD', KEYS[2], t, ARGV[1])
local n = live(KEYS[2], t, ARGV[2])
redis.call('PEXPIRE', KEYS[2], string.format('%.0f', math.floor(tonumber(ARGV[2]) / 1000) + 1000))
return {{w, t, n}}"
    ))
});

/// The quorum's trip: the compare-and-set of [`CAS`] (`ARGV[1]` expected,
/// `ARGV[2]` new, channel `ARGV[3]`, a missing key holds `ARGV[4]`), made
/// only while at least `ARGV[6]` votes under `KEYS[2]` are within the
/// window of `ARGV[5]` microseconds; the votes are consumed by the trip.
/// Published with `ARGV[7]` (`PUBLISH`, or `SPUBLISH` on a cluster).
/// Replies `{swapped, word, now, votes}`.
pub(crate) static QUORUM_TRIP: LazyLock<Lua> = LazyLock::new(|| {
    Lua::new(&format!(
        "{PRELUDE}{VOTES}
local cur, gone = word(KEYS[1], ARGV[4])
local t = now()
local n = live(KEYS[2], t, ARGV[5])
if cur ~= ARGV[1] or n < tonumber(ARGV[6]) then
  if gone then cur = 'm' .. cur end
  return {{0, cur, t, n}}
end
redis.call('SET', KEYS[1], ARGV[2])
redis.call('DEL', KEYS[2])
if ARGV[3] ~= '' then redis.call(ARGV[7] or 'PUBLISH', ARGV[3], ARGV[2] .. ' ' .. t) end
return {{1, ARGV[2], t, n}}"
    ))
});

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

/// Whether a pipeline's first reply says the script is not in the server's
/// cache (a restarted or promoted server).
fn no_script(replies: &[Value]) -> bool {
    matches!(
        replies.first(),
        Some(Value::ServerError(e)) if e.kind() == Some(redis::ServerErrorKind::NoScript)
    )
}

/// A Lua script: its text (for `SCRIPT LOAD`) and its hash (for
/// `EVALSHA`).
pub(crate) struct Lua {
    code: String,
    script: Script,
}

impl Lua {
    fn new(code: &str) -> Lua {
        Lua {
            code: code.to_owned(),
            script: Script::new(code),
        }
    }

    /// The SHA1 `EVALSHA` names it by.
    pub(crate) fn hash(&self) -> &str {
        self.script.get_hash()
    }

    /// `SCRIPT LOAD` of it (on a cluster the `redis` crate sends it to
    /// every primary).
    pub(crate) fn load(&self) -> Cmd {
        let mut cmd = redis::cmd("SCRIPT");
        cmd.arg("LOAD").arg(&self.code);
        cmd
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn published_payloads_parse() {
        assert_eq!(
            parse_published("17 1764500000123456"),
            Some((17, 1_764_500_000_123_456))
        );
        assert_eq!(parse_published("17"), None);
        assert_eq!(parse_published("x 1"), None);
    }

    fn bulk(s: &str) -> Value {
        Value::BulkString(s.as_bytes().to_vec())
    }

    /// A server error as Redis sends it.
    fn server_error(resp: &str) -> redis::ServerError {
        match redis::parse_redis_value(resp.as_bytes()) {
            Ok(Value::ServerError(e)) => e,
            other => panic!("not an error reply: {other:?}"),
        }
    }

    fn no_script_error() -> redis::ServerError {
        server_error("-NOSCRIPT No matching script. Please use EVAL.\r\n")
    }

    /// The arguments of a command, as text.
    fn words(cmd: &Cmd) -> Vec<String> {
        cmd.args_iter()
            .map(|a| match a {
                redis::Arg::Simple(b) => String::from_utf8_lossy(b).into_owned(),
                _ => "<cursor>".to_owned(),
            })
            .collect()
    }

    fn done<T: core::fmt::Debug>(answer: Answer<T>) -> Result<(T, Option<u64>), RedisError> {
        match answer {
            Answer::Done(out) => out,
            Answer::Load => panic!("a load where a reply was due"),
        }
    }

    #[test]
    fn a_fetch_sends_evalsha_and_reads_the_word_and_the_time() {
        let trip = fetch("payments", 7);
        let Request::One(cmd) = trip.request(Duration::from_millis(5)) else {
            panic!("no WAIT without replicas");
        };
        assert_eq!(words(&cmd), ["EVALSHA", LOAD.hash(), "1", "payments", "7"]);
        let reply = Value::Array(vec![bulk("42"), bulk("1764500000123456")]);
        let (read, acked) = done(trip.answer(Ok(vec![reply]))).unwrap();
        assert_eq!(acked, None);
        assert_eq!(
            read,
            Read {
                word: 42,
                missing: false,
                now: 1_764_500_000_123_456
            }
        );
        let reply = Value::Array(vec![bulk("m7"), bulk("5")]);
        let (read, _) = done(trip.answer(Ok(vec![reply]))).unwrap();
        assert!(read.missing && read.word == 7 && read.now == 5);
        let reply = Value::Array(vec![bulk("1"), bulk("soon")]);
        assert!(
            done(trip.answer(Ok(vec![reply]))).is_err(),
            "an unreadable time"
        );
        assert!(done(trip.answer(Ok(vec![]))).is_err(), "no reply");
        assert!(
            done(trip.answer(Ok(vec![Value::Nil, Value::Nil]))).is_err(),
            "two replies to one command"
        );
    }

    #[test]
    fn a_missing_script_is_loaded_and_sent_again() {
        let trip = cas(
            "k",
            1,
            2,
            Publish {
                channel: "tripword:k",
                command: "SPUBLISH",
            },
            0,
        );
        let Request::One(cmd) = trip.request(Duration::from_millis(5)) else {
            panic!("no WAIT without replicas");
        };
        assert_eq!(
            words(&cmd),
            [
                "EVALSHA",
                CAS.hash(),
                "1",
                "k",
                "1",
                "2",
                "tripword:k",
                "0",
                "SPUBLISH"
            ]
        );
        let missing = RedisError::from(no_script_error());
        assert!(matches!(trip.answer(Err(missing)), Answer::Load));
        assert!(matches!(
            trip.answer(Ok(vec![Value::ServerError(no_script_error())])),
            Answer::Load
        ));
        assert_eq!(words(&trip.load())[..2], ["SCRIPT", "LOAD"]);
        assert!(words(&trip.load())[2].contains("redis.call('SET', KEYS[1], ARGV[2])"));
        let other = RedisError::from(io::Error::other("broken pipe"));
        assert!(
            done(trip.answer(Err(other))).is_err(),
            "other errors end it"
        );
        let reply = Value::Array(vec![Value::Int(1), bulk("2"), bulk("9")]);
        let (swapped, _) = done(trip.answer(Ok(vec![reply]))).unwrap();
        assert!(swapped.swapped && swapped.read.word == 2 && swapped.read.now == 9);
        let reply = Value::Array(vec![Value::Int(0), bulk("m5"), bulk("9")]);
        let (lost, _) = done(trip.answer(Ok(vec![reply]))).unwrap();
        assert!(!lost.swapped && lost.read.word == 5 && lost.read.missing);
    }

    #[test]
    fn a_change_waits_for_its_replicas_in_the_same_round_trip() {
        let trip = claim("k:config", "v1 x").acknowledged_by(2);
        let Request::Waited(pipe) = trip.request(Duration::from_micros(2_500)) else {
            panic!("WAIT with replicas");
        };
        let cmds: Vec<Vec<String>> = pipe.cmd_iter().map(words).collect();
        assert_eq!(cmds.len(), 2);
        assert_eq!(
            cmds[0][..2],
            ["EVALSHA".to_owned(), CLAIM.hash().to_owned()]
        );
        assert_eq!(cmds[1], ["WAIT", "2", "2"]);
        let (fleet, acked) = done(trip.answer(Ok(vec![bulk("v1 x"), Value::Int(1)]))).unwrap();
        assert_eq!((fleet.as_str(), acked), ("v1 x", Some(1)));
        assert!(matches!(
            trip.answer(Ok(vec![
                Value::ServerError(no_script_error()),
                Value::Int(0)
            ])),
            Answer::Load
        ));
        for bad in [
            vec![bulk("v1 x")],
            vec![bulk("v1 x"), Value::Nil],
            vec![bulk("v1 x"), Value::Int(-1)],
            vec![bulk("v1 x"), Value::Int(1), Value::Int(1)],
        ] {
            assert!(done(trip.answer(Ok(bad))).is_err());
        }
        let readonly = server_error("-READONLY You can't write against a read only replica.\r\n");
        assert!(
            done(trip.answer(Ok(vec![
                Value::ServerError(readonly.clone()),
                Value::Int(1)
            ])))
            .is_err()
        );
        assert!(done(trip.answer(Ok(vec![bulk("v1 x"), Value::ServerError(readonly)]))).is_err());
        assert_eq!(
            wait_millis(Duration::ZERO),
            1,
            "WAIT 0 would block for good"
        );
        assert_eq!(wait_millis(Duration::from_micros(2_500)), 2);
        let e = unacknowledged(0, 1);
        assert!(e.to_string().contains("reached 0 of the 1 replicas"), "{e}");
    }

    #[test]
    fn the_quorums_trips_read_their_ballots() {
        let trip = vote("k", "k:votes", "me", 2_000_000, 3);
        let Request::One(cmd) = trip.request(Duration::from_millis(1)) else {
            panic!("no WAIT without replicas");
        };
        assert_eq!(
            words(&cmd),
            [
                "EVALSHA",
                VOTE.hash(),
                "2",
                "k",
                "k:votes",
                "me",
                "2000000",
                "3"
            ]
        );
        let reply = Value::Array(vec![bulk("8"), bulk("100"), Value::Int(2)]);
        let (ballot, _) = done(trip.answer(Ok(vec![reply]))).unwrap();
        assert_eq!(
            (ballot.read.word, ballot.read.now, ballot.votes),
            (8, 100, 2)
        );
        assert!(!ballot.stored, "a vote stores no word");
        let publish = Publish {
            channel: "c",
            command: "PUBLISH",
        };
        let trip = quorum_trip("k", "k:votes", 8, 9, publish, 3, 2_000_000, 2);
        let Request::One(cmd) = trip.request(Duration::from_millis(1)) else {
            panic!("no WAIT without replicas");
        };
        assert_eq!(
            words(&cmd),
            [
                "EVALSHA",
                QUORUM_TRIP.hash(),
                "2",
                "k",
                "k:votes",
                "8",
                "9",
                "c",
                "3",
                "2000000",
                "2",
                "PUBLISH"
            ]
        );
        for (swapped, stored) in [(1, true), (0, false)] {
            let reply = Value::Array(vec![
                Value::Int(swapped),
                bulk("9"),
                bulk("7"),
                Value::Int(2),
            ]);
            let (ballot, _) = done(trip.answer(Ok(vec![reply]))).unwrap();
            assert_eq!(ballot.stored, stored);
            assert_eq!((ballot.read.word, ballot.read.now, ballot.votes), (9, 7, 2));
        }
    }

    #[test]
    fn a_refresh_reads_every_word_then_the_time() {
        let trip = fetch_many(&[("a", 1), ("b", 2)]);
        let Request::One(cmd) = trip.request(Duration::from_millis(1)) else {
            panic!("no WAIT without replicas");
        };
        assert_eq!(
            words(&cmd),
            ["EVALSHA", LOAD_MANY.hash(), "2", "a", "b", "1", "2"]
        );
        let reply = Value::Array(vec![bulk("5"), bulk("m2"), bulk("77")]);
        let (many, _) = done(trip.answer(Ok(vec![reply]))).unwrap();
        assert_eq!(many.words, [(5, false), (2, true)]);
        assert_eq!(many.now, 77);
        assert!(super::many(vec![]).is_err(), "no time");
        let published = publish_config("k:config", "v1 y");
        let Request::One(cmd) = published.request(Duration::from_millis(1)) else {
            panic!("no WAIT without replicas");
        };
        assert_eq!(
            words(&cmd),
            ["EVALSHA", PUBLISH_CONFIG.hash(), "1", "k:config", "v1 y"]
        );
    }

    #[test]
    fn a_missing_keys_stand_in_is_marked() {
        assert_eq!(parse_read("42"), (42, false));
        assert_eq!(parse_read("m42"), (42, true));
        assert_eq!(parse_read("mx"), (CORRUPT, true));
    }

    #[test]
    fn unreadable_words_are_corrupt() {
        assert_eq!(parse_word("42"), 42);
        assert_eq!(parse_word("garbage"), CORRUPT);
    }
}
