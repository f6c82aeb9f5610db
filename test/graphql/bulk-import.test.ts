import { createTestApp, createUser, type TestApp, type TestUser } from '../factories';
import { createSource } from '../factories/content';
import { dataOf, errorCode, gql, type Json } from './gql';

let t: TestApp;
let owner: TestUser;

beforeAll(async () => {
  t = await createTestApp();
  owner = await createUser(t);
});
afterAll(async () => t.close());

const START = `mutation($content: String!, $format: String, $updateIfExists: Boolean) {
  startBulkImport(content: $content, format: $format, updateIfExists: $updateIfExists) { task { id kind state } }
}`;
const STATUS = `query($taskId: ID!) { bulkImport(taskId: $taskId) { task { id state error progress { done total } } report } }`;

async function finished(auth: string, taskId: string): Promise<Json> {
  for (let i = 0; i < 300; i += 1) {
    const status = dataOf(await gql(t, auth, STATUS, { taskId })).bulkImport;
    if (['SUCCESS', 'FAILURE'].includes(status.task.state as string)) return status;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the import did not finish');
}

describe('GraphQL bulk import', () => {
  test('startBulkImport queues an import; bulkImport reads its state and report', async () => {
    const source = await createSource(t, {}, { owner });
    const line = {
      type: 'Concept',
      owner: source.org,
      source: 'S',
      id: 'A',
      concept_class: 'Misc',
      names: [{ name: 'Alpha', locale: 'en' }],
    };
    const content = [JSON.stringify(line), '{bad'].join('\n');
    const started = dataOf(await gql(t, owner.auth, START, { content })).startBulkImport.task;
    expect(started).toMatchObject({ kind: 'BULK_IMPORT', state: 'PENDING' });
    const done = await finished(owner.auth, started.id as string);
    expect(done.task).toMatchObject({ state: 'SUCCESS', progress: { done: 2, total: 2 } });
    expect(done.report).toMatchObject({ total: 2, created: 1, invalid: 1 });
    expect(done.report.failures).toEqual([
      { line: 2, type: null, id: null, outcome: 'invalid', reason: 'The line is not valid JSON.' },
    ]);
    const again = dataOf(
      await gql(t, owner.auth, START, { content: JSON.stringify(line), updateIfExists: false }),
    );
    expect(
      (await finished(owner.auth, again.startBulkImport.task.id as string)).report,
    ).toMatchObject({
      exists: 1,
    });
  });

  test('CSV content with typed attributes', async () => {
    const source = await createSource(t, {}, { owner });
    const content = `resource_type,id,owner,source,concept_class,name,attr:n:int\nConcept,A,${source.org},S,Misc,Alpha,4\n`;
    const started = dataOf(await gql(t, owner.auth, START, { content, format: 'csv' }))
      .startBulkImport.task;
    expect((await finished(owner.auth, started.id as string)).report).toMatchObject({ created: 1 });
  });

  test('anonymous callers are refused; another user cannot read or cancel the import', async () => {
    expect(errorCode(await gql(t, undefined, START, { content: '{}' }))).toBe('UNAUTHENTICATED');
    const started = dataOf(await gql(t, owner.auth, START, { content: '{"type":"Nothing"}' }))
      .startBulkImport.task;
    const stranger = await createUser(t);
    expect(errorCode(await gql(t, stranger.auth, STATUS, { taskId: started.id }))).toBe(
      'NOT_FOUND',
    );
    const cancel = `mutation($taskId: ID!) { cancelBulkImport(taskId: $taskId) { task { id } } }`;
    expect(errorCode(await gql(t, stranger.auth, cancel, { taskId: started.id }))).toBe(
      'NOT_FOUND',
    );
    expect(errorCode(await gql(t, owner.auth, START, { content: '{}', format: 'xml' }))).toBe(
      'INVALID',
    );
  });

  const concept = (org: string, id: string): string =>
    JSON.stringify({
      type: 'Concept',
      owner: org,
      source: 'S',
      id,
      concept_class: 'Misc',
      names: [{ name: `Name ${id}`, locale: 'en' }],
    });

  test('the same content again reports every line unchanged and writes nothing', async () => {
    const source = await createSource(t, {}, { owner });
    const content = Array.from({ length: 1500 }, (_, i) => concept(source.org, `R${i}`)).join('\n');
    const first = dataOf(await gql(t, owner.auth, START, { content })).startBulkImport.task;
    expect((await finished(owner.auth, first.id as string)).report).toMatchObject({
      created: 1500,
      failed: 0,
    });
    const versions = async (): Promise<number> =>
      (
        await t.dataSource.query<Array<{ n: number }>>(
          `SELECT count(*)::int AS n FROM concept_versions v JOIN repositories r ON r.id = v.repository_id
           JOIN organizations o ON o.id = r.owner_org_id WHERE o.mnemonic = $1`,
          [source.org],
        )
      )[0].n;
    const before = await versions();
    const second = dataOf(await gql(t, owner.auth, START, { content })).startBulkImport.task;
    expect((await finished(owner.auth, second.id as string)).report).toMatchObject({
      total: 1500,
      unchanged: 1500,
      created: 0,
      updated: 0,
    });
    expect(await versions()).toBe(before);
  });

  test('cancelBulkImport stops an import between batches (FAILURE); what committed stays', async () => {
    const source = await createSource(t, {}, { owner });
    const content = Array.from({ length: 5000 }, (_, i) => concept(source.org, `K${i}`)).join('\n');
    const started = dataOf(await gql(t, owner.auth, START, { content })).startBulkImport.task;
    const cancel = `mutation($taskId: ID!) { cancelBulkImport(taskId: $taskId) { task { id } } }`;
    expect(
      dataOf(await gql(t, owner.auth, cancel, { taskId: started.id })).cancelBulkImport.task,
    ).toEqual({
      id: started.id,
    });
    const done = await finished(owner.auth, started.id as string);
    expect(done.task.state).toBe('FAILURE');
    expect(done.task.error).toMatch(new RegExp(`Cancelled by ${owner.username}`));
    expect(done.report.processed).toBeLessThan(5000);
    expect(done.report.cancelled_by).toBe(owner.username);
    const [{ n }] = await t.dataSource.query<Array<{ n: number }>>(
      `SELECT count(*)::int AS n FROM concepts c JOIN repositories r ON r.id = c.repository_id
       JOIN organizations o ON o.id = r.owner_org_id WHERE o.mnemonic = $1`,
      [source.org],
    );
    expect(n).toBe(done.report.created);
    expect(n % 1000).toBe(0); // whole batches only
    expect(errorCode(await gql(t, owner.auth, cancel, { taskId: started.id }))).toBe('INVALID');
  });

  test('a named queue takes one import of its user at a time (CONFLICT Already Queued)', async () => {
    const source = await createSource(t, {}, { owner });
    const queued = `mutation($content: String!, $queue: String) {
      startBulkImport(content: $content, queue: $queue) { task { id } }
    }`;
    const content = Array.from({ length: 3000 }, (_, i) => concept(source.org, `Q${i}`)).join('\n');
    const answers = await Promise.all(
      [1, 2, 3].map(() => gql(t, owner.auth, queued, { content, queue: 'gq' })),
    );
    const accepted = answers.filter((a) => !a.errors);
    expect(accepted).toHaveLength(1);
    for (const refused of answers.filter((a) => a.errors)) {
      expect(errorCode(refused)).toBe('CONFLICT');
      expect(refused.errors![0].message).toBe('Already Queued');
    }
    const done = await finished(owner.auth, dataOf(accepted[0]).startBulkImport.task.id as string);
    expect(done.report).toMatchObject({ created: 3000 });
    expect(errorCode(await gql(t, owner.auth, queued, { content, queue: 'bad queue!' }))).toBe(
      'INVALID',
    );
  });
});
