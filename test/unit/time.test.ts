import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isoOf, nowIso } from '../../lib/base/time.js';

test('isoOf formats as Date#toISOString does, and gives null for what is not a time', () => {
  for (const ms of [0, 1, -1, 999, Date.now(), 951782400000, 253402300799999, -62167219200000, 253402300800000, -62167219200001, 8.64e15, -8.64e15, 1.5]) {
    assert.equal(isoOf(ms), new Date(ms).toISOString(), String(ms));
  }
  for (const v of [NaN, Infinity, 8.64e15 + 1, '2024-01-01', null, undefined]) assert.equal(isoOf(v), null, String(v));
  assert.match(nowIso(), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
});
