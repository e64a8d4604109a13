//! What a registry reports when a new key finds every breaker kept holding
//! state: a counter (feature `metrics`), a warning once per crossing
//! (feature `tracing`).

/// A lookup that found the registry `name` (of `capacity`) full of
/// breakers holding state; `first`: the first since a new key last found
/// room. Called without the write lock.
// `capacity` is the warning's alone, `first` both reports'.
#[cfg_attr(not(feature = "tracing"), allow(unused_variables))]
pub(super) fn report(name: Option<&str>, capacity: usize, first: bool) {
    #[cfg(feature = "metrics")]
    {
        use crate::observe::names;
        if first {
            metrics::describe_counter!(
                names::REGISTRY_OVERFLOWS,
                metrics::Unit::Count,
                "Lookups of a new key that found a registry full of breakers holding state, and got a breaker not kept ({lookup})."
            );
        }
        metrics::counter!(names::REGISTRY_OVERFLOWS, names::REGISTRY => name.unwrap_or("").to_owned())
            .increment(1);
    }
    #[cfg(feature = "tracing")]
    if first {
        tracing::warn!(
            target: "tripword",
            registry = name.unwrap_or(""),
            capacity,
            "registry full of breakers holding state: new keys get breakers that are not kept"
        );
    }
}
