import fs from 'node:fs';
import path from 'node:path';
import { buildGraphqlSchema, printSdl } from '../../src/graphql/schema';

test('the committed schema/schema.graphql matches the resolvers (run `npm run schema:emit`)', async () => {
  const committed = fs.readFileSync(
    path.join(__dirname, '..', '..', 'schema', 'schema.graphql'),
    'utf8',
  );
  expect(printSdl(await buildGraphqlSchema())).toBe(committed);
});
