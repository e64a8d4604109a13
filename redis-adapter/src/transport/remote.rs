//! The word under a Redis key as a [`tripword::cell::Cell`]: a load and a
//! compare-and-set, each one Lua script run atomically by the server, each
//! returning the server's `TIME` read after the `GET`.

use super::con::Con;
use super::script::{
    self, Answer, Ballot, Many, Publish, Read, Request, Trip, deadline_passed, unacknowledged,
};
use crate::time::{LocalClock, server_micros};
use redis::{RedisError, Value};
use std::cell::{Cell as Slot, RefCell};
use std::io;
use std::time::{Duration, Instant};
use tripword::W64;
use tripword::cell::{CasError, Cell};

/// One operation's view of the key: a connection, a deadline every command
/// must meet, and the server time read with the word last observed.
pub(crate) struct RemoteCell<'a> {
    con: RefCell<&'a mut Con>,
    key: &'a str,
    /// Where the compare-and-set publishes.
    publish: Publish<'a>,
    /// What a missing key reads as.
    missing: u64,
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
            publish: Publish {
                channel,
                command: "PUBLISH",
            },
            missing,
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

    /// Publishes the changes with `SPUBLISH` (a cluster's sharded
    /// channels) instead of `PUBLISH`.
    pub(crate) fn publish_sharded(&mut self) {
        self.publish.command = "SPUBLISH";
    }

    /// Sets the connection's timeouts to what is left before the deadline.
    fn arm(&self, con: &Con) -> Result<(), RedisError> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        if left < Duration::from_micros(100) {
            return Err(deadline_passed());
        }
        con.set_timeouts(left)
    }

    /// Sends `trip` (and, when the server lost the script, loads it and
    /// sends it once more), each round trip within the deadline. Returns
    /// its reply and how many replicas acknowledged (`None` when none
    /// must).
    fn run<T>(&self, trip: &Trip<T>) -> Result<(T, Option<u64>), RedisError> {
        let mut con = self.con.borrow_mut();
        let con = &mut **con;
        let mut loaded = false;
        loop {
            self.arm(con)?;
            let left = self.deadline.saturating_duration_since(Instant::now());
            let sent = match trip.request(left) {
                Request::One(cmd) => cmd.query::<Value>(con).map(|v| vec![v]),
                Request::Waited(pipe) => pipe.query::<Vec<Value>>(con),
            };
            match trip.answer(sent) {
                Answer::Done(out) => return out,
                Answer::Load if !loaded => {
                    self.arm(con)?;
                    let _: String = trip.load().query(con)?;
                    loaded = true;
                }
                Answer::Load => return Err(script::script_lost()),
            }
        }
    }

    /// An error when a change was acknowledged by fewer replicas than
    /// asked.
    fn check_acknowledged(&self, acked: Option<u64>) -> Result<(), RedisError> {
        match acked {
            Some(n) if n < u64::from(self.replicas) => Err(unacknowledged(n, self.replicas)),
            _ => Ok(()),
        }
    }

    fn observed(&self, time: u64) {
        self.pending_time.set(Some(time));
        self.latest.set(Some((time, self.clock.micros())));
        self.round_trips.set(self.round_trips.get() + 1);
    }

    /// A word a script read: noted as stored unless it is a missing key's
    /// stand-in (a swap's reply is the word it stored).
    fn read(&self, read: Read) -> u64 {
        self.observed(read.now);
        if !read.missing {
            self.stored.set(Some(read.word));
        }
        read.word
    }

    /// The word under the key and the server time read after it.
    pub(crate) fn fetch(&self) -> Result<(u64, u64), RedisError> {
        let (read, _) = self.run(&script::fetch(self.key, self.missing))?;
        Ok((self.read(read), read.now))
    }

    /// The latest word the operation read or stored that is in Redis (not
    /// a missing key's stand-in).
    pub(crate) fn stored(&self) -> Option<u64> {
        self.stored.get()
    }

    /// The words under `keys` (a missing one read as its `missing`) and the
    /// server time read after them, in one round trip.
    pub(crate) fn fetch_many(&self, keys: &[(&str, u64)]) -> Result<Vec<(u64, bool)>, RedisError> {
        let (many, _) = self.run(&script::fetch_many(keys))?;
        self.many(many, keys.len())
    }

    /// A refresh's reply for `n` keys.
    fn many(&self, many: Many, n: usize) -> Result<Vec<(u64, bool)>, RedisError> {
        if many.words.len() != n {
            return Err(RedisError::from(io::Error::new(
                io::ErrorKind::InvalidData,
                "tripword-redis: a refresh's reply has the wrong length",
            )));
        }
        self.observed(many.now);
        Ok(many.words)
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
            let trips: Vec<Trip<Many>> = batches.iter().map(|b| script::fetch_many(b)).collect();
            let pipelined = {
                let mut con = self.con.borrow_mut();
                self.arm(&con)?;
                match &mut **con {
                    Con::Cluster(con) => {
                        Some(super::cluster::pipelined(con, trips.iter().map(Trip::eval)))
                    }
                    Con::Node(_) => None,
                }
            };
            match pipelined {
                Some(Ok(replies)) if replies.len() == batches.len() => {
                    let mut out = Vec::with_capacity(batches.len());
                    for ((reply, trip), batch) in replies.into_iter().zip(&trips).zip(batches) {
                        match trip.answer(Ok(vec![reply])) {
                            Answer::Done(many) => out.push(self.many(many?.0, batch.len())?),
                            // Not loaded on that node: read one by one.
                            Answer::Load => {
                                return batches.iter().map(|b| self.fetch_many(b)).collect();
                            }
                        }
                    }
                    return Ok(out);
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
    /// none. Not a call's round trip: not counted.
    pub(crate) fn claim(&self, key: &str, ours: &str) -> Result<String, RedisError> {
        let (fleet, acked) = self.run(&script::claim(key, ours).acknowledged_by(self.replicas))?;
        self.check_acknowledged(acked)?;
        Ok(fleet)
    }

    /// Publishes `ours` as the fingerprint under `key` (see
    /// [`PUBLISH_CONFIG`](super::script::PUBLISH_CONFIG)); what is stored
    /// after.
    pub(crate) fn publish_config(&self, key: &str, ours: &str) -> Result<String, RedisError> {
        let trip = script::publish_config(key, ours).acknowledged_by(self.replicas);
        let (fleet, acked) = self.run(&trip)?;
        self.check_acknowledged(acked)?;
        Ok(fleet)
    }

    /// Votes for tripping the shared word as `voter` (see
    /// [`VOTE`](super::script::VOTE)).
    pub(crate) fn vote(&self, votes: &str, voter: &str, window: u64) -> Result<Ballot, RedisError> {
        let trip = script::vote(self.key, votes, voter, window, self.missing)
            .acknowledged_by(self.replicas);
        let (ballot, acked) = self.run(&trip)?;
        self.read(ballot.read);
        // A vote is a change like any other: it counts once the replicas
        // asked for acknowledged it, so a failover does not lose it.
        self.check_acknowledged(acked)?;
        Ok(ballot)
    }

    /// Replaces `expected` by `new` if the votes under `votes` within
    /// `window` are at least `quorum` (see
    /// [`QUORUM_TRIP`](super::script::QUORUM_TRIP)).
    pub(crate) fn quorum_trip(
        &self,
        votes: &str,
        expected: u64,
        new: u64,
        window: u64,
        quorum: u32,
    ) -> Result<Ballot, RedisError> {
        let trip = script::quorum_trip(
            self.key,
            votes,
            expected,
            new,
            self.publish,
            self.missing,
            window,
            quorum,
        )
        .acknowledged_by(self.replicas);
        let (ballot, acked) = self.run(&trip)?;
        self.read(ballot.read);
        if ballot.stored {
            // The trip, as any change: made only once the replicas asked
            // for acknowledged it.
            self.check_acknowledged(acked)?;
        }
        Ok(ballot)
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
        let trip = script::cas(self.key, current, new, self.publish, self.missing)
            .acknowledged_by(self.replicas);
        let (reply, acked) = self.run(&trip).map_err(CasError::Cell)?;
        let word = self.read(reply.read);
        if reply.swapped {
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
    #[cfg_attr(
        not(tripword_redis_server),
        ignore = "needs redis-server on PATH (apt-get install redis-server)"
    )]
    fn the_cell_loads_swaps_and_counts_its_round_trips() {
        let server = crate::server::tests::server();
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
}
