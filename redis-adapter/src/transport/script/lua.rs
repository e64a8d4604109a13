//! The Lua scripts of the protocol. Each reads the word under its key
//! and the server's `TIME` after the `GET`, atomically; the changes
//! publish the word they stored.

use redis::{Cmd, Script};
use std::sync::LazyLock;

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

/// Shared by the scripts: the word under a key as a canonical decimal
/// string (`missing` for a missing key, the word the caller reads a lost
/// key as: see `Member::missing_word`; `CORRUPT`, 18446744073709551612,
/// for anything that is not a canonical `u64`), and the server's time in
/// microseconds, read after the `GET`.
const PRELUDE: &str = r"
local function word(key, missing)
  local cur = redis.pcall('GET', key)
  if type(cur) == 'table' then return '18446744073709551612' end
  if not cur then return missing, true end
  if cur == '0' then return cur end
  if string.find(cur, '^[1-9]%d*$') and (#cur < 20 or (#cur == 20 and cur <= '18446744073709551615')) then
    return cur
  end
  return '18446744073709551612'
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
