/**
 * One of Node's internal bindings (process.binding, DEP0111), for the few places where the public API
 * costs a verb or a supervisor real time or memory: spawning without child_process (proc/direct-spawn.ts),
 * stat without Stats objects (registry/stat-key.ts), CRC-32 without node:zlib (registry/crc32.ts), a V8
 * flag without node:v8 (cli/no-turbofan.ts). Each caller checks what it gets and has a public fallback
 * (or goes without: the flag is only a speed-up). process.binding warns under --pending-deprecation (for
 * some bindings, v8 among them, always), and that warning is about our internals, not the caller's code: it would land
 * on the caller's stderr and in supervisor.log, so it is silenced for this one call (noDeprecation is
 * read when the warning would be emitted, and restored at once).
 */
export function internalBinding<T>(name: string): T | null {
  const p = process as unknown as { binding?: (name: string) => unknown; noDeprecation?: boolean };
  if (typeof p.binding !== 'function') return null;
  const was = p.noDeprecation;
  p.noDeprecation = true;
  try {
    return p.binding(name) as T;
  } catch {
    return null;
  } finally {
    p.noDeprecation = was;
  }
}
