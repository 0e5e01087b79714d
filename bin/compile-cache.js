"use strict";
// Node's compile cache for the verbs' bundles (a fast path: lib/base/fast-paths.ts), kept where only
// this user can write. V8 trusts a code cache: one in the shared temp directory (Node's default
// without a directory) would let another user's planted cache run as us (docs/security.md). The
// cache is $XDG_CACHE_HOME/subagents (else ~/.cache/subagents), made 0700; it is not used at all when
// that directory is a symlink, is not ours, may be read or written by others, or sits in a directory
// that others may write.
const { lstatSync, mkdirSync } = require("node:fs");

function ours(st, uid, strict) {
  if (st.isSymbolicLink() || !st.isDirectory()) return false;
  if (uid === undefined) return true;
  if (strict) return st.uid === uid && (st.mode & 0o077) === 0;
  return (st.uid === uid || st.uid === 0) && (st.mode & 0o022) === 0;
}

module.exports = function enableCompileCache() {
  const fast = process.env.SUBAGENT_FAST_PATHS;
  if (fast !== undefined && !fast.split(",").includes("compile-cache")) return;
  const enable = require("node:module").enableCompileCache;
  if (!enable) return;
  const xdg = process.env.XDG_CACHE_HOME;
  const home = process.env.HOME;
  const base = xdg && xdg[0] === "/" ? xdg : home && home[0] === "/" ? `${home}/.cache` : null;
  if (!base) return;
  const dir = `${base}/subagents`;
  const uid = process.getuid?.();
  try {
    let st;
    try {
      st = lstatSync(dir);
    } catch {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      st = lstatSync(dir);
    }
    if (!ours(st, uid, true) || !ours(lstatSync(base), uid, false)) return;
    enable(dir);
  } catch {
    // No private cache to be had: every start compiles the bundle (the plain path).
  }
};
