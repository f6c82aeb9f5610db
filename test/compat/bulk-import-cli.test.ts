import fs from 'node:fs';
import type { Server } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { runImport } from '../../scripts/import';
import { createTestApp, createUser, type TestApp, type TestUser } from '../factories';
import { createSource } from '../factories/content';

let t: TestApp;
let owner: TestUser;
let server: Server;
let url: string;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'import-cli-'));

beforeAll(async () => {
  t = await createTestApp();
  owner = await createUser(t);
  server = t.app.listen(0);
  await new Promise((resolve) => server.once('listening', resolve));
  const address = server.address();
  url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await t.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

function output(): { stream: PassThrough; text: () => string } {
  const stream = new PassThrough();
  const chunks: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  // Without the terminal colours the tables carry.
  // eslint-disable-next-line no-control-regex
  const plain = (text: string) => text.replace(/\x1b\[[0-9;]*m/g, '');
  return { stream, text: () => plain(Buffer.concat(chunks).toString('utf8')) };
}

describe('npm run import (scripts/import.ts)', () => {
  test('uploads a file, follows the task and prints the summary table and failed lines', async () => {
    const source = await createSource(t, {}, { owner });
    const file = path.join(dir, 'dictionary.json');
    const line = (id: string) =>
      JSON.stringify({
        type: 'Concept',
        owner: source.org,
        source: 'S',
        id,
        concept_class: 'Misc',
        names: [{ name: `Name ${id}`, locale: 'en' }],
      });
    fs.writeFileSync(file, [line('A'), line('B'), '{broken'].join('\n'));
    const token = owner.auth.replace(/^Token /, '');
    const out = output();
    const status = await runImport(
      { file, url, token, updateIfExists: true, pollMs: 50 },
      out.stream,
    );
    expect(status.state).toBe('SUCCESS');
    expect(status.report).toMatchObject({ created: 2, invalid: 1 });
    const text = out.text();
    expect(text).toMatch(/queued as task/);
    expect(text).toMatch(/│ state\s+│ SUCCESS\s+│/);
    expect(text).toMatch(/│ created\s+│ 2\s+│/);
    expect(text).toMatch(/│ invalid\s+│ 1\s+│/);
    expect(text).toMatch(/3\/3 lines/);
    expect(text).toMatch(/not valid JSON/);

    const again = output();
    const second = await runImport(
      { file, url, token, updateIfExists: true, pollMs: 50 },
      again.stream,
    );
    expect(second.report).toMatchObject({ created: 0, unchanged: 2 });
  });

  test('CSV files go as CSV; a refused upload is an error naming the status', async () => {
    const source = await createSource(t, {}, { owner });
    const file = path.join(dir, 'concepts.csv');
    fs.writeFileSync(
      file,
      `resource_type,id,owner,source,concept_class,name,attr:n:int\nConcept,A,${source.org},S,Misc,Alpha,1\n`,
    );
    const token = owner.auth.replace(/^Token /, '');
    const status = await runImport(
      { file, url, token, updateIfExists: true, pollMs: 50 },
      output().stream,
    );
    expect(status.report).toMatchObject({ created: 1 });
    await expect(
      runImport({ file, url, token: 'wrong', updateIfExists: true, pollMs: 50 }, output().stream),
    ).rejects.toThrow(/refused the import \(401\)/);
  });
});
