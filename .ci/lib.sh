# Helpers sourced by stage scripts.
# note "text": appended to this stage's summary line.
note() { mkdir -p target/ci-notes; echo "$*" >> "target/ci-notes/$(basename "$0" .sh)"; }
ensure_targets() { rustup target add "$@" >/dev/null 2>&1 || rustup target add "$@"; }
# Every stage runs tripword-redis's tests against real servers (stage 10
# installs redis-server): a missing binary fails them instead of skipping.
export TRIPWORD_REDIS_REQUIRE=1
