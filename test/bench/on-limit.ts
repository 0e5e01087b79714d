/**
 * Row 10 of `make bench`: resumed after a limit's reset (`--on-limit wait`). The pinned Claude Code,
 * signed in as a subscriber, against the fake Anthropic server (test/fakes/), which answers 429 with the
 * unified rate-limit headers until a reset some seconds ahead and normally after it: N runs started at
 * once, each parked at its limit and resumed by its supervisor. The figure is the time from the reset to
 * the resumed run's agent start (run 2's `agentStartedAt`): the jitter (up to 1 s by design) plus the
 * supervisor's own delay. Target: within 2 s. Without the pinned CLI (test/.clis) the row is skipped.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { startAnthropic, subscriberLimit } from '../fakes/anthropic.js';
import { cliBin, cliSetup } from '../fakes/env.js';
import type { Action, FakeRequest } from '../fakes/script.js';
import { details, methods, misses, rows } from './results.js';
import { readRecord, waitTerminal } from './runs.js';
import { AREA, QUICK, problems } from './setup.js';
import { cleanEnv, fmtMs, json, max, median, pad, removeTree, verb } from './util.js';

const TARGET_MS = 2000;

export async function onLimitRow(): Promise<void> {
  if (!existsSync(cliBin('claude'))) {
    problems.push('row 10: the pinned Claude Code is not installed (make test-clis): skipped');
    return;
  }
  const N = QUICK ? 2 : 6;
  const R = join(AREA, 'on-limit');
  const home = join(AREA, 'on-limit-home');
  const work = join(AREA, 'on-limit-work');
  mkdirSync(work, { recursive: true });
  // Far enough ahead that every run has hit its limit and parked before it, on a loaded machine.
  const reset = Math.floor(Date.now() / 1000) + (QUICK ? 25 : 35);
  const handler = (req: FakeRequest): Action | undefined =>
    (req.conversation?.lastUserText ?? '').includes('LIMITED') && Date.now() < reset * 1000 ? subscriberLimit(reset) : undefined;
  const srv = await startAnthropic({ handler });
  try {
    const setup = cliSetup('claude', { home, baseUrl: srv.url });
    const env = cleanEnv({ ...setup.env, CLAUDE_CODE_OAUTH_TOKEN: 'sk-ant-oat01-fake-token-for-bench', CLAUDE_CODE_TMPDIR: home });
    delete env.ANTHROPIC_API_KEY;
    const names = Array.from({ length: N }, (_, i) => `limit/${pad(i)}`);
    await Promise.all(
      names.map(async (name) => {
        const args = ['--registry', R, '--cli', 'claude', '--cwd', work, '--name', name, '--prompt', 'LIMITED REPLY:resumed', '--on-limit', 'wait'];
        const d = await verb('start-subagent', args, { cwd: AREA, env, stdio: ['ignore', 'pipe', 'pipe'] });
        if (json(d)?.ok !== true) throw new Error(`start ${name}: ${d.stdout.slice(0, 300)}`);
      }),
    );
    await waitTerminal(R, ['--prefix', 'limit'], 240);
    const late: number[] = [];
    for (const name of names) {
      const first = readRecord(R, name, 1);
      const second = readRecord(R, name, 2);
      const ok = first?.reason === 'rate-limit' && Date.parse(first.finishedAt) < reset * 1000 && second?.outcome === 'succeeded';
      if (!ok) problems.push(`row 10: ${name}: run 1 ${first?.outcome}/${first?.reason} at ${first?.finishedAt}, run 2 ${second?.outcome ?? 'none'}`);
      else late.push(Date.parse(second.agentStartedAt) - reset * 1000);
    }
    report(N, late);
  } finally {
    await srv.close();
    removeTree(R);
    removeTree(home);
    removeTree(work);
  }
}

function report(n: number, late: number[]): void {
  const worst = max(late);
  const verdict = !late.length ? 'n/a' : worst <= TARGET_MS ? 'meets' : `**misses**: the latest ${fmtMs(worst - TARGET_MS)} over 2 s`;
  if (verdict.startsWith('**')) misses.push(`row 10 (resumed after the reset): ${verdict}`);
  rows.push({
    what: `\`--on-limit wait\`: resumed after the limit's reset (Claude Code, fake server, ${n} runs at once)`,
    target: 'within 2 s of the reset',
    on: late.length ? `median **${fmtMs(median(late))}**, latest ${fmtMs(worst)} (${late.length} runs)` : 'n/a',
    plain: null,
    floor: 'the reset',
    verdict,
  });
  methods.push({
    title: 'Row 10: resumed after a limit',
    text: `${n} Claude Code runs (the pinned CLI, signed in as a subscriber) started at once with \`--on-limit wait\` against the fake Anthropic server, which answers 429 with the unified rate-limit headers until a reset some 30 s ahead: each is parked and resumed by its own supervisor. The figure is run 2's \`agentStartedAt\` minus the reset, for the runs whose run 1 ended before the reset; it includes the jitter of up to 1 s that spreads parked runs out.`,
  });
  details.push(`- resumed after the reset: ${late.map((ms) => fmtMs(ms)).join(', ')}`);
}
