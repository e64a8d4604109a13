//! Interned key texts: the `Debug` text of a per-key rejection's key, kept
//! for the life of the process so that a [`Rejection`](crate::Rejection)
//! stays `Copy` and three words.
//!
//! Read-mostly: a key already seen is found under a read lock, so a storm
//! of rejections for the same keys does not serialise on a writer. The set
//! is bounded ([`CAPACITY`] texts): past it, a new text is not kept and the
//! rejection carries no key.

use core::fmt::{self, Write};
use std::collections::HashSet;
use std::sync::{OnceLock, PoisonError, RwLock};

/// The most distinct key texts kept.
pub(crate) const CAPACITY: usize = 65_536;

/// The longest key text kept, in bytes; a longer one is cut at a character
/// boundary and ends in `…`.
const MAX_LEN: usize = 256;

fn set() -> &'static RwLock<HashSet<&'static str>> {
    static SET: OnceLock<RwLock<HashSet<&'static str>>> = OnceLock::new();
    SET.get_or_init(|| RwLock::new(HashSet::new()))
}

/// The interned `Debug` text of `key` after a NUL (the mark a
/// [`Rejection`](crate::Rejection) tells a key from a name by), or `None`
/// once [`CAPACITY`] distinct texts are kept and this one is not among
/// them.
pub(crate) fn intern_key<K: fmt::Debug + ?Sized>(key: &K) -> Option<&'static str> {
    let mut text = Bounded(String::from("\0"));
    // `Bounded` stops writing at MAX_LEN: an error here only means "cut".
    let cut = write!(text, "{key:?}").is_err();
    let mut text = text.0;
    if cut {
        text.push('…');
    }
    intern(set(), CAPACITY, &text)
}

fn intern(
    set: &RwLock<HashSet<&'static str>>,
    capacity: usize,
    text: &str,
) -> Option<&'static str> {
    if let Some(&kept) = set.read().unwrap_or_else(PoisonError::into_inner).get(text) {
        return Some(kept);
    }
    let mut set = set.write().unwrap_or_else(PoisonError::into_inner);
    if let Some(&kept) = set.get(text) {
        return Some(kept);
    }
    if set.len() >= capacity {
        return None;
    }
    let kept: &'static str = Box::leak(text.to_owned().into_boxed_str());
    set.insert(kept);
    Some(kept)
}

/// A `String` that takes at most [`MAX_LEN`] bytes, then fails.
struct Bounded(String);

impl Write for Bounded {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let room = MAX_LEN - self.0.len();
        if s.len() <= room {
            self.0.push_str(s);
            return Ok(());
        }
        let mut end = room;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        self.0.push_str(&s[..end]);
        Err(fmt::Error)
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

    #[test]
    fn a_long_key_is_cut_at_a_character_boundary() {
        let long = "é".repeat(400);
        let text = intern_key(&long).unwrap();
        assert!(text.ends_with('…'));
        // The mark, the quote, then as many two-byte `é` as fit in MAX_LEN.
        assert_eq!(text.len(), MAX_LEN + '…'.len_utf8());
        assert!(text.starts_with("\0\"éé"));
        // One byte less room cuts before the last `é`, never inside it.
        let odd = format!("{}{long}", 'x');
        let text = intern_key(&odd).unwrap();
        assert_eq!(text.len(), MAX_LEN - 1 + '…'.len_utf8());
    }

    #[test]
    fn past_capacity_a_new_text_is_not_kept_but_a_kept_one_is_found() {
        let set = RwLock::new(HashSet::new());
        let kept = intern(&set, 2, "kept").unwrap();
        assert!(intern(&set, 2, "second").is_some());
        assert_eq!(intern(&set, 2, "third"), None);
        assert!(core::ptr::eq(intern(&set, 2, "kept").unwrap(), kept));
        assert_eq!(set.read().unwrap().len(), 2);
    }
}
