//! Constructors written once for both builds: `const fn` normally, plain `fn`
//! under `--cfg tripword_loom`, whose atomics cannot be built in a `const`.

/// Defines the `pub fn` it wraps as `pub const fn`, except under
/// `tripword_loom`.
macro_rules! constructor {
    ($(#[$meta:meta])* pub fn $name:ident $($rest:tt)*) => {
        #[cfg(not(tripword_loom))]
        $(#[$meta])*
        pub const fn $name $($rest)*
        #[cfg(tripword_loom)]
        $(#[$meta])*
        pub fn $name $($rest)*
    };
}

/// A new cell of word width `$w` holding the initial word (`Closed`,
/// counter 0).
#[cfg(not(tripword_loom))]
macro_rules! initial_cell {
    ($w:ty) => {
        <$w as $crate::word::Word>::NEW_CELL
    };
}
#[cfg(tripword_loom)]
macro_rules! initial_cell {
    ($w:ty) => {
        <$w as $crate::word::Word>::new_cell(<$w as $crate::word::Word>::from_u64(0))
    };
}
