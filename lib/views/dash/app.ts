import { SubagentError } from '../../base/errors.js';
import { Throttle, Watch } from '../../base/wait.js';
import { monotonicMs } from '../../base/time.js';
import { attach } from '../../commands/attach.js';
import { cancel } from '../../commands/cancel.js';
import { placeOf, type Context } from '../../commands/context.js';
import { resume } from '../../commands/resume.js';
import { status } from '../../commands/status.js';
import { agentsDir, nameDir, runDir } from '../../registry/store.js';
import type { AgentEntry } from '../../runs/entry.js';
import { isTerminal } from '../../runs/observe.js';
import { useColor } from '../table.js';
import { Conversation } from './conversation.js';
import type { Key } from './keys.js';
import { bodyRows, conversationLines, listRows, listScreen, rowKey, runScreen, type ListRow, type Look } from './screens.js';
import { Terminal, type TerminalIo } from './terminal.js';

export interface DashOptions extends Context {
  /** Only the runs under `prefix/`. */
  prefix?: string | undefined;
  /** Only these names. */
  names?: string[] | undefined;
  io: TerminalIo;
}

/** The slowest the list is read again when nothing announced a change (a supervisor that died says nothing). */
const RELIST_MS = 2000;
/** At most this often a change is acted on: a stream of record writes costs one read per spell. */
const SPACING_MS = 500;
/** The clock of the elapsed and "ago" columns: a redraw rewrites only the rows that changed. */
const TICK_MS = 1000;
/** The most names whose directories are watched one by one (above it, the relist's own pace covers them). */
const MAX_WATCHED_NAMES = 2000;

const LIST_KEYS = '↑↓/jk move  Enter open  / filter  c cancel  r resume  a attach  q quit';
const RUN_KEYS = 'Esc back  ↑↓/jk scroll  g/G top/end  Tab sub-agent  c cancel  r resume  a attach  q quit';

type Overlay =
  | { kind: 'filter'; text: string }
  | { kind: 'confirm-cancel'; name: string }
  | { kind: 'prompt'; name: string; text: string }
  | { kind: 'note'; text: string };

/**
 * subagent-dash: the registry's runs, live, for a person at a terminal (docs/dash.md). The list is read
 * through the library as status reads it (the same trust rules: reading acts on nothing); it is read
 * again when the registry's directories say something changed, at most every SPACING_MS, and every
 * RELIST_MS regardless. Cancel and resume are the library's, after a confirmation.
 */
export class Dash {
  private readonly term: Terminal;
  private readonly registry: string;
  private agents: AgentEntry[] = [];
  private rows: ListRow[] = [];
  private head = '';
  private selectedKey: string | null = null;
  private top = 0;
  private filter = '';
  private overlay: Overlay | null = null;
  private conversation: Conversation | null = null;
  private child: string | null = null;
  private scroll = 0;
  private readonly watch: Watch;
  private readonly runWatch: Watch;
  private readonly relist: Throttle;
  /** What changes on disk draw, at most this often; a key draws at once. */
  private readonly repaint: Throttle;
  private drawnAt = -Infinity;
  private readonly reread: Throttle;
  private timers: NodeJS.Timeout[] = [];
  private finished: (() => void) | null = null;
  private busy = false;
  private again = false;
  /** The person is in a run's own session (subagent-attach): nothing is drawn. */
  private away = false;
  /** What the next read reads: the whole list, or these names (their runs' directories changed). */
  private whole = true;
  private readonly dirty = new Set<string>();
  /** The watched directories of runs at work, and their names. */
  private readonly runDirs = new Map<string, string>();

  constructor(private readonly o: DashOptions) {
    this.term = new Terminal(o.io);
    this.registry = placeOf(o).registry;
    this.relist = new Throttle(SPACING_MS, () => void this.refresh());
    this.reread = new Throttle(SPACING_MS / 2, () => void this.follow());
    this.repaint = new Throttle(SPACING_MS / 2, () => this.draw());
    this.watch = new Watch(
      (path) => this.changed(path),
      (f) => f === null || !/^(events\.log|stderr\.log|supervisor\.log|prompt)$|\.lock|\.tmp-|^\.new-/.test(f),
    );
    this.runWatch = new Watch(() => this.reread.schedule());
  }

  /** Runs until the person quits (q, Ctrl-C) or the terminal goes away. */
  async run(): Promise<void> {
    const done = new Promise<void>((resolve) => (this.finished = resolve));
    const leave = () => this.term.leave();
    process.on('exit', leave);
    try {
      this.term.enter(
        (keys) => this.onKeys(keys),
        () => this.draw(),
      );
      await this.refresh();
      this.timers.push(
        setInterval(() => {
          this.whole = true;
          this.relist.schedule();
        }, RELIST_MS),
      );
      // The clock's redraw, unless a change drew the screen within the last tick.
      this.timers.push(setInterval(() => (monotonicMs() - this.drawnAt >= TICK_MS - 100 ? this.draw() : undefined), TICK_MS));
      this.o.io.input.on('end', () => this.quit());
      await done;
    } finally {
      for (const t of this.timers) clearInterval(t);
      this.relist.stop();
      this.reread.stop();
      this.repaint.stop();
      this.watch.close();
      this.runWatch.close();
      this.term.leave();
      process.off('exit', leave);
    }
  }

  private quit(): void {
    this.finished?.();
  }

  private look(): Look {
    const env = this.o.env ?? process.env;
    const plain = env.TERM === 'dumb' || (env.NO_COLOR !== undefined && env.NO_COLOR !== '');
    const locale = env.LC_ALL || env.LC_CTYPE || env.LANG || '';
    const utf8 = /utf-?8/i.test(locale);
    const { cols, rows } = this.term.size;
    return { cols, rows, color: useColor({ isTTY: true }, env), ascii: plain || !utf8, now: Date.now() };
  }

  private selection(): { names: string[] } | { prefix: string } | { all: true } {
    if (this.o.names?.length) return { names: this.o.names };
    return this.o.prefix !== undefined ? { prefix: this.o.prefix } : { all: true };
  }

  /**
   * A watched directory changed: a run's own (its record) asks for that name alone to be read again;
   * agents/ or a name's directory (a name, or a run of one, appeared or went) for the whole list.
   */
  private changed(path: string): void {
    const name = this.runDirs.get(path);
    if (name === undefined) this.whole = true;
    else this.dirty.add(name);
    this.relist.schedule();
  }

  /** Reads the list again (one read at a time; a change during a read is read after it). */
  private async refresh(): Promise<void> {
    if (this.busy) {
      this.again = true;
      return;
    }
    this.busy = true;
    const whole = this.whole || this.agents.length === 0;
    const names = [...this.dirty];
    this.whole = false;
    this.dirty.clear();
    try {
      const where = { registry: this.registry, env: this.o.env, cwd: this.o.cwd };
      if (whole) this.agents = (await status({ ...where, ...this.selection() })).agents;
      else if (names.length) {
        const fresh = new Map((await status({ ...where, names })).agents.map((a) => [a.name, a]));
        this.agents = this.agents.map((a) => fresh.get(a.name) ?? a);
      }
      this.watchRegistry();
    } catch (err) {
      this.overlay = { kind: 'note', text: `reading the registry failed: ${(err as Error).message}` };
    } finally {
      this.busy = false;
    }
    this.repaint.schedule();
    if (this.again) {
      this.again = false;
      this.relist.schedule();
    }
  }

  private watchRegistry(): void {
    this.watch.add(agentsDir(this.registry));
    let n = 0;
    for (const a of this.agents) {
      if (++n > MAX_WATCHED_NAMES) break;
      this.watch.add(nameDir(this.registry, a.name));
      // A run at work rewrites its record as it goes (usage, activity): its directory says so.
      if (!isTerminal(a.status)) {
        const dir = runDir(this.registry, a.name, a.run);
        this.runDirs.set(dir, a.name);
        this.watch.add(dir);
      }
    }
  }

  private async follow(): Promise<void> {
    const c = this.conversation;
    if (!c) return;
    try {
      if (await c.poll()) this.repaint.schedule();
      for (const d of c.watched) this.runWatch.add(d);
    } catch (err) {
      this.overlay = { kind: 'note', text: `reading ${c.name} failed: ${(err as Error).message}` };
      this.draw();
    }
  }

  private selectedIndex(): number {
    const i = this.rows.findIndex((r) => rowKey(r) === this.selectedKey);
    return Math.max(i, 0);
  }

  private selectedRow(): ListRow | null {
    return this.rows[this.selectedIndex()] ?? null;
  }

  private draw(): void {
    // In a run's own session (a): the terminal is the CLI's.
    if (this.away) return;
    const look = this.look();
    let lines: string[];
    if (this.conversation) {
      const c = this.conversation;
      const entry = this.agents.find((a) => a.name === c.name) ?? null;
      lines = runScreen({
        entry,
        name: c.name,
        run: c.currentRun,
        lines: conversationLines(c.messages, this.child, look),
        scroll: this.scroll,
        child: this.child,
        footer: this.footer(RUN_KEYS),
        look,
      });
    } else {
      const { head, rows } = listRows(this.agents, this.filter, look);
      this.head = head;
      this.rows = rows;
      const i = this.selectedIndex();
      this.selectedKey = rows[i] ? rowKey(rows[i]!) : null;
      const room = bodyRows(look);
      if (i < this.top) this.top = i;
      if (i >= this.top + room) this.top = i - room + 1;
      this.top = Math.max(0, Math.min(this.top, Math.max(0, rows.length - room)));
      lines = listScreen({
        registry: this.registry,
        agents: this.agents,
        head: this.head,
        rows,
        selected: i,
        top: this.top,
        filter: this.filter,
        footer: this.footer(LIST_KEYS),
        look,
      });
    }
    this.term.draw(lines);
    this.drawnAt = monotonicMs();
  }

  private footer(keys: string): string {
    const o = this.overlay;
    if (!o) return keys;
    if (o.kind === 'filter') return `filter: ${o.text}_   (Enter keeps it, Esc clears it)`;
    if (o.kind === 'confirm-cancel') return `cancel ${o.name}? y to cancel, any other key not to`;
    if (o.kind === 'prompt') return `resume ${o.name} with: ${o.text}_   (Enter sends, Esc drops it)`;
    return o.text;
  }

  private onKeys(keys: Key[]): void {
    // Drawn after each key, not after the read: a key acts on the rows the keys before it made (a filter
    // typed and Enter then r in one read resumes the run the filter left, not the one selected before).
    for (const k of keys) {
      this.onKey(k);
      this.draw();
    }
  }

  private onKey(k: Key): void {
    const o = this.overlay;
    if (k.name === 'ctrl-c') this.quit();
    else if (o?.kind === 'filter') this.onFilterKey(o, k);
    else if (o?.kind === 'prompt') this.onPromptKey(o, k);
    else if (o?.kind === 'confirm-cancel') {
      this.overlay = null;
      if (k.name === 'char' && (k.ch === 'y' || k.ch === 'Y')) void this.doCancel(o.name);
    } else {
      if (o?.kind === 'note') this.overlay = null;
      if (k.name === 'char' && k.ch === 'q') this.quit();
      else if (this.conversation) this.onRunKey(k);
      else this.onListKey(k);
    }
  }

  private onListKey(k: Key): void {
    const i = this.selectedIndex();
    const move = (to: number) => {
      const r = this.rows[Math.max(0, Math.min(this.rows.length - 1, to))];
      if (r) this.selectedKey = rowKey(r);
    };
    const page = bodyRows(this.look());
    const ch = k.name === 'char' ? k.ch : null;
    if (k.name === 'up' || ch === 'k') move(i - 1);
    else if (k.name === 'down' || ch === 'j') move(i + 1);
    else if (k.name === 'pageup') move(i - page);
    else if (k.name === 'pagedown') move(i + page);
    else if (k.name === 'home' || ch === 'g') move(0);
    else if (k.name === 'end' || ch === 'G') move(this.rows.length - 1);
    else if (k.name === 'escape') this.filter = '';
    else if (ch === '/') this.overlay = { kind: 'filter', text: this.filter };
    else if (k.name === 'enter' || k.name === 'right') {
      const r = this.selectedRow();
      if (r) void this.open(String(r.entry.name), r.child?.id ?? null);
    } else this.onActionKey(k, this.selectedRow()?.entry ?? null);
  }

  private onRunKey(k: Key): void {
    const c = this.conversation!;
    const ch = k.name === 'char' ? k.ch : null;
    const page = bodyRows(this.look());
    if (k.name === 'escape' || k.name === 'left') {
      this.close();
      return;
    }
    if (k.name === 'up' || ch === 'k') this.scroll += 1;
    else if (k.name === 'down' || ch === 'j') this.scroll = Math.max(0, this.scroll - 1);
    else if (k.name === 'pageup') this.scroll += page;
    else if (k.name === 'pagedown') this.scroll = Math.max(0, this.scroll - page);
    else if (k.name === 'home' || ch === 'g') this.scroll = Number.MAX_SAFE_INTEGER;
    else if (k.name === 'end' || ch === 'G') this.scroll = 0;
    else if (k.name === 'tab') {
      const kids = (this.agents.find((a) => a.name === c.name)?.children ?? []).map((x) => x.id);
      const at = this.child === null ? -1 : kids.indexOf(this.child);
      this.child = at + 1 < kids.length ? kids[at + 1]! : null;
      this.scroll = 0;
    } else this.onActionKey(k, this.agents.find((a) => a.name === c.name) ?? null);
    // Scrolled past the top: held at the top.
    const total = conversationLines(c.messages, this.child, this.look()).length;
    this.scroll = Math.min(this.scroll, Math.max(0, total - bodyRows(this.look())));
  }

  private onActionKey(k: Key, entry: AgentEntry | null): void {
    if (k.name !== 'char' || !entry) return;
    if (k.ch === 'c') {
      this.overlay = isTerminal(entry.status)
        ? { kind: 'note', text: `${entry.name} is not running (${entry.status})` }
        : { kind: 'confirm-cancel', name: entry.name };
    } else if (k.ch === 'r') this.overlay = { kind: 'prompt', name: entry.name, text: '' };
    else if (k.ch === 'a') void this.doAttach(entry.name);
  }

  private onFilterKey(o: Extract<Overlay, { kind: 'filter' }>, k: Key): void {
    if (k.name === 'enter') this.overlay = null;
    else if (k.name === 'escape') {
      this.overlay = null;
      this.filter = '';
    } else {
      o.text = edited(o.text, k);
      this.filter = o.text;
    }
  }

  private onPromptKey(o: Extract<Overlay, { kind: 'prompt' }>, k: Key): void {
    if (k.name === 'escape') this.overlay = null;
    else if (k.name === 'enter') {
      this.overlay = null;
      if (o.text.trim()) void this.doResume(o.name, o.text);
    } else o.text = edited(o.text, k);
  }

  private async open(name: string, child: string | null): Promise<void> {
    const c = new Conversation(this.registry, name);
    this.conversation = c;
    this.child = child;
    this.scroll = 0;
    try {
      await c.open();
      for (const d of c.watched) this.runWatch.add(d);
    } catch (err) {
      this.overlay = { kind: 'note', text: `opening ${name} failed: ${(err as Error).message}` };
    }
    this.draw();
  }

  private close(): void {
    this.conversation = null;
    this.child = null;
    this.runWatch.close();
  }

  private async doCancel(name: string): Promise<void> {
    this.overlay = { kind: 'note', text: `cancelling ${name}…` };
    this.draw();
    try {
      const r = await cancel({ name, registry: this.registry, env: this.o.env, cwd: this.o.cwd });
      this.overlay = {
        kind: 'note',
        text: `${name}: run ${r.run} ${r.outcome ?? r.status}${r.survivors.length ? `, ${r.survivors.length} processes left` : ''}`,
      };
    } catch (err) {
      this.overlay = { kind: 'note', text: failure(name, err) };
    }
    this.relist.schedule();
    this.draw();
  }

  /**
   * Steps into the run's session (subagent-attach) in this terminal: the dashboard gives the terminal up
   * while the person is in the CLI, and takes it back, drawn anew, when they leave.
   */
  private async doAttach(name: string): Promise<void> {
    this.away = true;
    this.term.leave();
    try {
      const r = await attach({ name, registry: this.registry, env: this.o.env, cwd: this.o.cwd });
      this.overlay = { kind: 'note', text: `${name}: your turn is run ${r.run}, ${r.outcome ?? 'ended'}` };
    } catch (err) {
      this.overlay = { kind: 'note', text: failure(name, err) };
    } finally {
      this.away = false;
      this.term.enter(
        (keys) => this.onKeys(keys),
        () => this.draw(),
      );
    }
    this.whole = true;
    this.relist.schedule();
    this.draw();
  }

  private async doResume(name: string, prompt: string): Promise<void> {
    this.overlay = { kind: 'note', text: `resuming ${name}…` };
    this.draw();
    try {
      const r = await resume({ name, prompt, registry: this.registry, env: this.o.env, cwd: this.o.cwd });
      this.overlay = { kind: 'note', text: `${name}: run ${r.run} started` };
    } catch (err) {
      this.overlay = { kind: 'note', text: failure(name, err) };
    }
    this.relist.schedule();
    this.draw();
  }
}

/** A line of typed text after a key: characters added, Backspace, Ctrl-U. */
function edited(text: string, k: Key): string {
  if (k.name === 'char') return text + k.ch;
  if (k.name === 'backspace') return [...text].slice(0, -1).join('');
  if (k.name === 'ctrl-u') return '';
  return text;
}

function failure(name: string, err: unknown): string {
  if (err instanceof SubagentError) return `${name}: ${err.code}: ${err.message}${err.details.hint ? ` (${String(err.details.hint)})` : ''}`;
  return `${name}: ${(err as Error).message}`;
}
