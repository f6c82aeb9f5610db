import { createTestApp, tasksSettled, type TestApp } from '../factories';
import { createConcept, createSource, createVersion } from '../factories/content';
import { dataOf, gql } from './gql';

/**
 * The naming rule of the schema (docs/api-graphql.md, issue 28): a timestamp's name ends in `On`,
 * as OCL's `created_on`. A field renamed to follow it keeps its old name for one release,
 * `@deprecated`, answering the same.
 */
let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
}, 60_000);
afterAll(async () => t.close());

interface IntrospectedField {
  name: string;
  isDeprecated: boolean;
  deprecationReason: string | null;
  type: { name: string | null; ofType: { name: string | null } | null };
}

describe('GraphQL naming', () => {
  it('every timestamp field ends in On, or is a deprecated old name with its new one beside it', async () => {
    const res = await gql(
      t,
      undefined,
      `{ __schema { types { name kind fields(includeDeprecated: true) {
         name isDeprecated deprecationReason type { name ofType { name } } } } } }`,
    );
    const types = dataOf(res).__schema.types as Array<{
      name: string;
      kind: string;
      fields: IntrospectedField[] | null;
    }>;
    const offending: string[] = [];
    let renamed = 0;
    for (const type of types) {
      if (type.kind !== 'OBJECT' || type.name.startsWith('__')) continue;
      const names = new Set((type.fields ?? []).map((f) => f.name));
      for (const field of type.fields ?? []) {
        const typeName = field.type.name ?? field.type.ofType?.name;
        if (typeName !== 'DateTimeISO' || field.name.endsWith('On')) continue;
        const newName = /`(\w+)`/.exec(field.deprecationReason ?? '')?.[1];
        if (field.isDeprecated && newName?.endsWith('On') && names.has(newName)) renamed += 1;
        else offending.push(`${type.name}.${field.name}`);
      }
    }
    expect(offending).toEqual([]);
    expect(renamed).toBeGreaterThan(0);
  });

  it('a renamed field and its old name answer the same', async () => {
    const source = await createSource(t);
    await createConcept(t, source.url, source.owner, { id: 'A' });
    await createVersion(t, source.url, source.owner, 'v1'); // its export is a task
    await tasksSettled(t, source.owner.username);
    const res = await gql(
      t,
      source.owner.auth,
      `{ tasks(limit: 5) { items { createdAt createdOn startedAt startedOn finishedAt finishedOn } } }`,
    );
    const tasks = dataOf(res).tasks.items as Array<Record<string, string | null>>;
    expect(tasks.length).toBeGreaterThan(0);
    expect(tasks[0].finishedOn).not.toBeNull();
    for (const task of tasks) {
      expect(task.createdOn).toBe(task.createdAt);
      expect(task.startedOn).toBe(task.startedAt);
      expect(task.finishedOn).toBe(task.finishedAt);
    }
    const events = await gql(
      t,
      source.owner.auth,
      `{ events(username: "${source.owner.username}", limit: 5) { items { createdAt createdOn } } }`,
    );
    const items = dataOf(events).events.items as Array<Record<string, string>>;
    expect(items.length).toBeGreaterThan(0);
    for (const event of items) expect(event.createdOn).toBe(event.createdAt);
  });
});
