// The dashboard's parts that need no terminal: the keys read from raw bytes, text wrapped to a width, and
// the frame writer, which must rewrite only the rows that changed (a full redraw per event flickers).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { decodeKeys } from '../../lib/views/dash/keys.js';
import { Terminal } from '../../lib/views/dash/terminal.js';
import { displayWidth, wrap } from '../../lib/views/width.js';

test('keys: arrows in both cursor modes, paging, Enter, Escape alone, control keys, characters, unknown sequences dropped', () => {
  const names = (s: string) => decodeKeys(s).map((k) => (k.name === 'char' ? k.ch : k.name));
  assert.deepEqual(names('\x1b[A\x1b[B\x1bOA\x1bOB\x1b[C\x1b[D'), ['up', 'down', 'up', 'down', 'right', 'left']);
  assert.deepEqual(names('\x1b[5~\x1b[6~\x1b[H\x1b[F\x1b[1~\x1b[4~'), ['pageup', 'pagedown', 'home', 'end', 'home', 'end']);
  assert.deepEqual(names('\r\n\t\x7f\b\x03\x04\x15'), ['enter', 'enter', 'tab', 'backspace', 'backspace', 'ctrl-c', 'ctrl-d', 'ctrl-u']);
  assert.deepEqual(names('\x1b'), ['escape']);
  assert.deepEqual(names('\x1bj'), ['escape', 'j'], 'Alt+j: Escape, then j');
  assert.deepEqual(names('jk/q'), ['j', 'k', '/', 'q']);
  assert.deepEqual(names('é😀'), ['é', '😀'], 'one key per code point');
  assert.deepEqual(names('\x1b[1;5A'), ['up'], 'an arrow with a modifier is the arrow');
  assert.deepEqual(names('\x1b[200~x\x1b[15~'), ['x'], 'sequences the dashboard does not know are dropped whole');
  assert.deepEqual(names('\x1b['), [], 'a cut sequence is dropped');
});

test('wrap: at spaces where it can, hard where a word is longer than the width, by display columns', () => {
  assert.deepEqual(wrap('the quick brown fox', 10), ['the quick', 'brown fox']);
  assert.deepEqual(wrap('abcdefghijkl', 5), ['abcde', 'fghij', 'kl']);
  assert.deepEqual(wrap('', 5), ['']);
  for (const row of wrap('审查接口审查接口 ok', 6)) assert.ok(displayWidth(row) <= 6, row);
});

/** A Terminal over a fake tty output of `cols`×`rows`, and what it was sent. */
function fakeTerminal(cols: number, rows: number) {
  const output = new PassThrough() as unknown as NodeJS.WriteStream & { columns: number; rows: number };
  output.columns = cols;
  output.rows = rows;
  let sent = '';
  (output as unknown as PassThrough).on('data', (d) => (sent += String(d)));
  const input = new PassThrough() as unknown as NodeJS.ReadStream;
  const term = new Terminal({ input, output });
  const take = () => {
    const s = sent;
    sent = '';
    return s;
  };
  return { term, output, take };
}

test('the frame writer rewrites only the rows that changed; after a resize, everything', () => {
  const t = fakeTerminal(40, 5);
  t.term.draw(['title', 'row one', 'row two', 'row three', 'keys']);
  const first = t.take();
  assert.match(first, /\x1b\[2J/, 'the first frame clears the screen');
  for (const r of ['title', 'row one', 'row two', 'row three', 'keys']) assert.ok(first.includes(r), r);
  t.term.draw(['title', 'row one', 'row 2!', 'row three', 'keys']);
  const second = t.take();
  assert.equal(second, '\x1b[3;1H\x1b[0mrow 2!\x1b[0m\x1b[K', 'only row 3 is written, at its place');
  t.term.draw(['title', 'row one', 'row 2!', 'row three', 'keys']);
  assert.equal(t.take(), '', 'nothing changed: nothing is written');
  t.term.draw(['title', 'row one']);
  assert.equal(t.take(), '\x1b[3;1H\x1b[0m\x1b[0m\x1b[K\x1b[4;1H\x1b[0m\x1b[0m\x1b[K\x1b[5;1H\x1b[0m\x1b[0m\x1b[K', 'rows gone are cleared');
  t.output.columns = 60;
  t.term.draw(['title', 'row one']);
  const resized = t.take();
  assert.match(resized, /\x1b\[2J/, 'a resize draws everything again');
  assert.ok(resized.includes('title') && resized.includes('row one'));
});
