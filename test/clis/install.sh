#!/usr/bin/env bash
# Installs the real agent CLIs, pinned, for the end-to-end tests only, into test/.clis/ (gitignored).
# A user of subagents brings their own CLIs; nothing here is used outside the tests.
#
#   bash test/clis/install.sh                 install every pin of test/clis/pins.json, or skip in well
#                                             under a second when already installed
#   CLIS_FORCE=1 bash test/clis/install.sh    reinstall from scratch
#   CLIS_ALSO="claude@2.1.400 codex@0.170.0" bash test/clis/install.sh
#                                             also install these (scripts/clis-latest.sh: the latest)
#
# Layout: one npm prefix per CLI version, test/.clis/<cli>-<version>/node_modules/.bin/<cli>, so that two
# versions of one CLI live side by side (Claude Code is tested at 2.1.197 and at 2.1.331), and
# test/.clis/bin/<cli> → the first version pinned for that CLI (the one every test uses unless it asks
# for another: test/fakes/env.ts cliBin(name, version)).
#
# pins.json is the single source of truth: { cli: { package, versions: [default, others…] } }. The CLI
# name is also its program's name. Why `npm install pkg@exact-version` and no committed lock for `npm ci`:
# the whole dependency closure is already pinned exactly. The packages have no dependencies except their
# per-platform binary packages, which they list as optionalDependencies at the same exact version, and
# those have none. A lock would only add integrity hashes, and npm 11 cannot even write a usable one here
# (`npm install --package-lock-only` leaves most opencode-<platform> packages out of the lock, and `npm ci`
# then refuses it). After installing we check every binary reports its pinned version; a stamp file per
# prefix records what was installed.
#
# Works with CI=true and no stdin. Fails loudly (non-zero exit, message on stderr) when anything is wrong.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)/.clis"
pins="$here/pins.json"

die() { echo "test/clis/install.sh: $*" >&2; exit 1; }
command -v node >/dev/null || die "node not found on PATH"

# "cli package version" lines: every pin, then CLIS_ALSO's cli@version words.
wanted() {
  node -e '
    const pins = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    const out = [];
    for (const [cli, p] of Object.entries(pins)) for (const v of p.versions) out.push(`${cli} ${p.package} ${v}`);
    for (const w of (process.argv[2] || "").split(/\s+/).filter(Boolean)) {
      const [cli, v] = w.split("@");
      if (!pins[cli] || !v) { console.error(`CLIS_ALSO: "${w}" is not <cli>@<version> of a pinned cli`); process.exit(2); }
      out.push(`${cli} ${pins[cli].package} ${v}`);
    }
    console.log([...new Set(out)].join("\n"));
  ' "$pins" "${CLIS_ALSO:-}"
}
defaults() {
  node -e '
    const pins = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    for (const [cli, p] of Object.entries(pins)) console.log(`${cli} ${p.versions[0]}`);
  ' "$pins"
}

list="$(wanted)" || die "cannot read $pins"

installed_ok() { # cli version
  local prefix="$root/$1-$2"
  [[ -f "$prefix/.installed" && "$(cat "$prefix/.installed")" == "$1@$2" && -x "$prefix/node_modules/.bin/$1" ]]
}

# Prints nothing and returns 0 when `$bin --version` contains $version; otherwise says what it got.
check_version() {
  local bin="$1" version="$2" out
  out="$(timeout 120 "$bin" --version </dev/null 2>&1)" || die "$bin --version failed: $out"
  [[ "$out" == *"$version"* ]] || die "$bin --version printed '$out', expected $version"
}

link_defaults() {
  mkdir -p "$root/bin"
  local cli version
  while read -r cli version; do
    ln -sfn "../$cli-$version/node_modules/.bin/$cli" "$root/bin/$cli"
  done < <(defaults)
}

all_ok() {
  local cli package version
  while read -r cli package version; do installed_ok "$cli" "$version" || return 1; done <<<"$list"
  while read -r cli version; do [[ -L "$root/bin/$cli" ]] || return 1; done < <(defaults)
}

if [[ "${CLIS_FORCE:-}" != "1" ]] && all_ok; then exit 0; fi
command -v npm >/dev/null || die "npm not found on PATH"

# One installer at a time (two `make test` in parallel); the lock lives in test/.clis/ itself.
mkdir -p "$root"
if command -v flock >/dev/null; then
  exec 9>"$root/.lock"
  flock 9
  if [[ "${CLIS_FORCE:-}" != "1" ]] && all_ok; then exit 0; fi
fi
# The layout before pins.json: one prefix for all three. Gone, so nothing can find it by mistake.
rm -rf "$root/node_modules" "$root/package.json" "$root/package-lock.json" "$root/.installed"

while read -r cli package version; do
  [[ "${CLIS_FORCE:-}" != "1" ]] && installed_ok "$cli" "$version" && continue
  prefix="$root/$cli-$version"
  echo "test/clis/install.sh: installing $package@$version into $prefix" >&2
  rm -rf "$prefix"
  mkdir -p "$prefix"
  # --prefix: never the project's own node_modules or package.json. The postinstall scripts must run
  # (claude-code and opencode-ai put their native binary in place of the bin stub).
  if ! npm install --prefix "$prefix" --no-audit --no-fund --loglevel=warn "$package@$version" </dev/null >&2; then
    die "npm install of $package@$version failed (see npm's messages above)"
  fi
  [[ -x "$prefix/node_modules/.bin/$cli" ]] || die "$prefix/node_modules/.bin/$cli missing after npm install"
  check_version "$prefix/node_modules/.bin/$cli" "$version"
  printf '%s' "$cli@$version" >"$prefix/.installed"
done <<<"$list"

link_defaults
echo "test/clis/install.sh: ok ($root/bin)" >&2
