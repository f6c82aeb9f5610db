import 'reflect-metadata';
import fs from 'node:fs';
import path from 'node:path';
import { buildGraphqlSchema, printSdl } from '../src/graphql/schema';

/** Writes the committed contract `schema/schema.graphql`; a test fails when it is stale. */
async function emit(): Promise<void> {
  const file = path.resolve(__dirname, '..', '..', 'schema', 'schema.graphql');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, printSdl(await buildGraphqlSchema()));
  process.stdout.write(`wrote ${path.relative(process.cwd(), file)}\n`);
}

void emit();
