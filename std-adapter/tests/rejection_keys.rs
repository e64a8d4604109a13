//! A per-key rejection's key reads back whole: two long keys that differ
//! only in their last byte read back different, each as it was given, in
//! `key()`, `Display` and `Debug` alike.

use tripword::clock::ManualClock;
use tripword::{Breaker, Config, Rejected};
use tripword_std::Rejection;

fn rejected() -> Rejected {
    let clock = ManualClock::new(0);
    let b = Breaker::new(Config::new(), &clock);
    b.force_open();
    b.acquire().unwrap_err()
}

/// A URL of `len` bytes ending in `last`.
fn url(len: usize, last: char) -> String {
    let mut url = String::from("https://api.example.com/v1/");
    while url.len() < len - 1 {
        url.push('a');
    }
    url.push(last);
    assert_eq!(url.len(), len);
    url
}

#[test]
fn two_long_keys_differing_in_the_last_byte_read_back_whole() {
    let r = rejected();
    let (a, b) = (url(300, 'x'), url(300, 'y'));
    let (ra, rb) = (Rejection::new(r).for_key(&a), Rejection::new(r).for_key(&b));
    assert_eq!(ra.key(), Some(a.as_str()));
    assert_eq!(rb.key(), Some(b.as_str()));
    assert_ne!(ra.key(), rb.key());
    // `Display` shows the key's `Debug` text (a string quoted).
    assert_eq!(
        ra.to_string(),
        format!("circuit forced open for {a:?}: call not admitted")
    );
    assert_eq!(
        rb.to_string(),
        format!("circuit forced open for {b:?}: call not admitted")
    );
    assert_ne!(ra.to_string(), rb.to_string());
    // `Debug` names it as `key`, whole.
    assert!(format!("{ra:?}").contains(&format!("key: {a:?}")), "{ra:?}");
    assert!(format!("{rb:?}").contains(&format!("key: {b:?}")), "{rb:?}");
    assert_ne!(ra, rb);
}

#[test]
fn a_key_of_any_type_reads_back_as_its_whole_debug_text() {
    #[derive(Debug)]
    #[allow(dead_code, reason = "read by the derived `Debug`")]
    struct Route {
        host: String,
        path: String,
    }
    let key = Route {
        host: "api.example.com".into(),
        path: "p".repeat(500),
    };
    let r = Rejection::new(rejected()).for_key(&key);
    assert_eq!(r.key(), Some(format!("{key:?}").as_str()));
}

/// A key whose text passes 8 KiB is not kept: the rejection carries no
/// key (its breaker and wait still say what happened), never a cut one.
#[test]
fn a_key_past_8_kib_is_not_kept_rather_than_cut() {
    let r = rejected();
    let longest = url(8 * 1024 - 2, 'z'); // quoted: 8 KiB of `Debug` text
    assert_eq!(
        Rejection::new(r).for_key(&longest).key(),
        Some(longest.as_str())
    );
    let long = url(8 * 1024 - 1, 'z');
    let rejection = Rejection::new(r).for_key(&long);
    assert_eq!(rejection.key(), None);
    assert_eq!(
        rejection.to_string(),
        "circuit forced open: call not admitted"
    );
}
