import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Bundled builds (scripts/bundle.mjs) define the addon's path: next to the bundle. */
declare const __NATIVE_ADDON__: string | undefined;

/** lib/native/*.c: what Node 20 has no API for, or no fast one. */
export interface NativeAddon {
  /** posix_spawn (spawn.c): [pid, gate fd] or [-errno, -1]; stdio: fds for 0-2, -1 = /dev/null, -2 (for 0) = a gate pipe. */
  spawn(file: string, argv: string[], envp: string[], cwd: string, stdio: number[], setsid: boolean): [number, number];
  /** Many stats against expected keys (stat-probe.c; the same in Node: registry/stat-key.ts). Returns how many paths it probed. */
  statProbe(base: string, paths: Uint8Array, keys: Float64Array, ok: Uint8Array): number;
  /** A whole regular file, in memory huge pages can back when it is big (read-file.c); -errno when it cannot be read. */
  readFile(path: string): Buffer | number;
}

let addon: NativeAddon | null | undefined;

/**
 * The addon, built by `make build` where a C compiler and Node's headers are (scripts/native.mjs); null
 * without it (or when it does not load, or is an older build without every function), and every caller
 * then does what plain Node can.
 */
export function nativeAddon(): NativeAddon | null {
  if (addon !== undefined) return addon;
  try {
    const mod = { exports: {} as Partial<NativeAddon> };
    process.dlopen(mod, typeof __NATIVE_ADDON__ === 'string' ? __NATIVE_ADDON__ : fileURLToPath(new URL('../../bin/native.node', import.meta.url)));
    addon = typeof mod.exports.spawn === 'function' && typeof mod.exports.statProbe === 'function' && typeof mod.exports.readFile === 'function' ? (mod.exports as NativeAddon) : null;
  } catch {
    addon = null;
  }
  return addon;
}

/** fs.readFileSync(path), through the addon when it is built (fewer page faults for big files); the same errors. */
export function readWholeFile(path: string): Buffer {
  const got = nativeAddon()?.readFile(path);
  return typeof got === 'object' ? got : readFileSync(path);
}
