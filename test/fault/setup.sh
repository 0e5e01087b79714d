#!/usr/bin/env bash
# Installs what the fault-injection suite (test/fault/) needs beyond npm: libfaketime, from Debian's
# `faketime` package, for the wall-clock-jump tests (time.test.ts). Idempotent. It never fails the build:
# without libfaketime those tests skip and say why.
set -u
have() {
  for f in /usr/lib/*/faketime/libfaketime.so.1 /usr/lib/faketime/libfaketime.so.1 /usr/lib64/faketime/libfaketime.so.1; do
    [ -e "$f" ] && return 0
  done
  return 1
}
if have; then
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "test/fault/setup.sh: faketime is missing and cannot be installed here (needs root and apt-get); the time tests will skip" >&2
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y -qq faketime >/dev/null 2>&1; then
  apt-get update -qq >/dev/null 2>&1 || true
  apt-get install -y -qq faketime >/dev/null 2>&1 || true
fi
if have; then
  echo "test/fault/setup.sh: installed faketime" >&2
else
  echo "test/fault/setup.sh: could not install faketime; the time tests will skip" >&2
fi
exit 0
