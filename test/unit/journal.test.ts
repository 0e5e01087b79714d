// The registry's journal (lib/registry/journal.ts), in-process: what a listing learns from the lines
// since its mark — names touched, changes left open, a journal that proves nothing — each stated.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { journalled, NO_MARK, readJournal, writerAlive } from '../../lib/registry/journal.js';
import { journalLine } from '../support/status-cache.js';

const dir = realpathSync(mkdtempSync(join(tmpdir(), 'subagents-journal-')));
after(() => rmSync(dir, { recursive: true, force: true }));

const alive = () => true;
const dead = () => false;

test('journalled: "+" before the change, "-" after it, both naming the run; readJournal reads them from a mark on', () => {
  const reg = join(dir, 'reg');
  mkdirSync(join(reg, 'agents', 'a+b', '1'), { recursive: true });
  let during = '';
  const got = journalled(join(reg, 'agents', 'a+b', '1'), () => {
    during = readJournal(reg, NO_MARK, [], writerAlive)
      .open.map((o) => o.name)
      .join();
    return 42;
  });
  assert.equal(got, 42);
  assert.equal(during, 'a/b', 'while the change is made, it is open (its writer, this process, lives)');
  const all = readJournal(reg, NO_MARK, [], writerAlive);
  assert.deepEqual([...all.touched], ['a/b']);
  assert.deepEqual(all.open, [], 'ended');
  assert.equal(all.lost, false);
  const since = readJournal(reg, all.mark, [], writerAlive);
  assert.deepEqual([...since.touched], [], 'nothing new since the mark');
  appendFileSync(join(reg, 'journal'), journalLine('-', 'c'));
  assert.deepEqual([...readJournal(reg, all.mark, [], writerAlive).touched], ['c']);
});

test('readJournal: open changes carried, closed by their "-" or their writer gone; a half line waits; damage, cuts and another file prove nothing', () => {
  const reg = join(dir, 'reg2');
  mkdirSync(reg);
  const path = join(reg, 'journal');
  writeFileSync(path, journalLine('+', 'x', 1));
  const first = readJournal(reg, NO_MARK, [], alive);
  assert.deepEqual(
    first.open.map((o) => o.name),
    ['x'],
  );
  assert.deepEqual(readJournal(reg, first.mark, first.open, dead).open, [], 'its writer is gone: closed');
  const still = readJournal(reg, first.mark, first.open, alive);
  assert.deepEqual([...still.touched], ['x'], 'an open change keeps its name touched');
  const half = journalLine('-', 'x', 1);
  appendFileSync(path, half.slice(0, 12));
  const waiting = readJournal(reg, first.mark, first.open, alive);
  assert.equal(waiting.mark.pos, first.mark.pos, 'a line without its end is left for later');
  assert.equal(waiting.lost, false);
  appendFileSync(path, half.slice(12));
  const closed = readJournal(reg, first.mark, first.open, alive);
  assert.deepEqual(closed.open, [], 'its "-" closes it');
  assert.equal(closed.lost, false);
  const mark = closed.mark;
  appendFileSync(path, 'garbage\n');
  assert.equal(readJournal(reg, mark, [], alive).lost, true, 'a damaged line');
  writeFileSync(path, journalLine('-', 'y', 5).repeat(20));
  assert.equal(readJournal(reg, mark, [], alive).lost, true, 'cut and written again past the mark: other bytes before it');
  writeFileSync(path, '');
  assert.equal(readJournal(reg, mark, [], alive).lost, true, 'cut');
  rmSync(path);
  assert.equal(readJournal(reg, mark, [], alive).lost, true, 'removed');
  assert.equal(readJournal(reg, NO_MARK, [], alive).lost, false, 'never written: nothing to prove');
});
