//! tripword-redis's build script. It matters only to the crate's own
//! tests, in this repository: it looks for the programs they start
//! (`redis-server`, `redis-cli`, `openssl`) and sets a cfg for each one
//! that runs (`tripword_redis_server`, `tripword_redis_cli`,
//! `tripword_openssl`), so that a test whose program is missing is
//! reported as ignored, with the reason, never as passed
//! (docs/distributed.md, "Running the tests"). The library's code reads
//! none of these cfgs.
//!
//! With `TRIPWORD_REDIS_REQUIRE` set (CI) every one is set: a missing
//! program fails the tests that need it. `tripword_redis_probed` says the
//! programs were looked for (`tests/programs.rs` checks the answer against
//! the machine the tests run on). Built anywhere else (a dependency from a
//! registry or a vendored copy, the package's verification build), it
//! looks for nothing and sets nothing, and never runs again.

use std::env;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Each cfg, the variable that may name its program, the program's name
/// on the `PATH` otherwise (as the tests pick it:
/// `tripword_redis::server::binary`, `tests/cluster.rs`, `tests/tls.rs`),
/// and the argument that makes it print its version and succeed.
const PROGRAMS: [(&str, Option<&str>, &str, &str); 3] = [
    (
        "tripword_redis_server",
        Some("TRIPWORD_REDIS_SERVER"),
        "redis-server",
        "--version",
    ),
    (
        "tripword_redis_cli",
        Some("TRIPWORD_REDIS_CLI"),
        "redis-cli",
        "--version",
    ),
    ("tripword_openssl", None, "openssl", "version"),
];

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rustc-check-cfg=cfg(tripword_redis_probed)");
    for (cfg, ..) in PROGRAMS {
        println!("cargo::rustc-check-cfg=cfg({cfg})");
    }
    if !in_this_workspace() {
        return;
    }
    // The programs were looked for (`tests/programs.rs` checks the answer).
    println!("cargo::rustc-cfg=tripword_redis_probed");
    println!("cargo::rerun-if-env-changed=PATH");
    println!("cargo::rerun-if-env-changed=TRIPWORD_REDIS_REQUIRE");
    let require = env::var_os("TRIPWORD_REDIS_REQUIRE").is_some();
    for (cfg, var, default, version) in PROGRAMS {
        let program = var.and_then(|v| {
            println!("cargo::rerun-if-env-changed={v}");
            env::var(v).ok()
        });
        let program = program.as_deref().unwrap_or(default);
        let found = find(program);
        // Removed or replaced: looked for again.
        if let Some(path) = found.as_ref().filter(|p| p.is_absolute()) {
            println!("cargo::rerun-if-changed={}", path.display());
        }
        let runs = found.is_some() && runs(program, version);
        if runs || require {
            println!("cargo::rustc-cfg={cfg}");
        }
        if !runs && require {
            println!(
                "cargo::warning=`{program}` is not runnable and TRIPWORD_REDIS_REQUIRE is set: the tests that need it will fail"
            );
        } else if let Some(path) = found.filter(|_| !runs) {
            println!(
                "cargo::warning=`{} {version}` fails: the tests that need `{program}` are ignored",
                path.display()
            );
        }
    }
}

/// Whether the package is built in this repository's workspace (the
/// manifest above it names it), where its tests are run.
fn in_this_workspace() -> bool {
    let Some(dir) = env::var_os("CARGO_MANIFEST_DIR") else {
        return false;
    };
    let root = Path::new(&dir).join("../Cargo.toml");
    std::fs::read_to_string(root)
        .is_ok_and(|s| s.contains("[workspace]") && s.contains("\"redis-adapter\""))
}

/// Where `program` is: itself when it names a path, else the first file
/// of that name in a folder of the `PATH`.
fn find(program: &str) -> Option<PathBuf> {
    if program.contains(std::path::MAIN_SEPARATOR) || program.contains('/') {
        let path = PathBuf::from(program);
        return path.is_file().then_some(path);
    }
    let dirs = env::var_os("PATH")?;
    env::split_paths(&dirs)
        .map(|dir| dir.join(program))
        .find(|path| path.is_file())
}

/// Whether `program version` runs and succeeds (as
/// `tripword_redis::server::available` asks at run time).
fn runs(program: &str, version: &str) -> bool {
    Command::new(program)
        .arg(version)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}
