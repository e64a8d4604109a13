//! `docs/lab.md` shows `examples/my_breaker.rs` whole: the two must not
//! drift apart, and the example must stay within the 30 lines the guide
//! promises.

#[test]
fn the_guide_shows_the_example_as_it_is() {
    let guide = include_str!("../../docs/lab.md");
    let example = include_str!("../examples/my_breaker.rs");
    assert!(
        guide.contains(&format!("```rust\n{example}```\n")),
        "docs/lab.md must show lab/examples/my_breaker.rs verbatim"
    );
    assert!(
        example.lines().count() <= 30,
        "the example grew past 30 lines"
    );
}
