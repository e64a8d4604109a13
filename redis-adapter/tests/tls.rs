//! A fleet over TLS (feature `tls`): redis-server with TLS only (`--port
//! 0 --tls-port P`), on 127.0.0.1 on a free port, its certificates made
//! by the test with the `openssl` command (a CA, and a server certificate
//! for 127.0.0.1 and localhost signed by it) in a folder of its own; the
//! client trusts that CA alone (`Builder::tls_roots`). One Redis, Redis
//! Sentinel (sentinels and replication over TLS too) and Redis Cluster
//! (`tls-cluster yes`); a server that asks for client certificates.
//! Every process is killed and reaped, and every folder removed, when the
//! test ends, also when it fails.
//!
//! Ignored unless the build found `redis-server` and `openssl`
//! (`build.rs`); a test that runs without them, or with a redis-server
//! built without TLS, fails.

mod common;
mod life;

use common::{LONG, config, eventually, free_port};
use life::{OPEN_FOR, shared, trip_reject_probe_recover};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tripword::{CircuitBreaker, Outcome, Status};
use tripword_redis::server::binary;
use tripword_redis::{Fleet, Mode, RedisBreaker, Release, Scope};

/// A failover takes seconds: the limit of waits across one.
const FAILOVER: Duration = Duration::from_secs(120);

/// Generous: a loaded machine must not time an operation out by accident.
const OP_TIMEOUT: Duration = Duration::from_secs(2);

/// A folder of its own, removed when dropped.
struct Folder(PathBuf);

impl Folder {
    fn new(what: &str) -> Folder {
        let dir = std::env::temp_dir().join(format!(
            "tripword-tls-{what}-{}-{}",
            std::process::id(),
            free_port()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        Folder(dir)
    }
}

impl Drop for Folder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A CA and a server certificate it signed, for 127.0.0.1 and localhost
/// (also a client certificate: `clientAuth` too), in PEM files.
struct Certs {
    dir: Folder,
}

fn openssl(dir: &Path, args: &[&str]) -> Result<(), String> {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("openssl: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "openssl {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

impl Certs {
    fn make() -> Result<Certs, String> {
        let dir = Folder::new("certs");
        let d = &dir.0;
        std::fs::write(
            d.join("server.ext"),
            "basicConstraints=critical,CA:FALSE\n\
             keyUsage=critical,digitalSignature,keyEncipherment\n\
             extendedKeyUsage=serverAuth,clientAuth\n\
             subjectAltName=IP:127.0.0.1,DNS:localhost\n",
        )
        .map_err(|e| e.to_string())?;
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"];
        let mut ca = vec!["req", "-x509", "-nodes", "-days", "2"];
        ca.extend(ec);
        ca.extend([
            "-keyout",
            "ca.key",
            "-out",
            "ca.crt",
            "-subj",
            "/CN=tripword test CA",
            "-addext",
            "basicConstraints=critical,CA:TRUE",
            "-addext",
            "keyUsage=critical,keyCertSign,cRLSign",
        ]);
        openssl(d, &ca)?;
        let mut csr = vec!["req", "-nodes"];
        csr.extend(ec);
        csr.extend([
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
            "-subj",
            "/CN=localhost",
        ]);
        openssl(d, &csr)?;
        openssl(
            d,
            &[
                "x509",
                "-req",
                "-in",
                "server.csr",
                "-CA",
                "ca.crt",
                "-CAkey",
                "ca.key",
                "-CAcreateserial",
                "-days",
                "2",
                "-extfile",
                "server.ext",
                "-out",
                "server.crt",
            ],
        )?;
        Ok(Certs { dir })
    }

    fn path(&self, name: &str) -> String {
        self.dir.0.join(name).to_str().unwrap().to_owned()
    }

    fn ca(&self) -> Vec<u8> {
        std::fs::read(self.dir.0.join("ca.crt")).unwrap()
    }

    /// The server's TLS settings, as redis-server arguments.
    fn args(&self) -> Vec<String> {
        [
            "--tls-cert-file",
            &self.path("server.crt"),
            "--tls-key-file",
            &self.path("server.key"),
            "--tls-ca-cert-file",
            &self.path("ca.crt"),
            "--tls-auth-clients",
            "no",
        ]
        .map(str::to_owned)
        .to_vec()
    }
}

/// The certificates; fails the test when redis-server is not runnable or
/// openssl makes none.
fn setup() -> Certs {
    assert!(
        tripword_redis::server::available(),
        "`{}` is not runnable: this test needs a real Redis (apt-get install redis-server)",
        binary()
    );
    Certs::make().unwrap_or_else(|e| {
        panic!("no certificates made ({e}): this test needs openssl (apt-get install openssl)")
    })
}

/// A redis-server (or sentinel) on 127.0.0.1, TLS only, in a folder of its
/// own; killed and reaped when dropped.
struct Tls {
    child: Option<Child>,
    port: u16,
    _dir: Folder,
}

impl Tls {
    /// A server with `extra` settings (arguments), or a sentinel with
    /// `sentinel` as its config file's extra lines.
    fn start(certs: &Certs, extra: &[&str], sentinel: Option<&str>) -> Tls {
        let mut last = None;
        for _ in 0..5 {
            match Tls::start_on(free_port(), certs, extra, sentinel) {
                Ok(s) => return s,
                Err(e) => last = Some(e),
            }
        }
        panic!("cannot start a TLS redis-server: {last:?}");
    }

    fn start_on(
        port: u16,
        certs: &Certs,
        extra: &[&str],
        sentinel: Option<&str>,
    ) -> Result<Tls, String> {
        let dir = Folder::new("server");
        let mut cmd = Command::new(binary());
        if let Some(lines) = sentinel {
            // A sentinel rewrites its config file: it must be one.
            let conf = dir.0.join("sentinel.conf");
            let tls = certs.args().chunks(2).fold(String::new(), |s, kv| {
                format!("{s}{} {}\n", kv[0].trim_start_matches("--"), kv[1])
            });
            std::fs::write(
                &conf,
                format!(
                    "port 0\ntls-port {port}\nbind 127.0.0.1\ndir {}\n{tls}tls-replication yes\n{lines}",
                    dir.0.display()
                ),
            )
            .map_err(|e| e.to_string())?;
            cmd.arg(&conf).arg("--sentinel");
        } else {
            cmd.args(["--port", "0", "--tls-port", &port.to_string()])
                .args(["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
                .args(certs.args())
                .args(extra)
                .arg("--dir")
                .arg(&dir.0);
        }
        let child = cmd
            .current_dir(&dir.0)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| e.to_string())?;
        let mut server = Tls {
            child: Some(child),
            port,
            _dir: dir,
        };
        let until = Instant::now() + Duration::from_secs(20);
        loop {
            if server
                .connection(certs, Duration::from_secs(1))
                .and_then(|mut c| redis::cmd("PING").query::<String>(&mut c).ok())
                .is_some()
            {
                return Ok(server);
            }
            if let Some(status) = server.child.as_mut().unwrap().try_wait().unwrap() {
                server.child = None;
                return Err(format!("redis-server exited: {status}"));
            }
            if Instant::now() > until {
                return Err("redis-server did not answer over TLS".into());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn url(&self) -> String {
        format!("rediss://127.0.0.1:{}/", self.port)
    }

    /// A TLS connection trusting the test CA, showing the certificate it
    /// signed.
    fn connection(&self, certs: &Certs, timeout: Duration) -> Option<redis::Connection> {
        let client = redis::Client::build_with_tls(
            self.url(),
            redis::TlsCertificates {
                // Shown to servers that ask for one (`tls-auth-clients`).
                client_tls: Some(redis::ClientTlsConfig {
                    client_cert: std::fs::read(certs.dir.0.join("server.crt")).ok()?,
                    client_key: std::fs::read(certs.dir.0.join("server.key")).ok()?,
                }),
                root_cert: Some(certs.ca()),
            },
        )
        .ok()?;
        let con = client.get_connection_with_timeout(timeout).ok()?;
        con.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
        Some(con)
    }

    fn query<T: redis::FromRedisValue>(&self, certs: &Certs, cmd: &redis::Cmd) -> Option<T> {
        cmd.query(&mut self.connection(certs, Duration::from_secs(5))?)
            .ok()
    }

    fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for Tls {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A TLS-only redis-server with `extra` settings; fails the test when
/// none starts, as when the binary is built without TLS (Debian's is
/// built with it; one without exits at once on `--tls-port`).
fn tls_server(certs: &Certs, extra: &[&str]) -> Tls {
    let mut last = None;
    for _ in 0..3 {
        match Tls::start_on(free_port(), certs, extra, None) {
            Ok(s) => return s,
            Err(e) => last = Some(e),
        }
    }
    panic!(
        "`{}` does not serve TLS ({last:?}): these tests need a redis-server built with TLS",
        binary()
    )
}

/// Three instances (fleets of their own) on one Redis over TLS, trusting
/// the test CA alone: trip, rejections everywhere, one probe, recovery;
/// the async path too. Without the CA, the server's certificate is not
/// trusted: no instance joins.
#[test]
#[cfg_attr(
    not(all(tripword_redis_server, tripword_openssl)),
    ignore = "needs redis-server and openssl on PATH (apt-get install redis-server openssl)"
)]
fn a_fleet_over_tls_trips_rejects_and_recovers() {
    let certs = setup();
    let server = tls_server(&certs, &[]);
    let fleets: Vec<Fleet> = (0..3)
        .map(|_| {
            Fleet::builder(server.url())
                .tls_roots(certs.ca())
                .config(config(1, OPEN_FOR, 60_000_000))
                .op_timeout(OP_TIMEOUT)
                .refresh(Duration::from_millis(200))
                .retry(Duration::from_millis(50))
                .build()
                .unwrap()
        })
        .collect();
    let instances: Vec<RedisBreaker> = fleets.iter().map(|f| f.breaker("tls")).collect();
    trip_reject_probe_recover(&instances);

    // The async path: its own multiplexed connection, over TLS too.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let a = &instances[0];
    rt.block_on(async {
        let t = a.acquire_async().get().await.unwrap();
        assert_eq!(t.scope(), Scope::Shared);
        assert_eq!(
            a.release_async(t, Outcome::Failure.into()).get().await,
            tripword::Release::Recorded
        );
    });
    assert_eq!(a.mode(), Mode::Shared, "recorded in the shared word");
    let tripped = a.word();
    for b in &instances {
        assert!(eventually(LONG, || b.word() == tripped));
    }

    // The server's certificate is signed by a CA the system does not know.
    let stranger = RedisBreaker::builder(server.url(), "tls")
        .op_timeout(OP_TIMEOUT)
        .build()
        .unwrap();
    assert!(stranger.sync().is_err(), "an unknown CA is refused");
    assert_eq!(stranger.mode(), Mode::Local);
}

/// The certificate shown by the server names 127.0.0.1 and localhost: a
/// URL by either name is trusted; the same server by another name is not.
#[test]
#[cfg_attr(
    not(all(tripword_redis_server, tripword_openssl)),
    ignore = "needs redis-server and openssl on PATH (apt-get install redis-server openssl)"
)]
fn the_servers_name_is_checked() {
    let certs = setup();
    // Listening on 127.0.0.2 too, a name its certificate does not carry.
    let server = tls_server(&certs, &["--bind", "127.0.0.1 127.0.0.2"]);
    let breaker = |url: String| {
        RedisBreaker::builder(url, "name")
            .tls_roots(certs.ca())
            .op_timeout(OP_TIMEOUT)
            .build()
            .unwrap()
    };
    assert!(breaker(server.url()).sync().is_ok());
    assert!(
        breaker(format!("rediss://localhost:{}/", server.port))
            .sync()
            .is_ok()
    );
    // The same server, by an address the certificate does not carry.
    assert!(
        breaker(format!("rediss://127.0.0.2:{}/", server.port))
            .sync()
            .is_err()
    );
}

/// A server that asks every client for a certificate signed by the CA
/// (`tls-auth-clients yes`): an instance that shows none is refused and
/// stays local; one that shows one (`tls_client_auth`) joins and trips
/// the fleet.
#[test]
#[cfg_attr(
    not(all(tripword_redis_server, tripword_openssl)),
    ignore = "needs redis-server and openssl on PATH (apt-get install redis-server openssl)"
)]
fn a_server_that_asks_for_client_certificates_gets_one() {
    let certs = setup();
    let server = tls_server(&certs, &["--tls-auth-clients", "yes"]);
    let builder = || {
        RedisBreaker::builder(server.url(), "mtls")
            .tls_roots(certs.ca())
            .config(config(1, 60_000_000, 60_000_000))
            .op_timeout(OP_TIMEOUT)
    };
    let anonymous = builder().build().unwrap();
    assert!(anonymous.sync().is_err(), "no client certificate: refused");
    assert_eq!(anonymous.mode(), Mode::Local);
    let read = |name: &str| std::fs::read(certs.dir.0.join(name)).unwrap();
    let known = builder()
        .tls_client_auth(read("server.crt"), read("server.key"))
        .build()
        .unwrap();
    assert!(eventually(LONG, || shared(&known)));
    let t = known.acquire().unwrap();
    assert_eq!(known.release(t, Outcome::Failure), Release::Recorded);
    assert_eq!(known.status(), Status::Open);
}

/// The service the sentinels watch.
const SERVICE: &str = "tripword-tls";

/// The fleet's user on the servers behind Sentinel, as
/// `docs/distributed-security.md` gives it, for breakers keyed `tls`: the
/// one Redis's rule, and `ROLE`.
const SENTINEL_PRIMARY_RULE: &[&str] = &[
    "fleet",
    "on",
    ">pw",
    "resetkeys",
    "resetchannels",
    "~tls",
    "~tls:*",
    "&tripword:*",
    "-@all",
    "+evalsha",
    "+script|load",
    "+get",
    "+set",
    "+publish",
    "+time",
    "+zadd",
    "+zremrangebyscore",
    "+zcard",
    "+pexpire",
    "+zrem",
    "+del",
    "+wait",
    "+psubscribe",
    "+punsubscribe",
    "+unsubscribe",
    "+role",
];

/// The fleet's user on the sentinels.
const SENTINEL_RULE: &[&str] = &[
    "fleet",
    "on",
    ">pw",
    "resetchannels",
    "&+switch-master",
    "-@all",
    "+sentinel|get-master-addr-by-name",
    "+subscribe",
    "+unsubscribe",
    "+punsubscribe",
];

fn field(info: &str, name: &str) -> Option<String> {
    info.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
        .map(|v| v.trim().to_owned())
}

/// How many entries `SENTINEL <what> <service>` lists on `sentinel`.
fn listed(certs: &Certs, sentinel: &Tls, what: &str) -> usize {
    sentinel
        .query::<Vec<redis::Value>>(certs, redis::cmd("SENTINEL").arg(what).arg(SERVICE))
        .map_or(0, |v| v.len())
}

/// The port of the primary `sentinel` names.
fn named(certs: &Certs, sentinel: &Tls) -> Option<u16> {
    let (_, port): (String, String) = sentinel.query(
        certs,
        redis::cmd("SENTINEL")
            .arg("GET-MASTER-ADDR-BY-NAME")
            .arg(SERVICE),
    )?;
    port.parse().ok()
}

/// A primary, its replica and three sentinels, all TLS only (replication
/// and the sentinels' links too); two instances follow the primary the
/// sentinels name, over TLS, as the ACL users of
/// `docs/distributed-security.md` (on the servers, and on the sentinels):
/// a trip reaches the replica, the primary is killed, the replica
/// promoted, and both instances follow it with the trip kept; then the
/// fleet's life goes on there.
#[test]
#[cfg_attr(
    not(all(tripword_redis_server, tripword_openssl)),
    ignore = "needs redis-server and openssl on PATH (apt-get install redis-server openssl)"
)]
fn a_fleet_follows_a_failover_over_tls() {
    let certs = setup();
    let primary = tls_server(&certs, &["--tls-replication", "yes"]);
    let mut primary = Some(primary);
    let primary_port = primary.as_ref().unwrap().port.to_string();
    let replica = Tls::start(
        &certs,
        &[
            "--tls-replication",
            "yes",
            "--replicaof",
            "127.0.0.1",
            &primary_port,
        ],
        None,
    );
    let info = |s: &Tls| -> String {
        s.query(&certs, redis::cmd("INFO").arg("replication"))
            .unwrap_or_default()
    };
    assert!(
        eventually(FAILOVER, || {
            let info = info(&replica);
            field(&info, "master_link_status").as_deref() == Some("up")
                && field(&info, "master_sync_in_progress").as_deref() == Some("0")
        }),
        "the replica never synced over TLS: {}",
        info(&replica)
    );
    let monitor = format!(
        "sentinel monitor {SERVICE} 127.0.0.1 {primary_port} 2\n\
         sentinel down-after-milliseconds {SERVICE} 500\n\
         sentinel failover-timeout {SERVICE} 2000\n"
    );
    let sentinels: Vec<Tls> = (0..3)
        .map(|_| Tls::start(&certs, &[], Some(&monitor)))
        .collect();
    assert!(
        eventually(FAILOVER, || sentinels
            .iter()
            .all(
                |s| listed(&certs, s, "REPLICAS") == 1 && listed(&certs, s, "SENTINELS") == 2
            )),
        "the sentinels never found each other over TLS"
    );

    // The users: ACLs are not replicated, each server has its own.
    let setuser = |s: &Tls, rule: &[&str]| {
        let mut cmd = redis::cmd("ACL");
        cmd.arg("SETUSER").arg(rule);
        assert_eq!(s.query::<String>(&certs, &cmd).as_deref(), Some("OK"));
    };
    setuser(primary.as_ref().unwrap(), SENTINEL_PRIMARY_RULE);
    setuser(&replica, SENTINEL_PRIMARY_RULE);
    for s in &sentinels {
        setuser(s, SENTINEL_RULE);
    }
    let fleets: Vec<Fleet> = (0..2)
        .map(|_| {
            // Only the settings of this URL are used (TLS, the user): the
            // sentinels name the host.
            Fleet::builder("rediss://fleet:pw@127.0.0.1:1/")
                .sentinel(
                    sentinels
                        .iter()
                        .map(|s| format!("rediss://fleet:pw@127.0.0.1:{}/", s.port)),
                    SERVICE,
                )
                .tls_roots(certs.ca())
                .config(config(1, OPEN_FOR, 60_000_000))
                .op_timeout(OP_TIMEOUT)
                .refresh(Duration::from_millis(200))
                .retry(Duration::from_millis(50))
                .build()
                .unwrap()
        })
        .collect();
    let (a, b) = (fleets[0].breaker("tls"), fleets[1].breaker("tls"));
    assert!(eventually(LONG, || shared(&a) && shared(&b)));
    let t = a.acquire().unwrap();
    assert_eq!(a.release(t, Outcome::Failure), Release::Recorded);
    let tripped = a.word();
    let on_replica = || {
        replica
            .query::<Option<String>>(&certs, redis::cmd("GET").arg("tls"))
            .flatten()
    };
    assert!(eventually(LONG, || on_replica() == Some(tripped.to_string())));
    assert!(eventually(LONG, || b.word() == tripped));

    let killed = Instant::now();
    primary.take().unwrap().stop();
    assert!(
        eventually(FAILOVER, || sentinels
            .iter()
            .all(|s| named(&certs, s) == Some(replica.port))),
        "no failover to the replica"
    );
    let promoted = killed.elapsed();
    assert!(
        eventually(FAILOVER, || shared(&a) && shared(&b)),
        "the fleet joins the new primary"
    );
    let _ = writeln!(
        std::io::stderr(),
        "failover over TLS: replica promoted {promoted:?} after the kill; the fleet joined it {:?} after the kill",
        killed.elapsed()
    );
    assert_eq!(
        (a.word(), b.word()),
        (tripped, tripped),
        "the trip survived"
    );
    // A probe on the new primary closes it; then a whole life there.
    let mut probe = None;
    assert!(eventually(LONG, || {
        probe = a.acquire().ok();
        probe.is_some()
    }));
    assert_eq!(
        a.release(probe.unwrap(), Outcome::Success),
        Release::Recorded
    );
    assert!(eventually(LONG, || b.status() == Status::Closed));
    trip_reject_probe_recover(&[a, b]);
    // Nothing the fleet sent was refused, on a server or a sentinel.
    for s in std::iter::once(&replica).chain(&sentinels) {
        assert_eq!(denied(&certs, s), 0, "refused on {}", s.url());
    }
}

/// How many refusals `ACL LOG` lists on `server`.
fn denied(certs: &Certs, server: &Tls) -> usize {
    server
        .query::<Vec<redis::Value>>(certs, redis::cmd("ACL").arg("LOG"))
        .expect("ACL LOG")
        .len()
}

/// The fleet's user on a Redis Cluster, as `docs/distributed-security.md`
/// gives it, for breakers keyed `breaker:*`.
const CLUSTER_RULE: &[&str] = &[
    "fleet",
    "on",
    ">pw",
    "resetkeys",
    "resetchannels",
    "~breaker:*",
    "~tripword:*",
    "&tripword:*",
    "-@all",
    "+evalsha",
    "+script|load",
    "+get",
    "+set",
    "+spublish",
    "+time",
    "+zadd",
    "+zremrangebyscore",
    "+zcard",
    "+pexpire",
    "+zrem",
    "+del",
    "+ssubscribe",
    "+sunsubscribe",
    "+cluster|slots",
    "+asking",
    "+ping",
];

/// Three primaries of a Redis Cluster, TLS only, their cluster bus too
/// (`tls-cluster yes`), the slots assigned and the nodes met by hand (no
/// `redis-cli` needed); three instances (fleets of their own) on it over
/// TLS, as the cluster's ACL user of `docs/distributed-security.md`: the
/// fleet's life on keys in three slots, its changes published and
/// subscribed per shard over TLS; the async form too.
#[test]
#[cfg_attr(
    not(all(tripword_redis_server, tripword_openssl)),
    ignore = "needs redis-server and openssl on PATH (apt-get install redis-server openssl)"
)]
fn a_fleet_on_a_cluster_over_tls() {
    let certs = setup();
    let mut nodes = Vec::new();
    for _ in 0..3 {
        let bus = free_port().to_string();
        let node = tls_server(
            &certs,
            &[
                "--cluster-enabled",
                "yes",
                "--cluster-port",
                &bus,
                "--tls-cluster",
                "yes",
                "--cluster-node-timeout",
                "60000",
            ],
        );
        nodes.push((node, bus));
    }
    let ranges = [(0, 5460), (5461, 10922), (10923, 16383)];
    for ((node, _), (start, end)) in nodes.iter().zip(ranges) {
        let done: Option<String> = node.query(
            &certs,
            redis::cmd("CLUSTER")
                .arg("ADDSLOTSRANGE")
                .arg(start)
                .arg(end),
        );
        assert_eq!(done.as_deref(), Some("OK"));
    }
    for (node, bus) in &nodes[1..] {
        let met: Option<String> = nodes[0].0.query(
            &certs,
            redis::cmd("CLUSTER")
                .arg("MEET")
                .arg("127.0.0.1")
                .arg(node.port)
                .arg(bus),
        );
        assert_eq!(met.as_deref(), Some("OK"));
    }
    for (node, _) in &nodes {
        let mut setuser = redis::cmd("ACL");
        setuser.arg("SETUSER").arg(CLUSTER_RULE);
        assert_eq!(
            node.query::<String>(&certs, &setuser).as_deref(),
            Some("OK")
        );
    }
    let as_user = |n: &Tls| format!("rediss://fleet:pw@127.0.0.1:{}/", n.port);
    assert!(
        eventually(FAILOVER, || nodes.iter().all(|(n, _)| {
            n.query::<String>(&certs, redis::cmd("CLUSTER").arg("INFO"))
                .is_some_and(|info| field(&info, "cluster_state").as_deref() == Some("ok"))
        })),
        "the cluster never formed over TLS"
    );
    let fleets: Vec<Fleet> = (0..3)
        .map(|i| {
            Fleet::builder(as_user(&nodes[i].0))
                .cluster(nodes.iter().map(|(n, _)| as_user(n)))
                .tls_roots(certs.ca())
                .config(config(1, OPEN_FOR, 60_000_000))
                .op_timeout(OP_TIMEOUT)
                .refresh(Duration::from_millis(200))
                .retry(Duration::from_millis(50))
                .build()
                .unwrap()
        })
        .collect();
    for key in ["breaker:a", "breaker:b", "breaker:c"] {
        let instances: Vec<RedisBreaker> = fleets.iter().map(|f| f.breaker(key)).collect();
        trip_reject_probe_recover(&instances);
    }
    // The async form, on its async cluster connection over TLS.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let a = fleets[0].breaker("breaker:async");
    assert!(eventually(LONG, || shared(&a)));
    rt.block_on(async {
        let t = a.acquire_async().get().await.unwrap();
        assert_eq!(t.scope(), Scope::Shared);
        assert_eq!(
            a.release_async(t, Outcome::Failure.into()).get().await,
            tripword::Release::Recorded
        );
    });
    assert_eq!(a.mode(), Mode::Shared, "recorded in the shared word");
    let b = fleets[1].breaker("breaker:async");
    assert!(eventually(LONG, || b.word() == a.word()));
    // Nothing the fleet sent was refused.
    for (n, _) in &nodes {
        assert_eq!(denied(&certs, n), 0, "refused on {}", n.url());
    }
}
