/**
 * Rewrites known-failures.json from a run: every failing test with its first difference.
 *
 *   npm run test:fhir-tx:update
 *
 * It runs under jest (`jest --testMatch '**\/test/fhir-tx/update-known-failures.ts'`), which
 * brings what the app needs — the test database of jest's global setup and the swc transform
 * (the project has neither ts-node nor tsx). Not named *.test.ts, so `npm test` leaves it out.
 */
import fs from 'node:fs';
import { createTestApp, type TestApp } from '../factories';
import { formatSummary, KNOWN_FAILURES_FILE, knownFailuresOf, runTxTests } from './runner';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});

afterAll(async () => {
  await t.close();
});

test('write known-failures.json', async () => {
  const { results, fhirVersion } = await runTxTests({ app: t.app });
  const before = fs.existsSync(KNOWN_FAILURES_FILE)
    ? Object.keys(JSON.parse(fs.readFileSync(KNOWN_FAILURES_FILE, 'utf8')) as object).length
    : 0;
  const failures = knownFailuresOf(results);
  fs.writeFileSync(KNOWN_FAILURES_FILE, `${JSON.stringify(failures, null, 2)}\n`);
  console.log(
    `HL7 tx ecosystem tests (${fhirVersion} client)\n${formatSummary(results)}\n\n` +
      `known-failures.json: ${Object.keys(failures).length} failures (was ${before})`,
  );
}, 120_000);
