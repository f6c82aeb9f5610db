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
  startBulkImport(content: $content, format: $format, updateIfExists: $updateIfExists) { id kind state }
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
    const started = dataOf(await gql(t, owner.auth, START, { content })).startBulkImport;
    expect(started).toMatchObject({ kind: 'bulk-import', state: 'PENDING' });
    const done = await finished(owner.auth, started.id as string);
    expect(done.task).toMatchObject({ state: 'SUCCESS', progress: { done: 2, total: 2 } });
    expect(done.report).toMatchObject({ total: 2, created: 1, invalid: 1 });
    expect(done.report.failures).toEqual([
      { line: 2, type: null, id: null, outcome: 'invalid', reason: 'The line is not valid JSON.' },
    ]);
    const again = dataOf(
      await gql(t, owner.auth, START, { content: JSON.stringify(line), updateIfExists: false }),
    );
    expect((await finished(owner.auth, again.startBulkImport.id as string)).report).toMatchObject({
      exists: 1,
    });
  });

  test('CSV content with typed attributes', async () => {
    const source = await createSource(t, {}, { owner });
    const content = `resource_type,id,owner,source,concept_class,name,attr:n:int\nConcept,A,${source.org},S,Misc,Alpha,4\n`;
    const started = dataOf(
      await gql(t, owner.auth, START, { content, format: 'csv' }),
    ).startBulkImport;
    expect((await finished(owner.auth, started.id as string)).report).toMatchObject({ created: 1 });
  });

  test('anonymous callers are refused; another user cannot read or cancel the import', async () => {
    expect(errorCode(await gql(t, undefined, START, { content: '{}' }))).toBe('UNAUTHENTICATED');
    const started = dataOf(
      await gql(t, owner.auth, START, { content: '{"type":"Nothing"}' }),
    ).startBulkImport;
    const stranger = await createUser(t);
    expect(errorCode(await gql(t, stranger.auth, STATUS, { taskId: started.id }))).toBe(
      'NOT_FOUND',
    );
    const cancel = `mutation($taskId: ID!) { cancelBulkImport(taskId: $taskId) { id } }`;
    expect(errorCode(await gql(t, stranger.auth, cancel, { taskId: started.id }))).toBe(
      'NOT_FOUND',
    );
    expect(errorCode(await gql(t, owner.auth, START, { content: '{}', format: 'xml' }))).toBe(
      'INVALID',
    );
  });
});
