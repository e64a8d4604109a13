//! A connection the blocking operations run on: to the one Redis, or to a
//! cluster.

use redis::{Cmd, Connection, ConnectionLike, RedisResult, Value};
use std::time::Duration;

/// A connection the operations of a hub run on: to the one Redis, or
/// (feature `cluster`) to a Redis Cluster, each command sent to the node
/// owning its first key's slot, `MOVED` and `ASK` redirections followed.
pub(crate) enum Con {
    /// To the one Redis of the hub.
    Node(Connection),
    /// To the cluster.
    #[cfg(feature = "cluster")]
    Cluster(Box<redis::cluster::ClusterConnection>),
}

impl Con {
    /// Bounds every read and write from now on by `left`.
    pub(crate) fn set_timeouts(&self, left: Duration) -> RedisResult<()> {
        match self {
            Con::Node(con) => {
                con.set_read_timeout(Some(left))?;
                con.set_write_timeout(Some(left))
            }
            #[cfg(feature = "cluster")]
            Con::Cluster(con) => {
                con.set_read_timeout(Some(left))?;
                con.set_write_timeout(Some(left))
            }
        }
    }

    /// The server's `TIME` (seconds, microseconds), read on the node that
    /// owns `key` (the one Redis when there is no cluster).
    #[cfg_attr(not(feature = "cluster"), allow(unused_variables))]
    pub(crate) fn time(&mut self, key: &str) -> RedisResult<(u64, u64)> {
        match self {
            Con::Node(con) => redis::cmd("TIME").query(con),
            #[cfg(feature = "cluster")]
            Con::Cluster(con) => super::cluster::time(con, key),
        }
    }
}

impl ConnectionLike for Con {
    fn req_packed_command(&mut self, cmd: &[u8]) -> RedisResult<Value> {
        match self {
            Con::Node(con) => con.req_packed_command(cmd),
            #[cfg(feature = "cluster")]
            Con::Cluster(con) => con.req_packed_command(cmd),
        }
    }

    fn req_packed_commands(
        &mut self,
        cmd: &[u8],
        offset: usize,
        count: usize,
    ) -> RedisResult<Vec<Value>> {
        match self {
            Con::Node(con) => con.req_packed_commands(cmd, offset, count),
            #[cfg(feature = "cluster")]
            Con::Cluster(con) => con.req_packed_commands(cmd, offset, count),
        }
    }

    fn req_command(&mut self, cmd: &Cmd) -> RedisResult<Value> {
        match self {
            Con::Node(con) => con.req_command(cmd),
            #[cfg(feature = "cluster")]
            Con::Cluster(con) => con.req_command(cmd),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Con::Node(con) => con.get_db(),
            #[cfg(feature = "cluster")]
            Con::Cluster(con) => con.get_db(),
        }
    }

    fn check_connection(&mut self) -> bool {
        match self {
            Con::Node(con) => con.check_connection(),
            #[cfg(feature = "cluster")]
            Con::Cluster(con) => con.check_connection(),
        }
    }

    fn is_open(&self) -> bool {
        match self {
            Con::Node(con) => con.is_open(),
            #[cfg(feature = "cluster")]
            Con::Cluster(con) => con.is_open(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The connection enum forwards what the `redis` crate asks of a
    /// connection to the one it holds.
    #[test]
    #[cfg_attr(
        not(tripword_redis_server),
        ignore = "needs redis-server on PATH (apt-get install redis-server)"
    )]
    fn a_node_connection_forwards_to_its_connection() {
        let mut server = crate::server::tests::server();
        let url = format!("redis://127.0.0.1:{}/3", server.port());
        let client = redis::Client::open(url).unwrap();
        let mut con = Con::Node(client.get_connection().unwrap());
        assert_eq!(con.get_db(), 3);
        assert!(con.is_open());
        assert!(con.check_connection());
        server.stop();
        assert!(!con.check_connection(), "the server is gone");
        assert!(!con.is_open(), "closed by the failed check");
    }
}
