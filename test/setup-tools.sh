#!/usr/bin/env bash
# Installs the system tools the tests shell out to, beyond Node and npm, where they are missing
# (`make test` runs it through `make test-tools`). Idempotent: when everything is there it only looks.
#
#   tool                          used by                                          Debian package
#   git                           fan-out --worktree tests, the skill tests         git
#   tmux                          the table/--watch views in a real terminal        tmux
#   script                        a pty without a size; Ctrl-C/hang-up of a caller  bsdutils
#   setsid, unshare               cancel/tree tests; disk-full and pid-reuse tests  util-linux
#   perl                          a process that leaves its process group           perl-base
#   libfaketime                   the wall-clock-jump tests (test/fault/time)       faketime
#   xmllint                       JUnit reports checked against test/fixtures/junit.xsd  libxml2-utils
#   slurmctld, slurmd, sbatch,    the slurm executor's tests on a one-node cluster  slurmctld slurmd
#   munged                        (test/slurm/cluster.sh brings it up and down)     slurm-client munge
#
# It needs root (or password-less sudo) and apt-get; elsewhere it says what is missing and leaves the
# rest to the tests: without tmux or Slurm the terminal and Slurm tests fail when CI is set (skip otherwise), without
# unshare rights or libfaketime those tests skip and say why, without git or perl the tests that need
# them fail. It never fails the build itself.
#
#   SETUP_TOOLS_DRY_RUN=1 bash test/setup-tools.sh   print the packages it would install, install nothing
set -u
me=test/setup-tools.sh

have_faketime() {
  local f
  for f in /usr/lib/*/faketime/libfaketime.so.1 /usr/lib/faketime/libfaketime.so.1 /usr/lib64/faketime/libfaketime.so.1; do
    [ -e "$f" ] && return 0
  done
  return 1
}

# The packages whose tools are missing, one per line.
missing_packages() {
  command -v git >/dev/null 2>&1 || echo git
  command -v tmux >/dev/null 2>&1 || echo tmux
  command -v script >/dev/null 2>&1 || echo bsdutils
  { command -v setsid && command -v unshare; } >/dev/null 2>&1 || echo util-linux
  command -v perl >/dev/null 2>&1 || echo perl-base
  have_faketime || echo faketime
  command -v xmllint >/dev/null 2>&1 || echo libxml2-utils
  command -v slurmctld >/dev/null 2>&1 || echo slurmctld
  command -v slurmd >/dev/null 2>&1 || echo slurmd
  command -v sbatch >/dev/null 2>&1 || echo slurm-client
  command -v munged >/dev/null 2>&1 || echo munge
}

mapfile -t want < <(missing_packages)
if [ "${#want[@]}" -eq 0 ]; then
  exit 0
fi
if [ -n "${SETUP_TOOLS_DRY_RUN:-}" ]; then
  printf '%s\n' "${want[@]}"
  exit 0
fi

as_root=()
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then as_root=(sudo -n); else as_root=(none); fi
fi
if [ "${as_root[0]:-}" = none ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "$me: missing ${want[*]}; cannot install them here (needs root or sudo, and apt-get): install them yourself" >&2
  exit 0
fi

export DEBIAN_FRONTEND=noninteractive
if ! "${as_root[@]}" apt-get install -y -qq --no-install-recommends "${want[@]}" >/dev/null 2>&1; then
  "${as_root[@]}" apt-get update -qq >/dev/null 2>&1 || true
  "${as_root[@]}" apt-get install -y -qq --no-install-recommends "${want[@]}" >/dev/null 2>&1 || true
fi

mapfile -t still < <(missing_packages)
if [ "${#still[@]}" -eq 0 ]; then
  echo "$me: installed ${want[*]}" >&2
else
  echo "$me: could not install ${still[*]}; the tests that need them will fail or skip and say why" >&2
fi
exit 0
