//! tripword-benches' build script: sets `tripword_valgrind` when
//! `valgrind --version` runs, so that `tests/no_store.rs`, which counts the
//! closed path's stores and clock reads under valgrind, is reported as
//! ignored (with the reason) on a machine without it, never as passed. With
//! `TRIPWORD_REQUIRE_VALGRIND` set (CI), the cfg is set regardless: a missing
//! valgrind then fails the test.

use std::process::{Command, Stdio};

fn main() {
    println!("cargo::rustc-check-cfg=cfg(tripword_valgrind)");
    println!("cargo::rerun-if-env-changed=PATH");
    println!("cargo::rerun-if-env-changed=TRIPWORD_REQUIRE_VALGRIND");
    let found = Command::new("valgrind")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if found || std::env::var_os("TRIPWORD_REQUIRE_VALGRIND").is_some() {
        println!("cargo::rustc-cfg=tripword_valgrind");
    }
}
