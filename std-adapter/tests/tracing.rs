//! TracingObserver events.
