/**
 * HL7's terminology ecosystem tests (general mode and `metadata`) against the FHIR edge at /fhir,
 * judged by HL7's own comparison rules (see README.md). The tests that fail are listed, with a
 * reason, in known-failures.json: this test fails when another test fails, and when a listed one
 * passes (then the list must shrink). `npm run test:fhir-tx:update` rewrites the list.
 */
import fs from 'node:fs';
import { createTestApp, type TestApp } from '../factories';
import { formatSummary, KNOWN_FAILURES_FILE, runTxTests, type TestResult } from './runner';

/** General-mode suites plus `metadata`, less the three tx.fhir.org-only tests of simple-cases. */
const EXPECTED_TESTS = 597;

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});

afterAll(async () => {
  await t.close();
});

test('HL7 FHIR terminology ecosystem tests: the failures are exactly the known ones', async () => {
  const { results, fhirVersion } = await runTxTests({ app: t.app });
  console.log(
    `HL7 tx ecosystem tests (${fhirVersion} client, general mode)\n${formatSummary(results)}`,
  );
  expect(results).toHaveLength(EXPECTED_TESTS);

  const known = JSON.parse(fs.readFileSync(KNOWN_FAILURES_FILE, 'utf8')) as Record<string, string>;
  const failing = new Map<string, TestResult>(
    results.filter((r) => !r.passed).map((r) => [r.id, r]),
  );
  const newFailures = [...failing.values()]
    .filter((r) => !(r.id in known))
    .map((r) => `  ${r.id}: ${r.reason}`);
  const nowPassing = Object.keys(known)
    .filter((k) => !failing.has(k))
    .map((k) => `  ${k}`);
  const problems: string[] = [];
  if (newFailures.length > 0) {
    problems.push(`${newFailures.length} test(s) fail that known-failures.json does not list:`);
    problems.push(...newFailures);
  }
  if (nowPassing.length > 0) {
    problems.push(
      `${nowPassing.length} test(s) listed in known-failures.json now pass (or no longer exist): ` +
        'remove them from the list (npm run test:fhir-tx:update rewrites it):',
    );
    problems.push(...nowPassing);
  }
  expect(problems.join('\n')).toBe('');
}, 120_000);
