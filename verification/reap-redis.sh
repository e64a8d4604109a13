#!/usr/bin/env bash
# Stops the redis-servers that tests started and no longer own, and removes
# their folders. A test's server runs in
# ${TMPDIR:-/tmp}/tripword-redis-<test pid>-<port> (`RedisServer::start_on`)
# and is stopped by the handle's `Drop`; a test process killed by a timeout
# cannot run it, and a mutant of that `Drop` (mutation testing) does not.
# Only servers whose test process is gone are touched.
set -uo pipefail
reaped=0
for pid in $(pgrep -x redis-server || true); do
  cwd=$(readlink "/proc/$pid/cwd" 2>/dev/null) || continue
  name=$(basename "$cwd")
  case $name in tripword-redis-*-*) ;; *) continue ;; esac
  owner=$(echo "$name" | cut -d- -f3)
  if ! kill -0 "$owner" 2>/dev/null; then
    kill -9 "$pid" 2>/dev/null && reaped=$((reaped + 1))
  fi
done
for dir in "${TMPDIR:-/tmp}"/tripword-redis-*-*; do
  [ -d "$dir" ] || continue
  owner=$(basename "$dir" | cut -d- -f3)
  kill -0 "$owner" 2>/dev/null || rm -rf "$dir"
done
echo "reap-redis: $reaped orphaned redis-server(s) stopped"
