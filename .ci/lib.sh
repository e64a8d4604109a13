# Helpers sourced by stage scripts.
# note "text": appended to this stage's summary line.
note() { mkdir -p target/ci-notes; echo "$*" >> "target/ci-notes/$(basename "$0" .sh)"; }
ensure_targets() { rustup target add "$@" >/dev/null 2>&1 || rustup target add "$@"; }
# Every stage runs tripword-redis's tests against real servers (stage 10
# installs redis-server): a missing binary fails them; without this variable
# they would be reported ignored (redis-adapter/build.rs). The same for
# valgrind and the closed path's no-store test (benches/build.rs).
export TRIPWORD_REDIS_REQUIRE=1
export TRIPWORD_REQUIRE_VALGRIND=1
