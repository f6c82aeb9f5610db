import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { print } from './harness';

/** A benchmark file (`*.bench.ts`) exports its title and `run`, which prints its figures. */
interface BenchmarkModule {
  title: string;
  run(): Promise<void>;
}

/**
 * Runs every benchmark in this folder in file-name order, or only those whose file name contains
 * one of the arguments (`npm run bench -- org-get`).
 */
async function main(): Promise<void> {
  const only = process.argv.slice(2);
  const files = fs
    .readdirSync(__dirname)
    .filter((file) => file.endsWith('.bench.js'))
    .filter((file) => only.length === 0 || only.some((name) => file.includes(name)))
    .sort();
  if (files.length === 0) throw new Error(`No benchmark matches ${only.join(', ')}.`);
  for (const file of files) {
    const benchmark = (await import(
      pathToFileURL(path.join(__dirname, file)).href
    )) as BenchmarkModule;
    print(`== ${benchmark.title} (${file.replace(/\.js$/, '.ts')})`);
    await benchmark.run();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(
      `Benchmark failed: ${error instanceof Error ? error.stack : String(error)}\n`,
    );
    process.exit(1);
  },
);
