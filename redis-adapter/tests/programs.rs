//! The build's view of the programs the tests start, against this run's.
//! `build.rs` sets a cfg for each program that runs when the tests are
//! built (for every one with `TRIPWORD_REDIS_REQUIRE`), and a test whose
//! program has no cfg is reported as ignored. The build script runs again
//! when `PATH` or the program's variable changes, or the program found
//! changes; not when a program is installed into a folder already on the
//! `PATH`: its tests stay ignored until the build script runs again. A
//! program gone since the build fails the tests that need it. Either way,
//! this test says so.

use std::process::{Command, Stdio};

/// Whether `program version` runs and succeeds (as `build.rs` asks).
fn runs(program: &str, version: &str) -> bool {
    Command::new(program)
        .arg(version)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
#[cfg_attr(
    not(tripword_redis_probed),
    ignore = "the build looked for no program (built outside this repository's workspace)"
)]
fn the_tests_were_built_for_the_programs_on_this_machine() {
    let cli = std::env::var("TRIPWORD_REDIS_CLI").unwrap_or_else(|_| "redis-cli".into());
    let programs = [
        (
            tripword_redis::server::binary(),
            "--version",
            cfg!(tripword_redis_server),
        ),
        (cli, "--version", cfg!(tripword_redis_cli)),
        ("openssl".to_owned(), "version", cfg!(tripword_openssl)),
    ];
    let required = std::env::var_os("TRIPWORD_REDIS_REQUIRE").is_some();
    let mut wrong = Vec::new();
    for (program, version, built) in programs {
        match (built, runs(&program, version)) {
            (false, true) => wrong.push(format!(
                "`{program}` runs now but did not when the tests were built, so the tests \
                 that need it are ignored: run the build script again \
                 (`touch redis-adapter/build.rs`), then the tests"
            )),
            (true, false) if required => wrong.push(format!(
                "`{program}` is not runnable and TRIPWORD_REDIS_REQUIRE is set"
            )),
            (true, false) => wrong.push(format!(
                "`{program}` ran when the tests were built and is not runnable now: \
                 the tests that need it fail"
            )),
            _ => {}
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
