//! The async driver against a scripted stand-in for Redis: a thread that
//! reads the commands of one connection and answers each from a script,
//! so what the driver sends, and how it reads what comes back, is checked
//! without a server, and with replies no real server gives on demand (a
//! script lost again as soon as it is loaded).

use super::*;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};

/// A server time the stand-in's scripts answer with.
const NOW: u64 = 1_764_500_000_123_456;

/// A local clock that reads one value.
struct Fixed(u64);

impl LocalClock for Fixed {
    fn micros(&self) -> u64 {
        self.0
    }
}

/// One command as the client sent it (RESP: an array of bulk strings), or
/// `None` when the client closed the connection.
fn command(from: &mut impl BufRead) -> Option<Vec<String>> {
    let mut line = String::new();
    if from.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let n: usize = line.trim_end().strip_prefix('*')?.parse().ok()?;
    let mut words = Vec::with_capacity(n);
    for _ in 0..n {
        line.clear();
        from.read_line(&mut line).ok()?;
        let len: usize = line.trim_end().strip_prefix('$')?.parse().ok()?;
        let mut word = vec![0; len + 2];
        from.read_exact(&mut word).ok()?;
        word.truncate(len);
        words.push(String::from_utf8(word).ok()?);
    }
    Some(words)
}

/// What the stand-in saw: each command's name, in order.
type Log = Arc<Mutex<Vec<String>>>;

/// A stand-in for Redis on 127.0.0.1, serving one connection: `SELECT`,
/// `CLIENT` and `SCRIPT` are answered as Redis does; the `n`-th `EVALSHA`
/// gets `evalsha[n]` (raw RESP), and one past the last closes the
/// connection. Returns its URL (database `db`) and the log of commands.
fn stand_in(db: u32, evalsha: Vec<String>) -> (String, Log) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("redis://{}/{db}", listener.local_addr().unwrap());
    let log = Log::default();
    let seen = Arc::clone(&log);
    std::thread::spawn(move || {
        let (stream, _) = listener.accept().unwrap();
        let mut to: TcpStream = stream.try_clone().unwrap();
        let mut from = BufReader::new(stream);
        let mut replies = evalsha.into_iter();
        while let Some(words) = command(&mut from) {
            let name = words[0].to_uppercase();
            seen.lock().unwrap().push(name.clone());
            let reply = match name.as_str() {
                "SELECT" | "CLIENT" => "+OK\r\n".to_owned(),
                "SCRIPT" => format!("${}\r\n{}\r\n", 40, "0".repeat(40)),
                "EVALSHA" => match replies.next() {
                    Some(reply) => reply,
                    // Closed: the client's next read fails.
                    None => return,
                },
                _ => "-ERR unknown command\r\n".to_owned(),
            };
            if to.write_all(reply.as_bytes()).is_err() {
                return;
            }
        }
    });
    (url, log)
}

const NO_SCRIPT: &str = "-NOSCRIPT No matching script. Please use EVAL.\r\n";

/// A fetch's reply (the word as the script writes it, then the time).
fn fetched(word: &'static str) -> String {
    let now = NOW.to_string();
    format!(
        "*2\r\n${}\r\n{word}\r\n${}\r\n{now}\r\n",
        word.len(),
        now.len()
    )
}

async fn connect(url: &str) -> AsyncCon {
    let client = redis::Client::open(url).unwrap();
    AsyncCon::Single(client.get_multiplexed_async_connection().await.unwrap())
}

fn publish() -> Publish<'static> {
    Publish {
        channel: "",
        command: "PUBLISH",
    }
}

fn deadline() -> Instant {
    // Never reached: the stand-in answers at once, or closes.
    Instant::now() + std::time::Duration::from_secs(3600)
}

/// The connection enum gives the `redis` crate the database its connection
/// selected.
#[tokio::test]
async fn an_async_connection_reports_its_database() {
    let (url, log) = stand_in(3, vec![]);
    let con = connect(&url).await;
    assert_eq!(redis::aio::ConnectionLike::get_db(&con), 3);
    assert!(log.lock().unwrap().contains(&"SELECT".to_owned()));
}

/// A script the server lost is loaded and the trip sent once more; lost
/// again at once, the trip ends with that error, after one load: it does
/// not load again.
#[tokio::test]
async fn a_script_lost_again_after_its_load_ends_the_trip() {
    // A third EVALSHA would find the connection closed.
    let (url, log) = stand_in(0, vec![NO_SCRIPT.to_owned(), NO_SCRIPT.to_owned()]);
    let clock = Fixed(7);
    let mut op = AsyncOp::new(
        connect(&url).await,
        "k",
        publish(),
        0,
        0,
        &clock,
        deadline(),
    );
    let err = op.fetch().await.unwrap_err();
    assert_eq!(err.to_string(), script::script_lost().to_string());
    let sent: Vec<String> = log
        .lock()
        .unwrap()
        .iter()
        .filter(|c| *c == "EVALSHA" || *c == "SCRIPT")
        .cloned()
        .collect();
    assert_eq!(sent, ["EVALSHA", "SCRIPT", "EVALSHA"]);
    assert_eq!(op.stored, None);
    assert_eq!(op.latest, None);
}

/// A script lost once is loaded and the trip answered; a missing key's
/// stand-in is the word read but not noted as stored, a stored word is.
#[tokio::test]
async fn a_missing_keys_stand_in_is_not_noted_as_stored() {
    let replies = vec![NO_SCRIPT.to_owned(), fetched("m123"), fetched("42")];
    let (url, log) = stand_in(0, replies);
    let clock = Fixed(7);
    let mut op = AsyncOp::new(
        connect(&url).await,
        "k",
        publish(),
        123,
        0,
        &clock,
        deadline(),
    );
    assert_eq!(op.fetch().await.unwrap(), (123, NOW));
    assert_eq!(op.stored, None, "a missing key's stand-in");
    assert_eq!(op.latest, Some((NOW, 7)));
    assert_eq!(op.round_trips, 1);
    assert_eq!(op.fetch().await.unwrap(), (42, NOW));
    assert_eq!(op.stored, Some(42));
    assert_eq!(op.round_trips, 2);
    let loads = log
        .lock()
        .unwrap()
        .iter()
        .filter(|c| *c == "SCRIPT")
        .count();
    assert_eq!(loads, 1);
}
