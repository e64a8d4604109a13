# Sourced by stages that run firmware under QEMU: `ensure_qemu` puts a working
# qemu-system-arm and qemu-system-riscv32 on PATH.
#
# 1. A machine that already runs both binaries uses them as they are.
# 2. Otherwise `apt-get install qemu-system-arm qemu-system-misc` is tried
#    only as a simulation first, and done only when apt would neither remove
#    nor downgrade any package: on an image that already holds a newer
#    sibling (qemu-utils 10 from backports `Breaks: qemu-system-common
#    (< 1:8.0)`), apt refuses, and nothing the image holds is touched.
# 3. Then the system packages are fetched with `apt-get download` and
#    unpacked with `dpkg -x` into a private prefix (not installed, so dpkg's
#    view of the machine is unchanged), the shared libraries their binaries
#    link are installed with `apt-get install --no-remove` (plain library
#    packages, nothing in the qemu family), `ldd` checks that none is
#    missing, and the prefix's usr/bin goes first on PATH. The prefix is
#    kept between runs (TRIPWORD_QEMU_PREFIX, default target/qemu), so the
#    download happens once per checkout.
#
# The packages: qemu-system-arm (Cortex-M0/M3/M4F boards), qemu-system-misc
# (qemu-system-riscv32), qemu-system-common and qemu-system-data (what both
# load at start), all from the machine's configured Debian release.

QEMU_PACKAGES=(qemu-system-arm qemu-system-misc qemu-system-common qemu-system-data)

qemu_works() {
  qemu-system-arm --version >/dev/null 2>&1 && qemu-system-riscv32 --version >/dev/null 2>&1
}

# The package names a .deb depends on, without versions, first of each
# alternative, leaving out the QEMU packages unpacked beside it.
qemu_deb_depends() {
  dpkg-deb -f "$1" Depends Pre-Depends 2>/dev/null \
    | sed -e 's/^[A-Za-z-]*: //' | tr ',' '\n' \
    | sed -e 's/|.*//' -e 's/(.*)//' -e 's/:any//' -e 's/[[:space:]]//g' \
    | grep -v '^$' | grep -vxF -f <(printf '%s\n' "${QEMU_PACKAGES[@]}") || true
}

ensure_qemu() {
  local prefix="${TRIPWORD_QEMU_PREFIX:-$PWD/target/qemu}"
  if qemu_works; then
    QEMU_SOURCE="system ($(command -v qemu-system-arm))"
    return 0
  fi
  if [ -x "$prefix/usr/bin/qemu-system-arm" ]; then
    export PATH="$prefix/usr/bin:$PATH"
    if qemu_works; then QEMU_SOURCE="private prefix $prefix (kept)"; return 0; fi
  fi
  local apt_env=(env DEBIAN_FRONTEND=noninteractive)
  "${apt_env[@]}" apt-get update -qq || true
  # A clean install where apt can do one: no removal, no downgrade.
  local sim
  if sim=$(apt-get install -s -y qemu-system-arm qemu-system-misc 2>&1) \
     && ! grep -qE '^Remv ' <<<"$sim" && ! grep -qi 'downgrad' <<<"$sim"; then
    if "${apt_env[@]}" apt-get install -y -qq --no-remove qemu-system-arm qemu-system-misc >/dev/null && qemu_works; then
      QEMU_SOURCE="apt-get install"
      return 0
    fi
  fi
  echo "ensure_qemu: apt cannot install QEMU beside this image's packages; unpacking it into $prefix"
  local debs="$prefix.debs"
  rm -rf "$prefix" "$debs"
  mkdir -p "$prefix" "$debs"
  (cd "$debs" && apt-get download -q "${QEMU_PACKAGES[@]}") || return 1
  local deps=() deb
  for deb in "$debs"/*.deb; do
    dpkg -x "$deb" "$prefix" || return 1
    mapfile -t -O "${#deps[@]}" deps < <(qemu_deb_depends "$deb")
  done
  # The libraries the binaries link: only those not installed yet, never a
  # removal (--no-remove makes apt fail instead).
  local missing=() p
  for p in $(printf '%s\n' "${deps[@]}" | sort -u); do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    "${apt_env[@]}" apt-get install -y -qq --no-remove --no-install-recommends "${missing[@]}" >/dev/null || return 1
  fi
  local bin unresolved
  for bin in "$prefix/usr/bin/qemu-system-arm" "$prefix/usr/bin/qemu-system-riscv32"; do
    unresolved=$(ldd "$bin" | grep 'not found' || true)
    if [ -n "$unresolved" ]; then echo "ensure_qemu: $bin: $unresolved"; return 1; fi
  done
  rm -rf "$debs"
  export PATH="$prefix/usr/bin:$PATH"
  qemu_works || return 1
  QEMU_SOURCE="private prefix $prefix (unpacked now)"
}
