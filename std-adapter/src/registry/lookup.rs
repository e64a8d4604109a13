//! [`Lookup`], where a breaker is found by key: what the per-key tower
//! layer picks each request's breaker from.

use std::borrow::Borrow;
use std::hash::Hash;
use std::sync::Arc;

use tripword::kit::CircuitBreaker;

use super::entry::Entry;
use super::map::Registry;

/// Where a breaker is found by key: a [`Registry`] (`Q` is the key as looked up: the registry's key type, or a borrowed
/// form of it, `&str` for a `String`). What the tower layer
/// `tripword_std::tower::RegistryLayer` picks each request's breaker from;
/// implement it to put another map of breakers behind that layer.
///
/// ```
/// use tripword::Status;
/// use tripword_std::registry::Lookup;
/// use tripword_std::{CircuitBreaker, Registry, Settings};
///
/// fn status_of<R: Lookup<str>>(registry: &R, key: &str) -> Status {
///     registry.lookup(key).status()
/// }
/// let hosts: Registry<String> = Registry::from_settings(&Settings::new().into())?;
/// assert_eq!(status_of(&hosts, "db-1"), Status::Closed);
/// # Ok::<(), tripword_std::RegistrySettingsError>(())
/// ```
pub trait Lookup<Q: ?Sized> {
    /// The breaker found (an [`Entry`] for a [`Registry`]).
    type Breaker: CircuitBreaker;

    /// `key`'s breaker, made now if there is none, as a handle to keep.
    fn lookup(&self, key: &Q) -> Arc<Self::Breaker>;
}

impl<K, B, Q> Lookup<Q> for Registry<K, B>
where
    K: Hash + Eq + Clone + Send + Sync + 'static + Borrow<Q>,
    B: CircuitBreaker + Send + Sync + 'static,
    Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
{
    type Breaker = Entry<K, B>;

    #[inline]
    fn lookup(&self, key: &Q) -> Arc<Entry<K, B>> {
        self.get(key)
    }
}
