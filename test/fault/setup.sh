#!/usr/bin/env bash
# Installs the system tools the tests use beyond npm, from Debian packages. Idempotent: a tool already
# there is left alone.
#   faketime       (package faketime)      the wall-clock-jump tests, test/fault/time.test.ts
#   xmllint        (package libxml2-utils) JUnit reports checked against test/fixtures/junit.xsd
# It never fails the build: a tool it cannot install is reported here, and the tests that need it say so.
set -u
have_faketime() {
  for f in /usr/lib/*/faketime/libfaketime.so.1 /usr/lib/faketime/libfaketime.so.1 /usr/lib64/faketime/libfaketime.so.1; do
    [ -e "$f" ] && return 0
  done
  return 1
}
have_xmllint() {
  command -v xmllint >/dev/null 2>&1
}
missing=()
have_faketime || missing+=(faketime)
have_xmllint || missing+=(libxml2-utils)
if [ "${#missing[@]}" = 0 ]; then
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "test/fault/setup.sh: missing ${missing[*]}, which cannot be installed here (needs root and apt-get)" >&2
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y -qq "${missing[@]}" >/dev/null 2>&1; then
  apt-get update -qq >/dev/null 2>&1 || true
  apt-get install -y -qq "${missing[@]}" >/dev/null 2>&1 || true
fi
have_faketime && echo "${missing[*]}" | grep -qw faketime && echo "test/fault/setup.sh: installed faketime" >&2
have_xmllint && echo "${missing[*]}" | grep -qw libxml2-utils && echo "test/fault/setup.sh: installed libxml2-utils (xmllint)" >&2
have_faketime || echo "test/fault/setup.sh: could not install faketime; the time tests will skip" >&2
have_xmllint || echo "test/fault/setup.sh: could not install libxml2-utils; JUnit reports are checked without the schema" >&2
exit 0
