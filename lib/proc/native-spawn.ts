import { fileURLToPath } from 'node:url';

/** Bundled builds (scripts/bundle.mjs) define where the addon sits next to the verb. */
declare const __NATIVE_ADDON__: string | undefined;
const ADDON = fileURLToPath(new URL(typeof __NATIVE_ADDON__ === 'string' ? __NATIVE_ADDON__ : '../../bin/spawn.node', import.meta.url));

/** lib/native/spawn.c: posix_spawn, which Node 20 has no API for. */
export interface NativeSpawn {
  /** [pid, gate fd] or [-errno, -1]; stdio: fds for 0-2, -1 = /dev/null, -2 (for 0) = a gate pipe. */
  spawn(file: string, argv: string[], envp: string[], cwd: string, stdio: number[], setsid: boolean): [number, number];
}

let addon: NativeSpawn | null | undefined;

/**
 * The addon, built by `make build` where a C compiler and Node's headers are (scripts/native.mjs); null
 * without it (or when it does not load), and every caller then does what Node itself does.
 */
export function nativeSpawn(): NativeSpawn | null {
  if (addon !== undefined) return addon;
  try {
    const mod = { exports: {} as Partial<NativeSpawn> };
    process.dlopen(mod, ADDON);
    addon = typeof mod.exports.spawn === 'function' ? (mod.exports as NativeSpawn) : null;
  } catch {
    addon = null;
  }
  return addon;
}
