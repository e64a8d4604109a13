//! The kit's async driver (`tripword::cell::update_async`) checked on a
//! tokio runtime. Everything is in `tests/`: `async_driver.rs` (the sync and
//! async drivers agree step by step; racing tasks elect one probe per round)
//! and `async_linearizability.rs` (Wing–Gong histories of tokio tasks on an
//! async cell). See `docs/verification-kit.md`.
