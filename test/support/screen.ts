/**
 * A person at a real program's screen in tmux (support/tmux.ts): waiting for what the screen shows, typing
 * into a TUI that may still be settling, leaving it with its own key.
 */
import { existsSync } from 'node:fs';
import { plain, type PaneRun, type Tmux } from './tmux.js';
import { until } from './wait.js';

/** Waits until the pane's text (escapes removed) satisfies `pred`; returns it. On time out, the error shows the screen. */
export async function untilScreen(tmux: Tmux, p: PaneRun, what: string, pred: (text: string) => boolean, timeoutMs = 90_000): Promise<string> {
  let last = '';
  try {
    return await until(
      what,
      () => {
        last = tmux.capture(p).map(plain).join('\n');
        return pred(last) ? last : null;
      },
      timeoutMs,
      100,
    );
  } catch (err) {
    throw new Error(`${(err as Error).message}; the screen:\n${last}`);
  }
}

/** Types `text` as a person types it: until the TUI shows it in its input (a TUI still settling may drop keys). */
export async function typeUntilShown(tmux: Tmux, p: PaneRun, text: string, shown: string): Promise<void> {
  await until(
    'the prompt typed into the TUI',
    async () => {
      tmux.send(p, ['C-u']);
      tmux.send(p, [text], { literal: true });
      return await untilScreen(tmux, p, 'the typed prompt shown', (s) => s.includes(shown), 3_000).catch(() => null);
    },
    60_000,
    10,
  );
}

/**
 * Presses Enter on a typed prompt until the screen shows `answered`: a TUI that took the typed text as a
 * paste may take an Enter right after it as part of it, and a person presses it again. An Enter on an
 * empty input, should the first have been taken after all, submits nothing in these TUIs.
 */
export async function submitUntil(tmux: Tmux, p: PaneRun, what: string, answered: (text: string) => boolean): Promise<string> {
  for (let i = 0; i < 3; i++) {
    tmux.send(p, ['Enter']);
    const seen = await untilScreen(tmux, p, what, answered, 15_000).catch(() => null);
    if (seen !== null) return seen;
  }
  return untilScreen(tmux, p, what, answered);
}

/** Presses `key` until the program in the pane has exited (some ask for it twice in a row, saying "again"). */
export async function leaveWith(tmux: Tmux, p: PaneRun, key: string): Promise<void> {
  for (let i = 0; i < 5 && !existsSync(p.doneFile); i++) {
    tmux.send(p, [key]);
    await untilScreen(tmux, p, 'asked for the key again', (s) => /again/i.test(s) || existsSync(p.doneFile), 3_000).catch(() => undefined);
    if (!existsSync(p.doneFile)) tmux.send(p, [key]);
    await until('the CLI left', () => existsSync(p.doneFile) || null, 3_000).catch(() => undefined);
  }
}
