//! Interned key texts: the `Debug` text of a per-key rejection's key, kept
//! whole for the life of the process so that a
//! [`Rejection`](crate::Rejection) stays `Copy` and three words.
//!
//! Read-mostly: a key already seen is found under a read lock, so a storm
//! of rejections for the same keys does not serialise on a writer. The set
//! is bounded ([`CAPACITY`] texts, [`BUDGET`] bytes): past it, a new text
//! is not kept and the rejection carries no key. A text is never cut: one
//! longer than [`MAX_LEN`] is not kept either, so that two keys never read
//! back alike (a cut once made two long URLs that differ only past it one
//! text).

use core::fmt::{self, Write};
use std::collections::HashSet;
use std::sync::{OnceLock, PoisonError, RwLock};

/// The most distinct key texts kept.
pub(crate) const CAPACITY: usize = 65_536;

/// The most bytes of key text kept, all texts together (16 MiB: as many
/// as 65 536 texts of 256 bytes).
pub(crate) const BUDGET: usize = 16 << 20;

/// The longest key text kept, in bytes (8 KiB, the longest request line
/// most HTTP servers take); a longer key is not kept, and a rejection for
/// it carries no key. Formatting stops there, so a rejection never formats
/// more of a key than this.
pub(crate) const MAX_LEN: usize = 8 << 10;

/// The texts kept, and their bytes.
#[derive(Default)]
struct Kept {
    texts: HashSet<&'static str>,
    bytes: usize,
}

/// How much a set keeps.
#[derive(Clone, Copy)]
struct Limits {
    texts: usize,
    bytes: usize,
}

const LIMITS: Limits = Limits {
    texts: CAPACITY,
    bytes: BUDGET,
};

fn set() -> &'static RwLock<Kept> {
    static SET: OnceLock<RwLock<Kept>> = OnceLock::new();
    SET.get_or_init(RwLock::default)
}

/// The interned `Debug` text of `key`, whole, after a NUL (the mark a
/// [`Rejection`](crate::Rejection) tells a key from a name by); `None` for
/// a text longer than [`MAX_LEN`] (or a `Debug` that fails), and once the
/// set is full and this text is not in it.
pub(crate) fn intern_key<K: fmt::Debug + ?Sized>(key: &K) -> Option<&'static str> {
    let mut text = Bounded(String::from("\0"));
    write!(text, "{key:?}").ok()?;
    intern(set(), LIMITS, &text.0)
}

fn intern(set: &RwLock<Kept>, limits: Limits, text: &str) -> Option<&'static str> {
    if let Some(&kept) = set
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .texts
        .get(text)
    {
        return Some(kept);
    }
    let mut set = set.write().unwrap_or_else(PoisonError::into_inner);
    if let Some(&kept) = set.texts.get(text) {
        return Some(kept);
    }
    if set.texts.len() >= limits.texts || set.bytes + text.len() > limits.bytes {
        return None;
    }
    let kept: &'static str = Box::leak(text.to_owned().into_boxed_str());
    set.texts.insert(kept);
    set.bytes += kept.len();
    Some(kept)
}

/// A `String` that takes a mark and at most [`MAX_LEN`] bytes more, then
/// fails.
struct Bounded(String);

impl Write for Bounded {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        if self.0.len() + s.len() > 1 + MAX_LEN {
            return Err(fmt::Error);
        }
        self.0.push_str(s);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_text_is_kept_once() {
        let a = intern_key("intern-test-a").unwrap();
        let b = intern_key(&String::from("intern-test-a")).unwrap();
        assert_eq!(a, "\0\"intern-test-a\"");
        assert!(core::ptr::eq(a, b), "one allocation per distinct text");
    }

    /// A text of exactly `MAX_LEN` bytes is kept whole; one byte more is
    /// not kept at all, never cut.
    #[test]
    fn a_long_key_is_kept_whole_or_not_at_all() {
        // Quoted: the `Debug` text of a string is two bytes longer.
        let longest = "é".repeat((MAX_LEN - 2) / 2);
        let text = intern_key(&longest).unwrap();
        assert_eq!(text.len(), 1 + MAX_LEN);
        assert_eq!(text, format!("\0{longest:?}"));
        assert_eq!(intern_key(&format!("{longest}x")), None);
        assert_eq!(intern_key(&"x".repeat(10 * MAX_LEN)), None);
    }

    #[test]
    fn past_capacity_a_new_text_is_not_kept_but_a_kept_one_is_found() {
        let set = RwLock::default();
        let limits = Limits {
            texts: 2,
            bytes: BUDGET,
        };
        let kept = intern(&set, limits, "kept").unwrap();
        assert!(intern(&set, limits, "second").is_some());
        assert_eq!(intern(&set, limits, "third"), None);
        assert!(core::ptr::eq(intern(&set, limits, "kept").unwrap(), kept));
        assert_eq!(set.read().unwrap().texts.len(), 2);
    }

    /// The bytes kept stay within the budget: a text that would pass it is
    /// not kept, a shorter one still is.
    #[test]
    fn past_the_byte_budget_a_new_text_is_not_kept() {
        let set = RwLock::default();
        let limits = Limits {
            texts: CAPACITY,
            bytes: 10,
        };
        assert!(intern(&set, limits, "123456").is_some());
        assert_eq!(intern(&set, limits, "12345"), None, "11 bytes");
        assert!(intern(&set, limits, "1234").is_some(), "10 bytes");
        assert_eq!(intern(&set, limits, "1"), None);
        assert_eq!(set.read().unwrap().bytes, 10);
        assert!(intern(&set, limits, "1234").is_some(), "kept: found");
    }
}
