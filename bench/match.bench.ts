import 'reflect-metadata';
import { performance } from 'node:perf_hooks';
import { Client, Pool } from 'pg';
import { foldedWords } from '../src/repositories/list';
import { generateDictionary, Random, type GeneratedConcept } from './generate';
import {
  ADMIN_PASSWORD,
  ADMIN_USERNAME,
  cpuMeter,
  envInt,
  login,
  openInProcess,
  percentile,
  print,
  printColumns,
  startBenchServer,
  type BenchServer,
  type CpuUse,
  type Statement,
} from './harness';

/**
 * `$match` evaluation (issue 14, part 5): rows derived from known concepts of the CIEL-scale
 * dictionary as people type them (one typo, swapped letters, reordered words, a synonym instead
 * of the preferred name, missing accents, an abbreviation) plus rows with no true match, sent as
 * a client does (batches of 100, two at a time). Prints recall@1 and @5, how often a wrong top
 * result is graded very_high or high, rows/s, the latency per batch, the CPU each party spends,
 * and the raw database running the very statements the service sent. Then the same rows through
 * the bridge (`ocl-ciel-bridge`): matched against CIEL, answered with the ICD-10 concepts the
 * matched CIEL concepts map to; a row is right when its top result is one of the ICD-10 concepts
 * its own CIEL concept maps to.
 */
export const title = '$match: a spreadsheet of typed terms matched to a CIEL-scale dictionary';

const ORG = 'CIEL-BENCH';
const SOURCE = 'CIEL';
/** The bridge evaluation: CIEL as the bridging source, to ICD-10 (spec operations §4.5). */
const BRIDGE_TARGET = 'ICD-10-WHO';
const BRIDGE_FILTER = { target_repo: `/orgs/${ORG}/sources/${BRIDGE_TARGET}/HEAD/` };
const BRIDGE_ENV = { MATCH_BRIDGE_SOURCE: `/orgs/${ORG}/sources/${SOURCE}/` };
const BATCH = 100;
const PARALLEL = 2;

const KINDS = ['typo', 'swap', 'reorder', 'synonym', 'accents', 'abbreviation'] as const;
type Kind = (typeof KINDS)[number] | 'none';

interface EvalRow {
  name: string;
  kind: Kind;
  /** The concept the row was derived from; null for rows with no true match. */
  expected: string | null;
}

interface Result {
  id: string;
  search_meta: { match_type: string; algorithm: string };
}

export async function run(): Promise<void> {
  const known = envInt('BENCH_MATCH_ROWS', 1_000, 6);
  const unknown = envInt('BENCH_MATCH_NO_MATCH_ROWS', 200, 0);
  const server = await startBenchServer(BRIDGE_ENV);
  try {
    print(`database:   ${server.database} (PostgreSQL ${server.postgresVersion})`);
    const concepts = await dictionary(server);
    const rows = evaluationRows(concepts, known, unknown);
    print(
      `rows:       ${known} derived from concepts with a unique display name ` +
        `(${KINDS.join(', ')}: ${Math.floor(known / KINDS.length)} or so each) and ${unknown} ` +
        `with no true match, shuffled; batches of ${BATCH}, ${PARALLEL} at a time`,
    );
    print('');
    const token = await login(server, ADMIN_USERNAME, ADMIN_PASSWORD);
    const one = await send(server, token, rows, 1);
    const five = await send(server, token, rows, 5);
    printQuality(rows, one.results, five.results);
    print('');
    const raw = await rawDatabase(server, rows);
    printSpeed('$match over HTTP', rows.length, one, raw);
    print('');
    print(
      `bridge:     the same rows matched against ${SOURCE} with filter.target_repo ` +
        `${BRIDGE_FILTER.target_repo} (ocl-ciel-bridge)`,
    );
    const reachable = await bridgeTargets(server, rows);
    const bridgeOne = await send(server, token, rows, 1, BRIDGE_FILTER);
    const bridgeFive = await send(server, token, rows, 5, BRIDGE_FILTER);
    printBridgeQuality(rows, reachable, bridgeOne.results, bridgeFive.results);
    print('');
    const bridgeRaw = await rawDatabase(server, rows, BRIDGE_FILTER);
    printSpeed('bridge $match over HTTP', rows.length, bridgeOne, bridgeRaw);
  } finally {
    await server.stop();
  }
}

/** The generated dictionary's main source; reused when BENCH_DATABASE_URL already holds it. */
async function dictionary(server: BenchServer): Promise<GeneratedConcept[]> {
  const client = new Client({ connectionString: server.databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM organizations WHERE mnemonic = $1`,
      [ORG],
    );
    if (rows[0].n === 0) {
      return (await generateDictionary(server.databaseUrl, { org: ORG, log: print })).concepts;
    }
    print(`dataset:    ${ORG} found in the database, reused`);
    const found = await client.query<{
      id: string;
      display_name: string;
      retired: boolean;
      concept_class: string;
      datatype: string;
      names: Array<{ name: string; locale: string; locale_preferred: boolean; name_type: string }>;
    }>(
      `SELECT cv.mnemonic AS id, cv.display_name, cv.retired, cv.concept_class, cv.datatype, cv.names
       FROM concept_versions cv JOIN repositories r ON r.id = cv.repository_id
       JOIN organizations o ON o.id = r.owner_org_id
       WHERE o.mnemonic = $1 AND r.mnemonic = $2 AND cv.valid_to_seq IS NULL`,
      [ORG, SOURCE],
    );
    return found.rows.map((c) => ({
      id: c.id,
      conceptClass: c.concept_class,
      datatype: c.datatype,
      retired: c.retired,
      displayName: c.display_name,
      names: c.names.map((n) => ({
        name: n.name,
        locale: n.locale as GeneratedConcept['names'][number]['locale'],
        preferred: n.locale_preferred,
        nameType: n.name_type,
      })),
      mappings: 0,
    }));
  } finally {
    await client.end();
  }
}

// ---------------------------------------------------------------------------------------------
// The rows

const fold = (text: string): string => foldedWords(text).join(' ');

/**
 * Rows typed from concepts whose display name no other active concept shares (a name two
 * concepts share cannot tell them apart), each kind in turn, plus rows of plausible clinical
 * terms the dictionary does not hold; shuffled, deterministic.
 */
export function evaluationRows(
  concepts: GeneratedConcept[],
  known: number,
  unknown: number,
): EvalRow[] {
  const random = new Random(14);
  const active = concepts.filter((c) => !c.retired);
  const byName = new Map<string, number>();
  for (const c of active)
    for (const n of c.names) byName.set(fold(n.name), (byName.get(fold(n.name)) ?? 0) + 1);
  const unique = active.filter((c) => byName.get(fold(c.displayName)) === 1);
  const rows: EvalRow[] = [];
  const used = new Set<string>();
  while (rows.length < known) {
    const concept = unique[Math.floor(random.next() * unique.length)];
    if (used.has(concept.id)) continue;
    used.add(concept.id);
    const kind = KINDS[rows.length % KINDS.length];
    rows.push({ name: typed(random, concept, kind, byName), kind, expected: concept.id });
  }
  for (let i = 0; i < unknown; i += 1)
    rows.push({ name: unknownTerm(random), kind: 'none', expected: null });
  for (let i = rows.length - 1; i > 0; i -= 1) {
    const j = Math.floor(random.next() * (i + 1));
    [rows[i], rows[j]] = [rows[j], rows[i]];
  }
  return rows;
}

function typed(
  random: Random,
  concept: GeneratedConcept,
  kind: Kind,
  byName: Map<string, number>,
): string {
  const name = concept.displayName;
  const words = name.split(' ');
  const longest = (): number =>
    words.reduce((best, w, i) => (w.length > words[best].length ? i : best), 0);
  const edit = (f: (word: string) => string): string => {
    const candidates = words.map((w, i) => [w, i] as const).filter(([w]) => w.length >= 4);
    const [, at] = candidates.length ? random.pick(candidates) : [words[0], 0];
    return words.map((w, i) => (i === at ? f(w) : w)).join(' ');
  };
  switch (kind) {
    case 'typo':
      return edit((w) => {
        const at = random.int(1, w.length - 1);
        const letter = 'abcdefghijklmnopqrstuvwxyz'[random.int(0, 25)];
        const how = random.int(0, 2);
        if (how === 0) return w.slice(0, at) + w.slice(at + 1); // a letter left out
        if (how === 1) return w.slice(0, at) + letter + w.slice(at); // one too many
        return w.slice(0, at) + letter + w.slice(at + 1); // a wrong one
      });
    case 'swap':
      return edit((w) => {
        const at = random.int(0, w.length - 2);
        return w.slice(0, at) + w[at + 1] + w[at] + w.slice(at + 2);
      });
    case 'reorder':
      if (words.length < 2) return typed(random, concept, 'typo', byName);
      return [...words.slice(1), words[0]].join(' ');
    case 'synonym': {
      const others = concept.names.filter(
        (n) => n.name !== name && n.nameType !== 'SHORT' && byName.get(fold(n.name)) === 1,
      );
      return others.length ? random.pick(others).name : typed(random, concept, 'typo', byName);
    }
    case 'accents': {
      const accented = concept.names.filter((n) => fold(n.name) !== n.name.toLowerCase());
      return accented.length ? fold(random.pick(accented).name) : name.toLowerCase();
    }
    case 'abbreviation': {
      const short = concept.names.find((n) => n.nameType === 'SHORT');
      if (short && byName.get(fold(short.name)) === 1) return short.name;
      const at = longest();
      if (words[at].length < 7) return typed(random, concept, 'typo', byName);
      return words.map((w, i) => (i === at ? `${w.slice(0, 4)}.` : w)).join(' ');
    }
    case 'none':
      return name;
  }
}

const UNKNOWN_TERMS = [
  'Dengue fever', 'Snake bite', 'Sickle cell trait', 'Tetanus toxoid booster', 'Scabies',
  'Head lice infestation', 'Rabies exposure', 'Cleft lip', 'Malaria rapid diagnostic test',
  'HIV viral load', 'CD4 count', 'Tuberculosis sputum smear', 'Measles immunization',
  'Vitamin A supplementation', 'Birth weight', 'Gestational age', 'Mid-upper arm circumference',
  'Oral rehydration salts', 'Zinc sulfate', 'Insecticide treated net use', 'Yellow fever vaccine',
  'Cholera', 'Typhoid fever', 'Ebola virus disease', 'Leprosy', 'Trachoma', 'Schistosomiasis',
  'Onchocerciasis', 'Hookworm', 'Kwashiorkor',
]; // prettier-ignore
const UNKNOWN_SITES = ['', '', ' of left knee', ' in pregnancy', ' of child', ', suspected'];

function unknownTerm(random: Random): string {
  return random.pick(UNKNOWN_TERMS) + random.pick(UNKNOWN_SITES);
}

// ---------------------------------------------------------------------------------------------
// Sending and measuring

interface Sent {
  results: Result[][];
  seconds: number;
  batchMs: number[];
  cpu: CpuUse;
}

/** Every row, in batches of 100, two batches at a time, as the OCL client sends them. */
async function send(
  server: BenchServer,
  token: string,
  rows: EvalRow[],
  limit: number,
  filter?: Record<string, string>,
): Promise<Sent> {
  const results: Result[][] = new Array<Result[]>(rows.length);
  const batchMs: number[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < rows.length) {
      const start = next;
      next += BATCH;
      const batch = rows.slice(start, start + BATCH);
      const started = performance.now();
      const res = await fetch(`${server.url}/concepts/$match/?limit=${limit}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Token ${token}` },
        body: JSON.stringify({
          target_repo_url: `/orgs/${ORG}/sources/${SOURCE}/HEAD/`,
          rows: batch.map((r) => ({ name: r.name })),
          filter,
        }),
      });
      if (res.status !== 200) throw new Error(`$match answered ${res.status}: ${await res.text()}`);
      const body = (await res.json()) as Array<{ results: Result[] }>;
      batchMs.push(performance.now() - started);
      body.forEach((row, i) => (results[start + i] = row.results));
    }
  };
  const meter = await cpuMeter();
  const started = performance.now();
  await Promise.all(Array.from({ length: PARALLEL }, worker));
  const seconds = (performance.now() - started) / 1000;
  return { results, seconds, batchMs, cpu: await meter() };
}

/** The statements the service sent for each batch, replayed on a pool of the same size. */
async function rawDatabase(
  server: BenchServer,
  rows: EvalRow[],
  filter?: Record<string, string>,
): Promise<{ seconds: number; batchMs: number[]; cpu: CpuUse }> {
  const inProcess = await openInProcess(server.databaseUrl, {
    matchBridgeSource: BRIDGE_ENV.MATCH_BRIDGE_SOURCE,
  });
  const statements: Statement[][] = [];
  try {
    for (let at = 0; at < rows.length; at += BATCH) {
      const sent = await inProcess.statementsOf(async (services, ctx) => {
        const admin = {
          kind: 'user',
          id: '1',
          username: ADMIN_USERNAME,
          isSuperuser: true,
        } as const;
        await services.matches.match(
          { ...ctx, actor: admin },
          { limit: 1 },
          {
            target_repo_url: `/orgs/${ORG}/sources/${SOURCE}/HEAD/`,
            rows: rows.slice(at, at + BATCH).map((r) => ({ name: r.name })),
            filter,
          },
        );
      });
      statements.push(sent.filter((s) => s.sql.includes('jsonb_to_recordset($1::jsonb)')));
    }
  } finally {
    await inProcess.close();
  }
  const pool = new Pool({ connectionString: server.databaseUrl, max: PARALLEL });
  const batchMs: number[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < statements.length) {
      const batch = statements[next];
      next += 1;
      const started = performance.now();
      for (const s of batch) await pool.query(s.sql, s.parameters);
      batchMs.push(performance.now() - started);
    }
  };
  try {
    const meter = await cpuMeter();
    const started = performance.now();
    await Promise.all(Array.from({ length: PARALLEL }, worker));
    const seconds = (performance.now() - started) / 1000;
    return { seconds, batchMs, cpu: await meter() };
  } finally {
    await pool.end();
  }
}

/**
 * For each row's own CIEL concept, the ICD-10 concepts its current mappings reach (current, not
 * retired, at HEAD): what a right bridge answer is one of. Rows whose concept reaches none have
 * no true bridge answer.
 */
async function bridgeTargets(
  server: BenchServer,
  rows: EvalRow[],
): Promise<Map<string, Set<string>>> {
  const client = new Client({ connectionString: server.databaseUrl });
  await client.connect();
  try {
    const { rows: found } = await client.query<{ id: string; codes: string[] }>(
      `SELECT c.mnemonic AS id, array_agg(DISTINCT tc.mnemonic) AS codes
       FROM organizations o
       JOIN repositories b ON b.owner_org_id = o.id AND b.mnemonic = $2
       JOIN repositories t ON t.owner_org_id = o.id AND t.mnemonic = $3
       JOIN concepts c ON c.repository_id = b.id AND c.mnemonic = ANY($4::text[])
       JOIN mapping_versions mv ON mv.from_concept_id = c.id AND mv.repository_id = b.id
         AND mv.valid_to_seq IS NULL AND NOT mv.retired
         AND (mv.to_repository_id = t.id OR mv.to_source_url = '/orgs/' || o.mnemonic || '/sources/' || t.mnemonic || '/')
       JOIN concepts tc ON tc.repository_id = t.id AND tc.mnemonic = mv.to_concept_code
       JOIN concept_versions tv ON tv.concept_id = tc.id AND tv.valid_to_seq IS NULL AND NOT tv.retired
       WHERE o.mnemonic = $1
       GROUP BY c.mnemonic`,
      [ORG, SOURCE, BRIDGE_TARGET, rows.flatMap((r) => (r.expected ? [r.expected] : []))],
    );
    return new Map(found.map((f) => [f.id, new Set(f.codes)]));
  } finally {
    await client.end();
  }
}

// ---------------------------------------------------------------------------------------------
// Printing

function printQuality(rows: EvalRow[], one: Result[][], five: Result[][]): void {
  printRecall('kind', rows, one, five, (r) => (r.expected ? new Set([r.expected]) : undefined));
  // Graded with limit=5 (with limit=1 every result is very_high by the spec's rule).
  const wrongTop = rows
    .map((r, i) => ({ r, top: five[i][0] }))
    .filter(({ r, top }) => top !== undefined && top.id !== r.expected);
  const confident = wrongTop.filter(({ top }) =>
    ['very_high', 'high'].includes(top.search_meta.match_type),
  );
  const noMatch = rows.filter((r) => r.expected === null).length;
  const answeredNoMatch = rows.filter((r, i) => r.expected === null && five[i].length > 0).length;
  print('');
  print(
    `wrong top results (limit=5): ${wrongTop.length}; graded very_high or high: ` +
      `${confident.length} (${share(confident.length, wrongTop.length)}); rows with no true ` +
      `match answered with a result: ${answeredNoMatch} of ${noMatch}`,
  );
}

const share = (n: number, of: number): string => (of === 0 ? '–' : (n / of).toFixed(3));

/** Recall@1 and @5 per kind of row, over the rows that have right answers (`rights`). */
function printRecall(
  heading: string,
  rows: EvalRow[],
  one: Result[][],
  five: Result[][],
  rights: (row: EvalRow) => Set<string> | undefined,
): void {
  const scored = rows.map((r, i) => ({ r, i })).filter(({ r }) => rights(r) !== undefined);
  const at1 = ({ r, i }: { r: EvalRow; i: number }): boolean =>
    one[i][0] !== undefined && rights(r)!.has(one[i][0].id);
  const at5 = ({ r, i }: { r: EvalRow; i: number }): boolean =>
    five[i].some((x) => rights(r)!.has(x.id));
  const table = [...KINDS, 'all' as const].map((kind) => {
    const of = scored.filter(({ r }) => kind === 'all' || r.kind === kind);
    return [
      kind,
      String(of.length),
      share(of.filter(at1).length, of.length),
      share(of.filter(at5).length, of.length),
    ];
  });
  printColumns([heading, 'rows', 'recall@1', 'recall@5'], table);
}

function printBridgeQuality(
  rows: EvalRow[],
  reachable: Map<string, Set<string>>,
  one: Result[][],
  five: Result[][],
): void {
  const rights = (r: EvalRow): Set<string> | undefined =>
    r.expected ? reachable.get(r.expected) : undefined;
  printRecall('kind (rows reaching ICD-10)', rows, one, five, rights);
  const without = rows.filter((r) => rights(r) === undefined);
  const answered = rows.filter((r, i) => rights(r) === undefined && one[i].length > 0).length;
  const algorithms = new Set(one.flat().map((x) => x.search_meta.algorithm));
  print('');
  print(
    `rows whose concept reaches no ICD-10 concept (or with no true match): ${without.length}, ` +
      `answered with a result: ${answered}; algorithm named: ${[...algorithms].join(', ')}`,
  );
}

function printSpeed(
  label: string,
  rowCount: number,
  http: { seconds: number; batchMs: number[]; cpu: CpuUse },
  raw: { seconds: number; batchMs: number[]; cpu: CpuUse },
): void {
  const line = (label: string, run: typeof http): string[] => [
    label,
    (rowCount / run.seconds).toFixed(0),
    percentile(run.batchMs, 0.5).toFixed(0),
    percentile(run.batchMs, 0.95).toFixed(0),
    ((run.cpu.client * 1000) / rowCount).toFixed(2),
    run.cpu.server === null ? '–' : ((run.cpu.server * 1000) / rowCount).toFixed(2),
    run.cpu.postgres === null ? '–' : ((run.cpu.postgres * 1000) / rowCount).toFixed(2),
  ];
  printColumns(
    [
      'run (limit=1)',
      'rows/s',
      'p50 ms/batch',
      'p95 ms/batch',
      'client CPU ms/row',
      'server CPU ms/row',
      'postgres CPU ms/row',
    ],
    [line(label, http), line('raw database, same statements', raw)],
  );
  print(
    `ratio: the service does ${(rowCount / http.seconds / (rowCount / raw.seconds)).toFixed(2)}× ` +
      `the raw database's rows/s (${PARALLEL} batches of ${BATCH} at a time, on a loaded 2-core machine)`,
  );
}
