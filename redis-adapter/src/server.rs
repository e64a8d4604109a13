//! A throwaway `redis-server` for tests and demos: started on 127.0.0.1 on
//! a free port with no persistence (`--save '' --appendonly no`), stopped
//! (killed and reaped) when dropped, also when a test panics.
//!
//! Not part of a service's use of the crate; the crate's tests and the
//! `fleet` example use it.

use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The binary started: `$TRIPWORD_REDIS_SERVER`, or `redis-server` on the
/// `PATH`.
pub fn binary() -> String {
    std::env::var("TRIPWORD_REDIS_SERVER").unwrap_or_else(|_| "redis-server".into())
}

/// Whether the binary can be run.
pub fn available() -> bool {
    runs(&binary())
}

/// Whether `binary --version` runs and succeeds.
fn runs(binary: &str) -> bool {
    Command::new(binary)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// A running `redis-server`, killed when dropped.
#[derive(Debug)]
pub struct RedisServer {
    child: Option<Child>,
    port: u16,
    dir: PathBuf,
}

impl RedisServer {
    /// Starts one on a free port and waits (up to 20 s) until it answers
    /// `PING`.
    ///
    /// # Errors
    /// When the binary cannot be started or never answers.
    pub fn start() -> io::Result<RedisServer> {
        let mut last = None;
        // The port is free when asked for, but another process may take it
        // before the server binds it: try a few.
        for _ in 0..5 {
            let port = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?
                .local_addr()?
                .port();
            match RedisServer::start_on(port) {
                Ok(s) => return Ok(s),
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| io::Error::other("no port")))
    }

    /// Starts one on `port` (a restart on the same port, empty).
    ///
    /// # Errors
    /// When the binary cannot be started or never answers.
    pub fn start_on(port: u16) -> io::Result<RedisServer> {
        RedisServer::launch(&binary(), port, Duration::from_secs(20))
    }

    /// Starts `binary` on `port` and waits up to `wait` for `PONG`.
    fn launch(binary: &str, port: u16, wait: Duration) -> io::Result<RedisServer> {
        let dir =
            std::env::temp_dir().join(format!("tripword-redis-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        let child = Command::new(binary)
            .args(["--port", &port.to_string()])
            .args(["--bind", "127.0.0.1"])
            .args(["--save", ""])
            .args(["--appendonly", "no"])
            .args(["--enable-debug-command", "local"])
            .arg("--dir")
            .arg(&dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()?;
        let mut server = RedisServer {
            child: Some(child),
            port,
            dir,
        };
        let until = Instant::now() + wait;
        // Answering is not enough: a stranger that took the port first
        // answers too (and this child then exits). Only its own process id
        // counts.
        let own = server.pid();
        loop {
            if server.ping() && server.process_id() == own {
                return Ok(server);
            }
            if let Some(c) = server.child.as_mut()
                && let Some(status) = c.try_wait()?
            {
                server.child = None;
                return Err(io::Error::other(format!("redis-server exited: {status}")));
            }
            if Instant::now() > until {
                return Err(io::Error::other(format!(
                    "redis-server did not answer within {wait:?}"
                )));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Whether it answers `PING` within a second.
    pub fn ping(&self) -> bool {
        let Ok(mut s) = TcpStream::connect_timeout(
            &(Ipv4Addr::LOCALHOST, self.port).into(),
            Duration::from_secs(1),
        ) else {
            return false;
        };
        let _ = s.set_read_timeout(Some(Duration::from_secs(1)));
        let mut buf = [0u8; 7];
        s.write_all(b"PING\r\n").is_ok() && s.read_exact(&mut buf).is_ok() && &buf == b"+PONG\r\n"
    }

    /// The `process_id` of whatever answers `INFO server` on the port.
    fn process_id(&self) -> Option<u32> {
        let mut s = TcpStream::connect_timeout(
            &(Ipv4Addr::LOCALHOST, self.port).into(),
            Duration::from_secs(1),
        )
        .ok()?;
        s.set_read_timeout(Some(Duration::from_secs(1))).ok()?;
        s.write_all(b"INFO server\r\n").ok()?;
        let mut reply = Vec::new();
        let mut buf = [0u8; 4096];
        while reply.len() < 1 << 16 {
            let n = s.read(&mut buf).ok()?;
            if n == 0 {
                break;
            }
            reply.extend_from_slice(&buf[..n]);
            let text = String::from_utf8_lossy(&reply);
            if let Some(at) = text.find("process_id:") {
                let digits = &text[at + "process_id:".len()..];
                if let Some(end) = digits.find("\r\n") {
                    return digits[..end].parse().ok();
                }
            }
        }
        None
    }

    /// The port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `redis://127.0.0.1:PORT/`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// The process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    fn signal(&self, sig: &str) -> io::Result<()> {
        // The child's own id, never a number that names a group (`kill -STOP
        // 0` would stop the caller's whole process group: the test itself).
        let pid = self
            .child
            .as_ref()
            .map(Child::id)
            .ok_or_else(|| io::Error::other("not running"))?;
        let status = Command::new("kill")
            .args([sig, &pid.to_string()])
            .status()?;
        if status.success() {
            Ok(())
        } else {
            Err(io::Error::other(format!("kill {sig} {pid}: {status}")))
        }
    }

    /// `SIGSTOP`: the server stops answering; connections stay open.
    ///
    /// # Errors
    /// When the signal cannot be sent.
    pub fn pause(&self) -> io::Result<()> {
        self.signal("-STOP")
    }

    /// `SIGCONT`.
    ///
    /// # Errors
    /// When the signal cannot be sent.
    pub fn resume(&self) -> io::Result<()> {
        self.signal("-CONT")
    }

    /// Kills it and waits for it to exit.
    pub fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Stops it and starts an empty one on the same port.
    ///
    /// # Errors
    /// As [`start_on`](Self::start_on).
    pub fn restart(&mut self) -> io::Result<()> {
        self.stop();
        let mut fresh = RedisServer::start_on(self.port)?;
        // Take over the new child; `fresh` then drops with nothing to kill
        // and no folder to remove.
        self.child = fresh.child.take();
        fresh.dir = PathBuf::new();
        Ok(())
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.stop();
        if !self.dir.as_os_str().is_empty() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::path::Path;

    /// A fresh server; fails the test when none starts. A test that calls
    /// it is ignored unless the build found `redis-server` (`build.rs`).
    pub(crate) fn server() -> RedisServer {
        RedisServer::start().unwrap_or_else(|e| {
            panic!(
                "cannot start `{}` ({e}): this test needs a real Redis (apt-get install redis-server)",
                binary()
            )
        })
    }

    /// Run as a child process by the test below, with the environment it is
    /// about: a role, not a test of its own.
    #[test]
    #[ignore = "a role: the_binary_comes_from_the_environment runs it in a child process"]
    fn environment_child() {
        let Ok(expect) = std::env::var("TRIPWORD_REDIS_TEST_EXPECT") else {
            return;
        };
        let (bin, runnable) = expect.split_once('|').unwrap();
        assert_eq!(binary(), bin);
        assert_eq!(available(), runnable == "yes");
    }

    #[test]
    fn the_binary_comes_from_the_environment() {
        let empty = std::env::temp_dir().join(format!("tripword-empty-{}", std::process::id()));
        std::fs::create_dir_all(&empty).unwrap();
        let cases: [(Option<&str>, &str); 3] = [
            (
                Some("/nonexistent/redis-server"),
                "/nonexistent/redis-server|no",
            ),
            (Some("true"), "true|yes"),
            (None, "redis-server|no"),
        ];
        for (var, expect) in cases {
            let mut child = Command::new(std::env::current_exe().unwrap());
            child
                .args(["--exact", "server::tests::environment_child", "--ignored"])
                .arg("--quiet")
                .env("TRIPWORD_REDIS_TEST_EXPECT", expect)
                // No redis-server on the child's PATH (`true` is found by path).
                .env(
                    "PATH",
                    if var == Some("true") {
                        "/bin:/usr/bin"
                    } else {
                        empty.to_str().unwrap()
                    },
                )
                .stderr(Stdio::null());
            match var {
                Some(v) => child.env("TRIPWORD_REDIS_SERVER", v),
                None => child.env_remove("TRIPWORD_REDIS_SERVER"),
            };
            let out = child.output().unwrap();
            assert!(out.status.success(), "case {expect}");
            // The role ran (a filter that picks no test succeeds too).
            let summary = String::from_utf8_lossy(&out.stdout);
            assert!(summary.contains(" 1 passed;"), "case {expect}: {summary}");
        }
        let _ = std::fs::remove_dir(&empty);
    }

    /// A listener on a free port that answers each connection with `reply`
    /// after reading the request (`None`: closes without a word).
    fn fake(reply: Option<&'static [u8]>) -> RedisServer {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            for s in listener.incoming() {
                let Ok(mut s) = s else { return };
                let mut buf = [0u8; 6];
                let _ = s.read_exact(&mut buf);
                if let Some(r) = reply {
                    let _ = s.write_all(r);
                }
            }
        });
        RedisServer {
            child: None,
            port,
            dir: PathBuf::new(),
        }
    }

    #[test]
    fn ping_wants_pong() {
        assert!(fake(Some(b"+PONG\r\n")).ping());
        assert!(!fake(Some(b"+PANG\r\n")).ping(), "another answer");
        assert!(!fake(None).ping(), "no answer");
        let nobody = {
            let l = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
            l.local_addr().unwrap().port()
        };
        assert!(
            !RedisServer {
                child: None,
                port: nobody,
                dir: PathBuf::new()
            }
            .ping(),
            "nobody listening"
        );
    }

    #[test]
    fn a_server_that_never_answers_is_given_up_and_killed() {
        let dir = std::env::temp_dir().join(format!("tripword-mute-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mute = dir.join("mute-server");
        std::fs::write(&mute, "#!/bin/sh\nexec sleep 30\n").unwrap();
        let chmod = Command::new("chmod")
            .arg("755")
            .arg(&mute)
            .status()
            .unwrap();
        assert!(chmod.success());
        let port = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let e = RedisServer::launch(mute.to_str().unwrap(), port, Duration::from_millis(200))
            .unwrap_err();
        assert!(e.to_string().contains("did not answer within 200ms"), "{e}");
        let e = RedisServer::launch("false", port, Duration::from_secs(20)).unwrap_err();
        assert!(e.to_string().starts_with("redis-server exited"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    #[cfg(target_os = "linux")] // reads /proc
    #[cfg_attr(
        not(tripword_redis_server),
        ignore = "needs redis-server on PATH (apt-get install redis-server)"
    )]
    fn a_dropped_server_is_gone_with_its_folder() {
        let server = server();
        assert_eq!(
            server.url(),
            format!("redis://127.0.0.1:{}/", server.port())
        );
        assert!(server.ping());
        let pid = server.pid().unwrap();
        let dir = server.dir.clone();
        assert!(dir.is_dir());
        // The pid is the server's: it runs in its folder.
        let cwd = std::fs::read_link(format!("/proc/{pid}/cwd")).unwrap();
        assert_eq!(cwd, dir);
        drop(server);
        let proc = format!("/proc/{pid}");
        let alive = Path::new(&proc).exists();
        if alive {
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
        }
        assert!(!alive, "redis-server {pid} outlived its handle");
        assert!(!dir.exists(), "{} left behind", dir.display());
    }
}
