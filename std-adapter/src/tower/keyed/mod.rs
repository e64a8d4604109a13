//! [`RegistryLayer`]: a breaker per key (a host, a route), picked from a
//! registry for each request.

// `future` <- `service` <- `layer`, as in the folder above.

mod future;
mod layer;
mod service;

pub use future::KeyedResponseFuture;
pub use layer::RegistryLayer;
pub use service::RegistryService;
