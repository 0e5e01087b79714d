// The splice of a listing's line (lib/registry/done-cache.ts, spliceViews): fresh items serialised and
// escaped, the status cache's stretches as the cache's own bytes, joined into one piece where one follows
// another in the same file — and the whole byte for byte what JSON.stringify makes of the same items.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseViews, spliceViews, type CachedView } from '../../lib/registry/done-cache.js';

const views = Buffer.from('{"n":"a"},{"n":"b"},{"n":"c\\u2028"},{"n":"d"},');
/** The stretch of the views from the start of entry `from` to the end of entry `to` (entries 0..3, where each ends). */
const ends = [9, 19, 35, 45];
const stretch = (from: number, to: number, file = views): CachedView => ({
  name: 'x',
  views: file,
  start: from === 0 ? 0 : ends[from - 1]! + 1,
  end: ends[to]!,
  queueTicket: false,
  last: to,
});

test('fresh items and stretches make the JSON of the same values, separators escaped', () => {
  const items = ['{"n":"0\u2028"}', stretch(0, 1), '{"n":"mid"}', stretch(2, 3)];
  const pieces = spliceViews(items);
  const values = [{ n: '0\u2028' }, { n: 'a' }, { n: 'b' }, { n: 'mid' }, { n: 'c\u2028' }, { n: 'd' }];
  assert.equal(
    Buffer.concat(pieces).toString(),
    JSON.stringify(values)
      .slice(1, -1)
      .replace(/\u2028/g, '\\u2028'),
  );
  // The stretches are the cache's bytes, not copies.
  assert.ok(pieces.some((p) => p.buffer === views.buffer && p.byteOffset === views.byteOffset && p.length === ends[1]));
});

test('consecutive stretches of one file are one piece; of two files, or with a gap, two', () => {
  const joined = spliceViews([stretch(0, 0), stretch(1, 2), stretch(3, 3)]);
  assert.equal(joined.length, 1);
  assert.equal(joined[0]!.toString(), views.subarray(0, ends[3]).toString());
  const gap = spliceViews([stretch(0, 0), stretch(2, 2)]);
  assert.equal(Buffer.concat(gap).toString(), '{"n":"a"},{"n":"c\\u2028"}');
  const other = Buffer.from(views);
  const two = spliceViews([stretch(0, 0), stretch(1, 1, other)]);
  assert.equal(Buffer.concat(two).toString(), '{"n":"a"},{"n":"b"}');
  assert.deepEqual(spliceViews([]), []);
});

test('a stretch parsed is its values', () => {
  assert.deepEqual(parseViews(stretch(1, 2)), [{ n: 'b' }, { n: 'c\u2028' }]);
});
