//! How connections are opened, over TLS or not: every client of a hub (to
//! the one Redis, the sentinels, the primary they name, a cluster's nodes)
//! is made here.
//!
//! A `rediss://` URL is reached over TLS (feature `tls`, for the sync and
//! the async form), with rustls: the server's certificate is checked
//! against the roots given to the builder ([`Builder::tls_roots`](crate::Builder::tls_roots)),
//! or the system's when none are given; a client certificate is shown
//! when one is given ([`Builder::tls_client_auth`](crate::Builder::tls_client_auth)).
//! A server named by another (the primary a sentinel names, a cluster
//! node in the slot map) is reached as the server that named it was
//! configured to be: over TLS when its URL is `rediss://`.
//!
//! rustls needs a crypto provider: when the process has none installed at
//! the first TLS client, rustls' `ring` provider is installed as the
//! process default (an application that installs another one first keeps
//! it).

use redis::{Client, ConnectionAddr, ConnectionInfo, RedisResult};

/// The certificates of a hub's TLS connections.
#[derive(Clone, Debug, Default)]
pub(crate) struct Tls {
    /// The roots to trust (PEM) and the client's certificate and key.
    #[cfg(feature = "tls")]
    pub(crate) certs: Option<redis::TlsCertificates>,
}

impl Tls {
    /// A client of `info`: over TLS, with the certificates, when its
    /// address is a `rediss://` one.
    pub(crate) fn client(&self, info: ConnectionInfo) -> RedisResult<Client> {
        #[cfg(feature = "tls")]
        if let ConnectionAddr::TcpTls { .. } = info.addr() {
            provider();
            if let Some(certs) = &self.certs {
                return Client::build_with_tls(info, certs.clone());
            }
        }
        Client::open(info)
    }

    /// The roots and client certificate set for `rediss://` URLs, if any.
    #[cfg(all(feature = "tls", feature = "cluster"))]
    pub(crate) fn certificates(&self) -> Option<&redis::TlsCertificates> {
        self.certs.as_ref()
    }

    /// The roots to trust (PEM, one certificate or more).
    #[cfg(feature = "tls")]
    pub(crate) fn set_roots(&mut self, pem: Vec<u8>) {
        self.certs
            .get_or_insert(redis::TlsCertificates {
                client_tls: None,
                root_cert: None,
            })
            .root_cert = Some(pem);
    }

    /// The certificate (PEM chain) and private key (PEM) the client shows.
    #[cfg(feature = "tls")]
    pub(crate) fn set_client_auth(&mut self, cert: Vec<u8>, key: Vec<u8>) {
        self.certs
            .get_or_insert(redis::TlsCertificates {
                client_tls: None,
                root_cert: None,
            })
            .client_tls = Some(redis::ClientTlsConfig {
            client_cert: cert,
            client_key: key,
        });
    }
}

/// `host:port` reached as `like` is: over TLS (checking the host name the
/// same way) when `like` is a TLS address.
pub(crate) fn addr_like(like: &ConnectionAddr, host: String, port: u16) -> ConnectionAddr {
    match like {
        ConnectionAddr::TcpTls { insecure, .. } => ConnectionAddr::TcpTls {
            host,
            port,
            insecure: *insecure,
            tls_params: None,
        },
        _ => ConnectionAddr::Tcp(host, port),
    }
}

/// Installs rustls' `ring` provider as the process default, unless one is
/// installed already.
#[cfg(feature = "tls")]
pub(crate) fn provider() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // Another thread may install one meanwhile: then that one stays.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_named_server_is_reached_as_the_one_that_named_it() {
        let plain = ConnectionAddr::Tcp("a".into(), 1);
        assert_eq!(
            addr_like(&plain, "b".into(), 2),
            ConnectionAddr::Tcp("b".into(), 2)
        );
        let tls = ConnectionAddr::TcpTls {
            host: "a".into(),
            port: 1,
            insecure: false,
            tls_params: None,
        };
        assert!(matches!(
            addr_like(&tls, "b".into(), 2),
            ConnectionAddr::TcpTls { ref host, port: 2, insecure: false, .. } if host == "b"
        ));
    }
}
