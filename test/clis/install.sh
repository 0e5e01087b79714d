#!/usr/bin/env bash
# Installs the real agent CLIs, pinned, for the end-to-end tests only, into test/.clis/ (gitignored).
# A user of subagents brings their own CLIs; nothing here is used outside the tests.
#
#   bash test/clis/install.sh          install, or skip in well under a second when already installed
#   CLIS_FORCE=1 bash test/clis/install.sh   reinstall from scratch
#
# Result: test/.clis/node_modules/.bin/{claude,codex,opencode}.
#
# Why `npm install pkg@exact-version` and no committed package.json + lock for `npm ci`:
# the whole dependency closure is already pinned exactly. The three packages have no dependencies except
# their per-platform binary packages, which they list as optionalDependencies at the same exact version
# (e.g. opencode-linux-x64@1.18.33), and those have no dependencies at all. A lock would only add
# integrity hashes, and npm 11 cannot even write a usable one here: `npm install --package-lock-only`
# leaves most opencode-<platform> packages out of the lock, and `npm ci` then refuses it ("Missing:
# opencode-darwin-arm64@ from lock file"). So the pins below are the single source of truth, the stamp
# file records them, and after installing we check every binary reports the pinned version.
#
# Works with CI=true and no stdin. Fails loudly (non-zero exit, message on stderr) when anything is wrong.
set -euo pipefail

CLAUDE_VERSION=2.1.197
CODEX_VERSION=0.169.0
OPENCODE_VERSION=1.18.33

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
prefix="$(cd "$here/.." && pwd)/.clis"
bin="$prefix/node_modules/.bin"
stamp="$prefix/.installed"
want="claude-code=$CLAUDE_VERSION codex=$CODEX_VERSION opencode=$OPENCODE_VERSION"

die() { echo "test/clis/install.sh: $*" >&2; exit 1; }

installed_ok() {
  [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]] || return 1
  local b
  for b in claude codex opencode; do [[ -x "$bin/$b" ]] || return 1; done
}

# Prints nothing and returns 0 when `$1 --version` contains $2; otherwise says what it got.
check_version() {
  local name="$1" version="$2" out
  out="$(timeout 60 "$bin/$name" --version </dev/null 2>&1)" || die "$bin/$name --version failed: $out"
  [[ "$out" == *"$version"* ]] || die "$bin/$name --version printed '$out', expected $version"
}

if [[ "${CLIS_FORCE:-}" != "1" ]] && installed_ok; then
  exit 0
fi

command -v npm >/dev/null || die "npm not found on PATH"

# One installer at a time (two `make test` in parallel); the lock lives in test/.clis/ itself.
mkdir -p "$prefix"
if command -v flock >/dev/null; then
  exec 9>"$prefix/.lock"
  flock 9
  if [[ "${CLIS_FORCE:-}" != "1" ]] && installed_ok; then exit 0; fi
fi

echo "test/clis/install.sh: installing $want into $prefix" >&2
rm -rf "$stamp" "$prefix/node_modules" "$prefix/package.json" "$prefix/package-lock.json"
# --prefix: install into test/.clis, never into the project's own node_modules or package.json.
# The postinstall scripts of claude-code and opencode-ai must run (they put the native binary in place
# of the bin/*.exe stub); npm 11 warns about them ("not yet covered by allowScripts") but runs them.
if ! npm install --prefix "$prefix" --no-audit --no-fund --loglevel=warn \
    "@anthropic-ai/claude-code@$CLAUDE_VERSION" \
    "@openai/codex@$CODEX_VERSION" \
    "opencode-ai@$OPENCODE_VERSION" </dev/null >&2; then
  die "npm install of the agent CLIs failed (see npm's messages above)"
fi

for b in claude codex opencode; do
  [[ -x "$bin/$b" ]] || die "$bin/$b missing after npm install"
done
check_version claude "$CLAUDE_VERSION"
check_version codex "$CODEX_VERSION"
check_version opencode "$OPENCODE_VERSION"

printf '%s' "$want" >"$stamp"
echo "test/clis/install.sh: ok ($bin)" >&2
