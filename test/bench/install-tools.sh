#!/usr/bin/env bash
# Installs the standard tools the benchmark uses, from Debian's packages, when they are missing:
#   hyperfine      (timing of whole processes against `node -e 0`)
#   /usr/bin/time  (peak RSS of a verb: `time -f %M`)
# Non-interactive; `apt-get update` runs at most once. Never fails the bench: a tool that cannot be
# installed is reported, and the bench falls back to its own timing loop.
set -u
export DEBIAN_FRONTEND=noninteractive
missing=()
command -v hyperfine >/dev/null 2>&1 || missing+=(hyperfine)
[ -x /usr/bin/time ] || missing+=(time)
[ ${#missing[@]} -eq 0 ] && exit 0
SUDO=''
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO='sudo -n'; else
    echo "install-tools: not root and no sudo: cannot install ${missing[*]}" >&2; exit 0
  fi
fi
echo "install-tools: installing ${missing[*]} from Debian's packages" >&2
$SUDO apt-get update -qq </dev/null >/dev/null 2>&1 || echo "install-tools: apt-get update failed" >&2
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" </dev/null >/dev/null 2>&1 \
  || echo "install-tools: apt-get install ${missing[*]} failed" >&2
exit 0
