/** The JSON Schemas of docs/schemas/, loaded once, for the tests that hold real outputs to them. */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv2020 from 'ajv/dist/2020.js';
import { ROOT } from './paths.js';

export const SCHEMA_DIR = join(ROOT, 'docs', 'schemas');

type Validate = ((value: unknown) => boolean) & { errors?: unknown[] | null };
const AjvClass = ((Ajv2020 as unknown as { default?: unknown }).default ?? Ajv2020) as new (
  o: Record<string, unknown>,
) => {
  addSchema(schema: unknown): unknown;
  getSchema(id: string): Validate | undefined;
  errorsText(errors: unknown, o?: Record<string, unknown>): string;
};
const ajv = new AjvClass({ strict: true, strictTypes: false, strictRequired: false, allErrors: true });
export const schemaFiles = readdirSync(SCHEMA_DIR)
  .filter((f) => f.endsWith('.schema.json'))
  .sort();
for (const f of schemaFiles) ajv.addSchema(JSON.parse(readFileSync(join(SCHEMA_DIR, f), 'utf8')));

/** Asserts that `value` is valid against docs/schemas/<schema>; the message names every violation. */
export function check(schema: string, value: unknown, what = schema): void {
  const validate = ajv.getSchema(schema);
  assert.ok(validate, `no schema ${schema}`);
  if (!validate(value)) {
    assert.fail(`${what} does not match ${schema}:\n${ajv.errorsText(validate.errors, { separator: '\n' })}\n${JSON.stringify(value).slice(0, 3000)}`);
  }
}

export function valid(schema: string, value: unknown): boolean {
  return ajv.getSchema(schema)!(value);
}
