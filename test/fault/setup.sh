#!/usr/bin/env bash
# Kept for the command in docs/reliability.md: the tools of the fault suite (libfaketime, unshare, setsid,
# script, perl) are installed, with those of the other tests, by test/setup-tools.sh.
exec bash "$(dirname "$0")/../setup-tools.sh" "$@"
