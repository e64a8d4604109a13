//! The seal of [`CallResult`](crate::call::CallResult): only a `Result`
//! is one.

/// Implemented by `Result` alone.
pub trait Sealed {}

impl<T, E> Sealed for Result<T, E> {}
