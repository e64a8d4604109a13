//! The trips with replies fed in: no server.

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
    let is_readonly = |answer: Answer<String>| {
        matches!(
            done(answer),
            Err(e) if e.kind() == redis::ErrorKind::Server(redis::ServerErrorKind::ReadOnly)
        )
    };
    // The server's own error, from the script or from `WAIT`: not taken
    // for a malformed reply.
    assert!(is_readonly(trip.answer(Ok(vec![
        Value::ServerError(readonly.clone()),
        Value::Int(1)
    ]))));
    assert!(is_readonly(
        trip.answer(Ok(vec![bulk("v1 x"), Value::ServerError(readonly)]))
    ));
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
    assert_eq!(
        CORRUPT.to_string(),
        "18446744073709551612",
        "as the scripts send it"
    );
    assert!(tripword::word::Snapshot::decode::<tripword::W64>(CORRUPT).is_err());
}
