/**
 * The anchor of row 2: the seed contract's own implementation, opencode-subagent 5.0.5, whose `status`
 * reads one JSON file (`<cwd>/.opencode-subagent/registry.json`: {version, agents: {name: record}}),
 * under a lock file it creates and removes, checking each running run's pid with kill(pid, 0).
 *
 * Pinned like the agent CLIs: the version, and the SHA-256 of its one script. It is taken from the npm
 * registry (`npm pack opencode-subagent@5.0.5`) when the registry has it — it does not at the time of
 * writing: the project is published only as its source repository — else from
 * SUBAGENT_BENCH_ANCHOR, a checkout of that repository at its 5.0.5 commit (4d29e10; its CHANGELOG's
 * newest entry is 5.0.5). Without either the rows say so and measure ours alone.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AREA, log } from './setup.js';
import type { Identity } from './util.js';

/** The pin: the version, and the SHA-256 of its script (opencode-subagent.js) at that version. */
export const ANCHOR = { package: 'opencode-subagent', version: '5.0.5', sha256: 'd5851af411583c2fe0ec31a3dd8a0ef3cff7b5ba31a956feb2824d617b1628da' };
/** The anchor's script within its repository (and within its npm package, were it published so). */
const SCRIPT = '.claude/skills/opencode-subagent/bin/opencode-subagent.js';

let found: { script: string; from: string } | string | undefined;

/** The anchor's script, verified against its pin, or why there is none. */
export function anchorScript(): { script: string; from: string } | string {
  if (found !== undefined) return found;
  found = fromEnv() ?? fromNpm();
  if (typeof found === 'string') log(`anchor: ${found}`);
  return found;
}

function verified(script: string, from: string): { script: string; from: string } | string {
  const sha = createHash('sha256').update(readFileSync(script)).digest('hex');
  if (sha !== ANCHOR.sha256)
    return `the anchor at ${from} is not ${ANCHOR.package} ${ANCHOR.version} (its script's SHA-256 is ${sha}, the pin ${ANCHOR.sha256})`;
  return { script, from };
}

function fromEnv(): { script: string; from: string } | string | null {
  const dir = process.env.SUBAGENT_BENCH_ANCHOR;
  if (!dir) return null;
  const script = join(dir, SCRIPT);
  if (!existsSync(script)) return `SUBAGENT_BENCH_ANCHOR=${dir} holds no ${SCRIPT}`;
  return verified(script, `SUBAGENT_BENCH_ANCHOR (${dir})`);
}

function fromNpm(): { script: string; from: string } | string {
  const dir = join(AREA, 'anchor-package');
  mkdirSync(dir, { recursive: true });
  const spec = `${ANCHOR.package}@${ANCHOR.version}`;
  const r = spawnSync('npm', ['pack', spec, '--pack-destination', dir, '--silent'], { encoding: 'utf8', timeout: 120_000 });
  const tgz = readdirSync(dir).find((f) => f.endsWith('.tgz'));
  if (r.status !== 0 || !tgz)
    return `${spec} is not on the npm registry (npm pack: ${(r.stderr || r.stdout).trim().split('\n')[0] ?? r.status}); set SUBAGENT_BENCH_ANCHOR to a checkout of its repository at ${ANCHOR.version} to measure it`;
  const x = spawnSync('tar', ['-xzf', join(dir, tgz), '-C', dir], { encoding: 'utf8' });
  if (x.status !== 0) return `cannot unpack ${tgz}: ${x.stderr}`;
  const script = join(dir, 'package', SCRIPT);
  if (!existsSync(script)) return `${tgz} holds no ${SCRIPT}`;
  return verified(script, `the npm registry (${spec})`);
}

const anchorRegistries = new Map<number, string>();
/**
 * A directory holding the anchor's registry of n done runs and `running` running ones, as its own runs
 * write them (its run-worker's done record; running: a live pid), for `status` run from that directory.
 */
export function anchorRegistry(n: number, running: number, holder: Identity, cwd: string): string {
  const known = anchorRegistries.get(n);
  if (known) return known;
  const root = join(AREA, `anchor-${n}`);
  mkdirSync(join(root, '.opencode-subagent'), { recursive: true });
  const agents: Record<string, unknown> = {};
  const at = new Date(Date.now() - 3_600_000).toISOString();
  const end = new Date(Date.now() - 3_599_000).toISOString();
  for (let i = 0; i < n; i++) {
    const name = `run-${String(i).padStart(5, '0')}`;
    agents[name] = {
      name,
      pid: 100000 + i,
      sessionId: `ses_${String(i).padStart(24, '0')}`,
      status: 'done',
      exitCode: 0,
      startedAt: at,
      updatedAt: end,
      finishedAt: end,
      model: 'opencode/gpt-5-nano',
      variant: null,
      resumeCount: 0,
      prompt: 'echo "hello from the template run"',
      cwd,
      error: null,
      stderr: null,
    };
  }
  for (let i = 0; i < running; i++) {
    const name = `live-${String(i).padStart(3, '0')}`;
    agents[name] = {
      name,
      pid: holder.pid,
      sessionId: null,
      status: 'running',
      exitCode: null,
      startedAt: at,
      updatedAt: at,
      finishedAt: null,
      model: 'opencode/gpt-5-nano',
      variant: null,
      resumeCount: 0,
      prompt: 'sleep',
      cwd,
    };
  }
  writeFileSync(join(root, '.opencode-subagent', 'registry.json'), JSON.stringify({ version: 5, agents, updatedAt: end }));
  anchorRegistries.set(n, root);
  return root;
}
