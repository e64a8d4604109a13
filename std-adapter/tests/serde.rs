//! Settings from config files (feature `serde`).
