//! The word under a Redis key as a [`tripword::cell::Cell`]: a load and a
//! compare-and-set, each one Lua script run atomically by the server, each
//! returning the server's `TIME` read after the `GET`.

use crate::hub::Con;
use crate::time::{LocalClock, server_micros};
use redis::{FromRedisValue, RedisError, Script, ScriptInvocation, Value};
use std::cell::{Cell as Slot, RefCell};
use std::io;
use std::sync::LazyLock;
use std::time::{Duration, Instant};
use tripword::W64;
use tripword::cell::{CasError, Cell};

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
pub(crate) static LOAD: LazyLock<Script> = LazyLock::new(|| {
    Script::new(&format!(
        "{PRELUDE}
local w, gone = word(KEYS[1], ARGV[1])
if gone then w = 'm' .. w end
return {{w, now()}}"
    ))
});

/// `{word1, word2, ..., now}`: the words under `KEYS`, then the server's
/// time read after them (the watcher's refresh of many breakers in one
/// round trip); a missing `KEYS[i]` reads as `ARGV[i]`.
static LOAD_MANY: LazyLock<Script> = LazyLock::new(|| {
    Script::new(&format!(
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
pub(crate) static CLAIM: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
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
pub(crate) static PUBLISH_CONFIG: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
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
pub(crate) static CAS: LazyLock<Script> = LazyLock::new(|| {
    Script::new(&format!(
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
pub(crate) static VOTE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(&format!(
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
pub(crate) static QUORUM_TRIP: LazyLock<Script> = LazyLock::new(|| {
    Script::new(&format!(
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

/// A reply of [`VOTE`] or [`QUORUM_TRIP`]: the word under the key, the
/// server time read after it, the live votes, and whether the trip was
/// stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Ballot {
    pub(crate) word: u64,
    pub(crate) now: u64,
    pub(crate) votes: u64,
    pub(crate) stored: bool,
}

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
pub(crate) fn no_script(replies: &[Value]) -> bool {
    matches!(
        replies.first(),
        Some(Value::ServerError(e)) if e.kind() == Some(redis::ServerErrorKind::NoScript)
    )
}

/// The replies of a pipeline of a script and `WAIT`: the script's, and how
/// many replicas acknowledged.
pub(crate) fn script_and_wait<T: FromRedisValue>(
    replies: Vec<Value>,
) -> Result<(T, u64), RedisError> {
    let [script, wait] = <[Value; 2]>::try_from(replies).map_err(|_| malformed())?;
    let script = match script {
        Value::ServerError(e) => return Err(e.into()),
        v => v,
    };
    let reply = redis::from_redis_value(script)?;
    let acked = match wait {
        Value::ServerError(e) => return Err(e.into()),
        Value::Int(n) => u64::try_from(n).map_err(|_| malformed())?,
        _ => return Err(malformed()),
    };
    Ok((reply, acked))
}

/// A pipeline of `invocation` and `WAIT replicas millis`.
pub(crate) fn waited(
    invocation: &ScriptInvocation<'_>,
    replicas: u32,
    millis: u64,
) -> redis::Pipeline {
    let mut pipe = redis::pipe();
    pipe.ignore_errors()
        .invoke_script(invocation)
        .cmd("WAIT")
        .arg(replicas)
        .arg(millis);
    pipe
}

/// One operation's view of the key: a connection, a deadline every command
/// must meet, and the server time read with the word last observed.
pub(crate) struct RemoteCell<'a> {
    con: RefCell<&'a mut Con>,
    key: &'a str,
    channel: &'a str,
    /// The command the compare-and-set publishes with.
    publish: &'static str,
    /// What a missing key reads as, in decimal.
    missing: String,
    /// The latest word read that was stored in Redis (not a missing key's).
    stored: Slot<Option<u64>>,
    deadline: Instant,
    /// The server time that came with the word last observed (a load or a
    /// lost compare-and-set), for the next clock read of the CAS loop.
    pending_time: Slot<Option<u64>>,
    /// The instance's clock, read when a reply arrives.
    clock: &'a dyn LocalClock,
    /// The latest server time seen, and the local clock's reading when its
    /// reply arrived.
    latest: Slot<Option<(u64, u64)>>,
    /// A failure of a clock read: the operation must fail (nothing decided on
    /// a time that was not read is stored or reported).
    failed: RefCell<Option<RedisError>>,
    round_trips: Slot<u32>,
    /// The replicas every change must reach (`WAIT`); 0: none.
    replicas: u32,
}

impl<'a> RemoteCell<'a> {
    pub(crate) fn new(
        con: &'a mut Con,
        key: &'a str,
        channel: &'a str,
        missing: u64,
        deadline: Instant,
        clock: &'a dyn LocalClock,
    ) -> Self {
        RemoteCell {
            con: RefCell::new(con),
            key,
            channel,
            publish: "PUBLISH",
            missing: missing.to_string(),
            stored: Slot::new(None),
            deadline,
            clock,
            pending_time: Slot::new(None),
            latest: Slot::new(None),
            failed: RefCell::new(None),
            round_trips: Slot::new(0),
            replicas: 0,
        }
    }

    /// The cell, each change of which must reach `replicas` replicas.
    pub(crate) fn acknowledged_by(mut self, replicas: u32) -> Self {
        self.replicas = replicas;
        self
    }

    /// Runs `invocation`; when replicas must acknowledge, `WAIT` follows in
    /// the same round trip (a pipeline), with what is left of the
    /// operation as its timeout. Returns the script's reply, and how many
    /// replicas acknowledged (`None` when none must).
    fn invoke_waited<T: FromRedisValue>(
        &self,
        con: &mut Con,
        invocation: &ScriptInvocation<'_>,
    ) -> Result<(T, Option<u64>), RedisError> {
        if self.replicas == 0 {
            return invocation.invoke(con).map(|v| (v, None));
        }
        let query = |con: &mut Con| -> Result<Vec<Value>, RedisError> {
            let left = self.deadline.saturating_duration_since(Instant::now());
            waited(invocation, self.replicas, wait_millis(left)).query(con)
        };
        let mut replies = query(con)?;
        if no_script(&replies) {
            invocation.load(con)?;
            self.arm(con)?;
            replies = query(con)?;
        }
        let (reply, acked) = script_and_wait(replies)?;
        Ok((reply, Some(acked)))
    }

    /// An error when a change was acknowledged by fewer replicas than
    /// asked.
    fn check_acknowledged(&self, acked: Option<u64>) -> Result<(), RedisError> {
        match acked {
            Some(n) if n < u64::from(self.replicas) => Err(unacknowledged(n, self.replicas)),
            _ => Ok(()),
        }
    }

    /// Publishes the changes with `SPUBLISH` (a cluster's sharded
    /// channels) instead of `PUBLISH`.
    pub(crate) fn publish_sharded(&mut self) {
        self.publish = "SPUBLISH";
    }

    /// Sets the connection's timeouts to what is left before the deadline.
    fn arm(&self, con: &Con) -> Result<(), RedisError> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        if left < Duration::from_micros(100) {
            return Err(deadline_passed());
        }
        con.set_timeouts(left)
    }

    fn observed(&self, time: u64) {
        self.pending_time.set(Some(time));
        self.latest.set(Some((time, self.clock.micros())));
        self.round_trips.set(self.round_trips.get() + 1);
    }

    /// The word under the key and the server time read after it.
    pub(crate) fn fetch(&self) -> Result<(u64, u64), RedisError> {
        let mut con = self.con.borrow_mut();
        self.arm(&con)?;
        let (word, time): (String, String) =
            LOAD.key(self.key).arg(&self.missing).invoke(&mut **con)?;
        let time = parse_time(&time)?;
        self.observed(time);
        Ok((self.read(&word), time))
    }

    /// A word a script replied with; noted as stored unless it is a
    /// missing key's stand-in (a swap's reply is the word it stored).
    fn read(&self, reply: &str) -> u64 {
        let (word, missing) = parse_read(reply);
        if !missing {
            self.stored.set(Some(word));
        }
        word
    }

    /// The latest word the operation read or stored that is in Redis (not
    /// a missing key's stand-in).
    pub(crate) fn stored(&self) -> Option<u64> {
        self.stored.get()
    }

    /// The words under `keys` (a missing one read as its `missing`) and the
    /// server time read after them, in one round trip.
    pub(crate) fn fetch_many(&self, keys: &[(&str, u64)]) -> Result<Vec<(u64, bool)>, RedisError> {
        let mut con = self.con.borrow_mut();
        self.arm(&con)?;
        let mut invocation = LOAD_MANY.prepare_invoke();
        for (key, missing) in keys {
            invocation.key(*key).arg(missing.to_string());
        }
        let reply: Vec<String> = invocation.invoke(&mut **con)?;
        self.many(reply, keys.len())
    }

    /// A `LOAD_MANY` reply for `n` keys: the words, the server time last.
    fn many(&self, mut reply: Vec<String>, n: usize) -> Result<Vec<(u64, bool)>, RedisError> {
        let time = parse_time(&reply.pop().unwrap_or_default())?;
        if reply.len() != n {
            return Err(RedisError::from(io::Error::new(
                io::ErrorKind::InvalidData,
                "tripword-redis: a refresh's reply has the wrong length",
            )));
        }
        self.observed(time);
        Ok(reply.iter().map(|w| parse_read(w)).collect())
    }

    /// [`fetch_many`](Self::fetch_many) for each batch: in a cluster the
    /// batches (each of one slot) are pipelined, one round trip per node,
    /// or, when a node has not loaded the script yet, read one after the
    /// other (which loads it).
    pub(crate) fn fetch_batches(
        &self,
        batches: &[Vec<(&str, u64)>],
    ) -> Result<Vec<Vec<(u64, bool)>>, RedisError> {
        #[cfg(feature = "cluster")]
        if batches.len() > 1 {
            let pipelined = {
                let mut con = self.con.borrow_mut();
                self.arm(&con)?;
                match &mut **con {
                    Con::Cluster(con) => {
                        Some(crate::cluster::load_batches(con, &LOAD_MANY, batches))
                    }
                    Con::Node(_) => None,
                }
            };
            match pipelined {
                Some(Ok(replies)) if replies.len() == batches.len() => {
                    return replies
                        .into_iter()
                        .zip(batches)
                        .map(|(reply, batch)| self.many(reply, batch.len()))
                        .collect();
                }
                Some(Err(e))
                    if e.kind() != redis::ErrorKind::Server(redis::ServerErrorKind::NoScript) =>
                {
                    return Err(e);
                }
                _ => {}
            }
        }
        batches.iter().map(|batch| self.fetch_many(batch)).collect()
    }

    /// The clock of the CAS loop: the server time read with the word the
    /// attempt rests on, or, for a word from the local mirror, a `TIME` round
    /// trip made now (after that word was loaded). If that fails the
    /// operation fails: see [`take_failure`](Self::take_failure).
    pub(crate) fn now(&self) -> u64 {
        if let Some(t) = self.pending_time.take() {
            return t;
        }
        match self.server_time() {
            Ok(t) => t,
            Err(e) => {
                *self.failed.borrow_mut() = Some(e);
                0
            }
        }
    }

    fn server_time(&self) -> Result<u64, RedisError> {
        let mut con = self.con.borrow_mut();
        self.arm(&con)?;
        let (s, us) = con.time(self.key)?;
        let t = server_micros(s, us);
        self.latest.set(Some((t, self.clock.micros())));
        self.round_trips.set(self.round_trips.get() + 1);
        Ok(t)
    }

    /// The fingerprint stored under `key`, claimed with `ours` if there is
    /// none.
    pub(crate) fn claim(&self, key: &str, ours: &str) -> Result<String, RedisError> {
        let mut con = self.con.borrow_mut();
        self.arm(&con)?;
        // Not a call's round trip: not counted.
        let mut invocation = CLAIM.key(key);
        invocation.arg(ours);
        let (fleet, acked) = self.invoke_waited(&mut con, &invocation)?;
        self.check_acknowledged(acked)?;
        Ok(fleet)
    }

    /// Publishes `ours` as the fingerprint under `key` (see
    /// [`PUBLISH_CONFIG`]); what is stored after.
    pub(crate) fn publish_config(&self, key: &str, ours: &str) -> Result<String, RedisError> {
        let mut con = self.con.borrow_mut();
        self.arm(&con)?;
        let mut invocation = PUBLISH_CONFIG.key(key);
        invocation.arg(ours);
        let (fleet, acked) = self.invoke_waited(&mut con, &invocation)?;
        self.check_acknowledged(acked)?;
        Ok(fleet)
    }

    /// Votes for tripping the shared word as `voter` (see [`VOTE`]).
    pub(crate) fn vote(&self, votes: &str, voter: &str, window: u64) -> Result<Ballot, RedisError> {
        let mut con = self.con.borrow_mut();
        self.arm(&con)?;
        let mut invocation = VOTE.key(self.key);
        invocation
            .key(votes)
            .arg(voter)
            .arg(window)
            .arg(&self.missing);
        let ((word, time, n), acked): ((String, String, u64), _) =
            self.invoke_waited(&mut con, &invocation)?;
        let time = parse_time(&time)?;
        drop(con);
        self.observed(time);
        // A vote is a change like any other: it counts once the replicas
        // asked for acknowledged it, so a failover does not lose it.
        self.check_acknowledged(acked)?;
        Ok(Ballot {
            word: self.read(&word),
            now: time,
            votes: n,
            stored: false,
        })
    }

    /// Replaces `expected` by `new` if the votes under `votes` within
    /// `window` are at least `quorum` (see [`QUORUM_TRIP`]).
    pub(crate) fn quorum_trip(
        &self,
        votes: &str,
        expected: u64,
        new: u64,
        window: u64,
        quorum: u32,
    ) -> Result<Ballot, RedisError> {
        let mut con = self.con.borrow_mut();
        self.arm(&con)?;
        let mut invocation = QUORUM_TRIP.key(self.key);
        invocation
            .key(votes)
            .arg(expected.to_string())
            .arg(new.to_string())
            .arg(self.channel)
            .arg(&self.missing)
            .arg(window)
            .arg(quorum)
            .arg(self.publish);
        let ((swapped, word, time, n), acked): ((i64, String, String, u64), _) =
            self.invoke_waited(&mut con, &invocation)?;
        let time = parse_time(&time)?;
        drop(con);
        self.observed(time);
        if swapped == 1 {
            // The trip, as any change: made only once the replicas asked
            // for acknowledged it.
            self.check_acknowledged(acked)?;
        }
        Ok(Ballot {
            word: self.read(&word),
            now: time,
            votes: n,
            stored: swapped == 1,
        })
    }

    /// Withdraws `voter`'s vote under `votes`.
    pub(crate) fn withdraw(&self, votes: &str, voter: &str) -> Result<(), RedisError> {
        let mut con = self.con.borrow_mut();
        self.arm(&con)?;
        let _: i64 = redis::cmd("ZREM").arg(votes).arg(voter).query(&mut **con)?;
        drop(con);
        self.round_trips.set(self.round_trips.get() + 1);
        Ok(())
    }

    /// Drops every vote under `votes`.
    pub(crate) fn clear_votes(&self, votes: &str) -> Result<(), RedisError> {
        let mut con = self.con.borrow_mut();
        self.arm(&con)?;
        let _: i64 = redis::cmd("DEL").arg(votes).query(&mut **con)?;
        drop(con);
        self.round_trips.set(self.round_trips.get() + 1);
        Ok(())
    }

    /// The cluster's slot map (`CLUSTER SLOTS`), from any node.
    #[cfg(feature = "cluster")]
    pub(crate) fn cluster_slots(&self) -> Result<redis::Value, RedisError> {
        let mut con = self.con.borrow_mut();
        self.arm(&con)?;
        redis::cmd("CLUSTER").arg("SLOTS").query(&mut **con)
    }

    /// The failure of a clock read during the operation, if any.
    pub(crate) fn take_failure(&self) -> Option<RedisError> {
        self.failed.borrow_mut().take()
    }

    /// The latest server time seen, and the local clock's reading when its
    /// reply arrived.
    pub(crate) fn latest(&self) -> Option<(u64, u64)> {
        self.latest.get()
    }

    /// Round trips made so far.
    pub(crate) fn round_trips(&self) -> u32 {
        self.round_trips.get()
    }
}

impl Cell<W64> for RemoteCell<'_> {
    type Error = RedisError;

    fn load(&self) -> Result<u64, RedisError> {
        self.fetch().map(|(word, _)| word)
    }

    fn compare_exchange(&self, current: u64, new: u64) -> Result<(), CasError<u64, RedisError>> {
        if let Some(e) = self.take_failure() {
            // The clock read of this attempt failed: store nothing.
            return Err(CasError::Cell(e));
        }
        let mut con = self.con.borrow_mut();
        self.arm(&con).map_err(CasError::Cell)?;
        let mut invocation = CAS.key(self.key);
        invocation
            .arg(current.to_string())
            .arg(new.to_string())
            .arg(self.channel)
            .arg(&self.missing)
            .arg(self.publish);
        let ((swapped, word, time), acked): ((i64, String, String), _) = self
            .invoke_waited(&mut con, &invocation)
            .map_err(CasError::Cell)?;
        let time = parse_time(&time).map_err(CasError::Cell)?;
        drop(con);
        self.observed(time);
        let word = self.read(&word);
        if swapped == 1 {
            // Stored, but not known to survive a failover: not made.
            self.check_acknowledged(acked).map_err(CasError::Cell)?;
            // The loop stops here; the time is not needed again.
            self.pending_time.set(None);
            Ok(())
        } else {
            Err(CasError::Changed(word))
        }
    }
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

    #[test]
    fn the_cell_loads_swaps_and_counts_its_round_trips() {
        let Some(server) = crate::server::tests::server() else {
            return;
        };
        let client = redis::Client::open(server.url()).unwrap();
        let mut con = Con::Node(
            client
                .get_connection_with_timeout(Duration::from_secs(5))
                .unwrap(),
        );
        let _: () = redis::cmd("SET")
            .arg("k")
            .arg(12_345)
            .query(&mut con)
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        let cell = RemoteCell::new(&mut con, "k", "", 0, deadline, &crate::time::Monotonic);
        assert_eq!(cell.round_trips(), 0);
        assert_eq!(cell.load().unwrap(), 12_345);
        assert_eq!(cell.round_trips(), 1);
        let (t, _) = cell.latest().unwrap();
        assert_eq!(cell.now(), t, "the time that came with the word");
        assert_eq!(cell.round_trips(), 1);
        assert!(cell.now() >= t, "a TIME round trip");
        assert_eq!(cell.round_trips(), 2);
        assert!(cell.take_failure().is_none());
        assert!(cell.compare_exchange(12_345, 12_346).is_ok());
        assert_eq!(cell.round_trips(), 3);
        assert!(matches!(
            cell.compare_exchange(1, 2),
            Err(CasError::Changed(12_346))
        ));
        assert_eq!(cell.round_trips(), 4);
        assert_eq!(cell.fetch().unwrap().0, 12_346);
    }

    #[test]
    fn a_script_and_wait_reply_in_two_parts() {
        let script = Value::Array(vec![Value::Int(1), Value::BulkString(b"7".to_vec())]);
        let (reply, acked): ((i64, String), u64) =
            script_and_wait(vec![script.clone(), Value::Int(2)]).unwrap();
        assert_eq!((reply, acked), ((1, "7".to_owned()), 2));
        assert!(script_and_wait::<(i64, String)>(vec![script.clone()]).is_err());
        assert!(script_and_wait::<(i64, String)>(vec![script, Value::Nil]).is_err());
        assert!(!no_script(&[Value::Int(1)]));
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
