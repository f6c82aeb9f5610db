/**
 * HL7's FHIR terminology ecosystem tests (cases/, from HL7/fhir-tx-ecosystem-ig) run the way
 * HL7's own runner runs them — `TxTester` (org.hl7.fhir.validation/…/special/TxTester.java in
 * hapifhir/org.hl7.fhir.core) with the R4 or R5 terminology client it picks — but in process,
 * through supertest, against an express app. See README.md for the rules followed.
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { Express } from 'express';
import request from 'supertest';
import { Comparator, type Json, type JsonObject } from './compare';
import { convertResource, dropEmpty } from './convert';
import {
  scrubDomainResource,
  scrubOperationOutcome,
  scrubParameters,
  sortCapStmt,
  sortParameters,
  sortTermCaps,
  sortValueSet,
} from './scrub';

export const CASES_DIR = path.join(__dirname, 'cases');

export interface TestResult {
  /**
   * `suite/test`, the key of known-failures.json; a name used twice in a suite (the version
   * suite repeats two tests verbatim) gets `#2` on its second run.
   */
  id: string;
  suite: string;
  test: string;
  passed: boolean;
  /** Null when passed; else the first difference, or what went wrong. */
  reason: string | null;
  /** `$optional$: "warning:…"` items that were missing (they do not fail a test). */
  warnings: string[];
}

export interface RunOptions {
  /** The app (a server is started for the run) or a server already listening. */
  app: Express | http.Server;
  /** Where the FHIR endpoint is mounted. */
  base?: string;
  casesDir?: string;
  /** The runner's modes; TxTestsCommand's default is `general` alone. */
  modes?: string[];
  /** An externals file's content (e.g. messages-tx.fhir.org.json), keyed by response file. */
  externals?: Record<string, Record<string, string>> | null;
  /** Skip the $versions / metadata probe and use this client. */
  fhirVersion?: 'R4' | 'R5';
  /** Only these suites (all that the modes allow when unset). */
  suites?: string[];
  /** Per request. */
  timeoutMs?: number;
}

export interface RunOutcome {
  fhirVersion: 'R4' | 'R5';
  results: TestResult[];
}

interface Suite {
  name: string;
  mode?: string;
  disabled?: boolean;
  setup?: string[];
  tests: TestCase[];
}

interface TestCase {
  name: string;
  operation: string;
  mode?: string;
  disabled?: boolean;
  request?: string;
  response?: string;
  profile?: string;
  'Accept-Language'?: string;
  'http-code'?: string;
  header?: { name: string; value: string; mode?: string };
  [key: string]: unknown;
}

const isObject = (v: Json | undefined): v is JsonObject =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const objects = (v: Json | undefined): JsonObject[] =>
  Array.isArray(v) ? v.filter(isObject) : isObject(v) ? [v] : [];

/** An error answer as the Java client raises it (EFhirClientException), with its outcome if any. */
class ClientError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly outcome: JsonObject | null,
  ) {
    super(message);
  }
}

/** The names of FHIR primitive types, as they end `valueXxx` (PrimitiveType in Java). */
const PRIMITIVE_TYPES = new Set(
  [
    'Base64Binary',
    'Boolean',
    'Canonical',
    'Code',
    'Date',
    'DateTime',
    'Decimal',
    'Id',
    'Instant',
    'Integer',
    'Integer64',
    'Markdown',
    'Oid',
    'PositiveInt',
    'String',
    'Time',
    'UnsignedInt',
    'Uri',
    'Url',
    'Uuid',
  ].map((t) => `value${t}`),
);
/** UriType and its subclasses (ParametersParameterComponent.hasValueUriType()). */
const URI_TYPES = new Set(['valueUri', 'valueUrl', 'valueCanonical', 'valueOid', 'valueUuid']);

/** Apache URLEncodedUtils.format for one pair (Utilities.encodeUriParam): form encoding. */
function formEncode(s: string): string {
  let out = '';
  for (const byte of Buffer.from(s, 'utf8')) {
    const c = String.fromCharCode(byte);
    if (/[A-Za-z0-9\-_.*]/.test(c)) out += c;
    else if (c === ' ') out += '+';
    else out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

function readJson(file: string): JsonObject {
  let text = fs.readFileSync(file, 'utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  return JSON.parse(text) as JsonObject;
}

/** TxTester.httpCodeOk. */
function httpCodeOk(tcode: string, code: number): boolean {
  const classes: Record<string, number> = { '2xx': 2, '3xx': 3, '4xx': 4, '5xx': 5 };
  if (!(tcode in classes)) throw new Error(`unknown code string ${tcode}`);
  return Math.floor(code / 100) === classes[tcode];
}

interface RawResponse {
  status: number;
  contentType: string | undefined;
  text: string;
}

/** OperationOutcomeUtilities.outcomeFromTextError. */
function outcomeFromText(text: string): JsonObject {
  return {
    resourceType: 'OperationOutcome',
    issue: [{ severity: 'error', code: 'exception', details: { text } }],
  };
}

const typeName = (r: JsonObject | null): string =>
  r === null ? 'nothing' : typeof r.resourceType === 'string' ? r.resourceType : 'no resource';

const hasErrorIssue = (oo: JsonObject): boolean =>
  objects(oo.issue).some((i) => i.severity === 'error' || i.severity === 'fatal');

/**
 * FhirRequestBuilder.unmarshalReference: the resource of an answer. An OperationOutcome with an
 * error issue is raised as a ClientError (from a 2xx answer too); one without is read as nothing.
 * A body that is not FHIR JSON is read, as Java does, as the text of an error OperationOutcome.
 */
function unmarshal(res: RawResponse, expectedType?: string): JsonObject | null {
  const ok = res.status >= 200 && res.status < 300;
  if (res.text === '') {
    if (!ok) throw new ClientError(`Server returned error code ${res.status}`, res.status, null);
    return null;
  }
  const contentType = res.contentType?.split(';')[0]!.trim().toLowerCase();
  let resource: JsonObject;
  const parse = (): JsonObject => {
    try {
      const parsed = JSON.parse(res.text) as Json;
      if (!isObject(parsed) || typeof parsed.resourceType !== 'string') {
        throw new Error('Unable to find resource type - maybe not a FHIR resource?');
      }
      return parsed;
    } catch (e) {
      throw new ClientError(
        `Error parsing response message: ${(e as Error).message}`,
        res.status,
        null,
      );
    }
  };
  if (contentType === undefined) resource = ok ? parse() : outcomeFromText(res.text);
  else if (contentType === 'application/json' || contentType === 'application/fhir+json') {
    resource = parse();
  } else if (['application/xml', 'application/fhir+xml', 'text/xml'].includes(contentType)) {
    throw new ClientError('XML answers are not read by this runner', res.status, null);
  } else if (contentType === 'text/html') {
    resource = outcomeFromText(
      res.text
        .replace(/<[^>]*>/g, ' ')
        .replace(/\s+/g, ' ')
        .trim(),
    );
  } else resource = outcomeFromText(res.text);
  if (
    resource.resourceType === 'OperationOutcome' &&
    (expectedType !== 'OperationOutcome' || !ok)
  ) {
    if (hasErrorIssue(resource)) {
      throw new ClientError(`Error from server: HTTP ${res.status}`, res.status, resource);
    }
    return null; // Java: "Got OperationOutcome with no error"
  }
  return resource;
}

/** Runs the suites: one result per test that the modes select. */
export async function runTxTests(options: RunOptions): Promise<RunOutcome> {
  let server: http.Server;
  let ownServer = false;
  if (options.app instanceof http.Server) server = options.app;
  else {
    server = http.createServer(options.app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    ownServer = true;
  }
  try {
    return await new TxRun(server, options).run();
  } finally {
    if (ownServer) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

class TxRun {
  private readonly base: string;
  private readonly casesDir: string;
  private readonly modes: Set<string>;
  private readonly timeoutMs: number;
  private fhirVersion: 'R4' | 'R5' = 'R4';
  private capabilityStatement: JsonObject | null = null;
  private terminologyCapabilities: JsonObject | null = null;
  private capabilityError: string | null = null;
  /** Per suite: the server's cache-id (null: starting one failed; not tried again). */
  private readonly suiteCaches = new Map<string, string | null>();

  constructor(
    private readonly server: http.Server,
    private readonly options: RunOptions,
  ) {
    this.base = (options.base ?? '/fhir').replace(/\/$/, '');
    this.casesDir = options.casesDir ?? CASES_DIR;
    this.modes = new Set(options.modes ?? ['general']);
    this.timeoutMs = options.timeoutMs ?? 15_000;
  }

  private get mimeType(): string {
    // FHIRToolingClient.withVer: the client is set to name the version in its mime types.
    return `application/fhir+json; fhirVersion=${this.fhirVersion === 'R4' ? '4.0' : '5.0'}`;
  }

  /** `version` for $version$ and `version:` conditions: FhirPublication.toCode() of the client. */
  private get clientVersion(): string {
    return this.fhirVersion === 'R4' ? '4.0.1' : '5.0.0';
  }

  private async http(
    method: 'GET' | 'POST',
    url: string,
    headers: Record<string, string>,
    body?: JsonObject,
  ): Promise<RawResponse> {
    let req = method === 'GET' ? request(this.server).get(url) : request(this.server).post(url);
    for (const [name, value] of Object.entries(headers)) req = req.set(name, value);
    req = req
      .timeout(this.timeoutMs)
      .buffer(true)
      .parse((res, done) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => done(null, text));
      });
    if (body !== undefined) req = req.send(JSON.stringify(body));
    const res = await req;
    const contentType = res.headers['content-type'] as string | undefined;
    return { status: res.status, contentType, text: typeof res.body === 'string' ? res.body : '' };
  }

  /** FHIRToolingClient.generateHeaders plus the format headers of FhirRequestBuilder. */
  private headers(
    ctx: { clientHeaders: Record<string, string>; lang?: string; requestId?: string },
    hasBody: boolean,
  ): Record<string, string> {
    const h: Record<string, string> = { Accept: this.mimeType };
    if (hasBody) h['Content-Type'] = `${this.mimeType};charset=UTF-8`;
    Object.assign(h, ctx.clientHeaders);
    h['User-Agent'] = 'Tools/Java';
    if (ctx.lang) h['Accept-Language'] = ctx.lang;
    if (ctx.requestId) h['X-Request-Id'] = ctx.requestId;
    return h;
  }

  /** TerminologyClientR4 converts what it sends to R4 and what it gets back to R5. */
  private toServer(r: JsonObject): JsonObject {
    const out = this.fhirVersion === 'R4' ? convertResource(r, 'r5-to-r4') : r;
    return (dropEmpty(out) as JsonObject | undefined) ?? {};
  }

  private fromServer(r: JsonObject): JsonObject {
    const parsed = (dropEmpty(r) as JsonObject | undefined) ?? {};
    const out = this.fhirVersion === 'R4' ? convertResource(parsed, 'r4-to-r5') : parsed;
    return (dropEmpty(out) as JsonObject | undefined) ?? {};
  }

  /** The outcome of an error answer (R5); an error without one ends the test, as in Java. */
  private fromServerError(e: unknown): JsonObject {
    if (e instanceof ClientError && e.outcome) return this.fromServer(e.outcome);
    throw e;
  }

  async run(): Promise<RunOutcome> {
    this.fhirVersion = this.options.fhirVersion ?? (await this.detectVersion());
    await this.checkClient();
    const testCases = readJson(path.join(this.casesDir, 'test-cases.json')) as unknown as {
      suites: Suite[];
    };
    const results: TestResult[] = [];
    for (const suite of testCases.suites) {
      // TxTester.execute: a suite with a mode runs only in that mode (`metadata` has none).
      if (suite.mode !== undefined && !this.modes.has(suite.mode)) continue;
      if (suite.disabled) continue;
      if (this.options.suites && !this.options.suites.includes(suite.name)) continue;
      const setup = (suite.setup ?? []).map((f) => readJson(path.join(this.casesDir, f)));
      const seen = new Map<string, number>();
      try {
        for (const test of suite.tests) {
          // TxTester.runSuite: so does a test (three in simple-cases are tx.fhir.org's only).
          if (test.mode !== undefined && !this.modes.has(test.mode)) continue;
          if (test.disabled) continue;
          const n = (seen.get(test.name) ?? 0) + 1;
          seen.set(test.name, n);
          const id = `${suite.name}/${test.name}${n > 1 ? `#${n}` : ''}`;
          results.push({ id, ...(await this.runTest(suite, test, setup)) });
        }
      } finally {
        await this.endSuiteCache(suite.name);
      }
    }
    return { fhirVersion: this.fhirVersion, results };
  }

  /** TxTester.connectToServer: $versions, else metadata's fhirVersion, else R4. */
  private async detectVersion(): Promise<'R4' | 'R5'> {
    let version: string | undefined;
    try {
      const res = await this.http(
        'GET',
        `${this.base}/$versions?_format=json&nocache=${Date.now()}`,
        {
          Accept: 'application/json, application/fhir+json',
        },
      );
      const body = JSON.parse(res.text) as JsonObject;
      if (body.resourceType === 'Parameters') {
        const d = objects(body.parameter).find((p) => p.name === 'default');
        if (typeof d?.valueString === 'string') version = d.valueString;
      } else if (typeof body.default === 'string') version = body.default;
    } catch {
      // Server does not support $versions
    }
    if (version === undefined) {
      try {
        const res = await this.http('GET', `${this.base}/metadata?_format=json`, {});
        const cs = JSON.parse(res.text) as JsonObject;
        if (typeof cs.fhirVersion === 'string') version = cs.fhirVersion;
      } catch {
        // Defaulting to FHIR R4
      }
    }
    version ??= '4.0';
    const major = Number.parseInt(version, 10);
    if (major >= 5) return 'R5';
    if (major === 4) return 'R4';
    throw new Error(`unsupported FHIR Version for terminology tests: ${version}`);
  }

  /**
   * TxTester.checkClient: the CapabilityStatement and TerminologyCapabilities, read once. Java
   * stops the whole run when either cannot be read; here only the metadata tests fail.
   */
  private async checkClient(): Promise<void> {
    const read = async (url: string, type: string): Promise<JsonObject> => {
      const res = await this.http('GET', url, this.headers({ clientHeaders: {} }, false));
      const r = unmarshal(res);
      if (r?.resourceType !== type) {
        throw new Error(`Error fetching the server's ${type}: HTTP ${res.status}, no ${type}`);
      }
      return this.fromServer(r);
    };
    try {
      this.capabilityStatement = await read(`${this.base}/metadata`, 'CapabilityStatement');
      this.terminologyCapabilities = await read(
        `${this.base}/metadata?mode=terminology`,
        'TerminologyCapabilities',
      );
    } catch (e) {
      this.capabilityError = (e as Error).message;
    }
  }

  /** TxTester.serverSupportsCacheControl: a system-level `cache-control` operation. */
  private get supportsCacheControl(): boolean {
    return objects(this.capabilityStatement?.rest).some((r) =>
      objects(r.operation).some((o) => o.name === 'cache-control'),
    );
  }

  /**
   * TxTester.suiteCacheId: when the server offers $cache-control, a suite's setup is sent once
   * into a cache, and its tests carry `X-Cache-Id` instead of the tx-resource parameters.
   */
  private async suiteCacheId(suite: string, setup: JsonObject[]): Promise<string | null> {
    if (setup.length === 0 || !this.supportsCacheControl) return null;
    if (this.suiteCaches.has(suite)) return this.suiteCaches.get(suite)!;
    let cacheId: string | null = null;
    try {
      const body = this.toServer({
        resourceType: 'Parameters',
        parameter: setup.map((r) => ({ name: 'tx-resource', resource: r })),
      });
      const res = await this.http(
        'POST',
        `${this.base}/$cache-control?mode=start`,
        this.headers({ clientHeaders: {} }, true),
        body,
      );
      if (res.status >= 200 && res.status < 300) {
        const p = unmarshal(res);
        const id = objects(p?.parameter).find((x) => x.name === 'cache-id');
        const value = id && Object.entries(id).find(([k]) => /^value[A-Z]/.test(k))?.[1];
        if (typeof value === 'string') cacheId = value;
      }
    } catch {
      // Unable to start a terminology cache; not caching this suite
    }
    this.suiteCaches.set(suite, cacheId);
    return cacheId;
  }

  private async endSuiteCache(suite: string): Promise<void> {
    const cacheId = this.suiteCaches.get(suite);
    this.suiteCaches.delete(suite);
    if (!cacheId) return;
    try {
      await this.http(
        'POST',
        `${this.base}/$cache-control?mode=end`,
        this.headers({ clientHeaders: { 'X-Cache-Id': cacheId } }, true),
        this.toServer({ resourceType: 'Parameters' }),
      );
    } catch {
      // best effort
    }
  }

  /** TxTester.chooseParam: `name:mode` for one of the runner's modes, else `name`. */
  private chooseParam(test: TestCase, name: string): string | undefined {
    for (const mode of this.modes) {
      const v = test[`${name}:${mode}`];
      if (typeof v === 'string') return v;
    }
    return test[name] as string | undefined;
  }

  private async runTest(
    suite: Suite,
    test: TestCase,
    setup: JsonObject[],
  ): Promise<Omit<TestResult, 'id'>> {
    const responseFile = this.chooseParam(test, 'response');
    const comparator = new Comparator({
      modes: this.modes,
      // TxTester: the externals entry of the response file, if any.
      externals: (responseFile && this.options.externals?.[responseFile]) || null,
      variables: { version: this.clientVersion },
      // Metadata tests look only for the expected properties (CompareUtilities pattern mode).
      patternMode: test.operation === 'metadata' || test.operation === 'term-caps',
    });
    let reason: string | null;
    try {
      reason = await this.executeTest(suite, test, setup, comparator);
    } catch (e) {
      reason = `Exception: ${(e as Error).message}`;
    }
    return {
      suite: suite.name,
      test: test.name,
      passed: reason === null,
      reason,
      warnings: comparator.warnings,
    };
  }

  /** TxTester.runTest for one test: null when it passes. */
  private async executeTest(
    suite: Suite,
    test: TestCase,
    setup: JsonObject[],
    comparator: Comparator,
  ): Promise<string | null> {
    const profile = readJson(path.join(this.casesDir, test.profile ?? 'parameters-default.json'));
    const clientHeaders: Record<string, string> = {};
    const cacheId = await this.suiteCacheId(suite.name, setup);
    if (cacheId) clientHeaders['X-Cache-Id'] = cacheId;
    // A test's header is sent unless it names a mode the runner is not in.
    if (test.header && (!test.header.mode || this.modes.has(test.header.mode))) {
      clientHeaders[test.header.name] = test.header.value;
    }
    const effectiveSetup = cacheId ? [] : setup;
    const reqFile = this.chooseParam(test, 'request');
    const req = reqFile === undefined ? null : readJson(path.join(this.casesDir, reqFile));
    const responseFile = this.chooseParam(test, 'response');
    if (responseFile === undefined) throw new Error(`test ${test.name} has no response file`);
    const expected = readJson(path.join(this.casesDir, responseFile));
    const ctx = {
      clientHeaders,
      lang: test['Accept-Language'],
      requestId: `txTests:${suite.name}/${test.name}`,
    };
    const compare = (actual: JsonObject) => comparator.compare(test.name, expected, actual);

    if (test.operation === 'metadata' || test.operation === 'term-caps') {
      const source =
        test.operation === 'metadata' ? this.capabilityStatement : this.terminologyCapabilities;
      if (!source) throw new Error(this.capabilityError ?? 'no capability statement');
      const actual = structuredClone(source);
      if (test.operation === 'metadata') sortCapStmt(actual);
      else sortTermCaps(actual);
      return compare(actual);
    }

    if (!req) throw new Error(`test ${test.name} has no request`);
    // The request's parameters, then one tx-resource per setup resource, then the profile's.
    const params: JsonObject = structuredClone(req);
    const withSetup = (): JsonObject[] => [
      ...objects(params.parameter),
      ...effectiveSetup.map((r) => ({ name: 'tx-resource', resource: r })),
    ];
    const withProfile = (list: JsonObject[]): JsonObject[] => [
      ...list,
      ...objects(profile.parameter),
    ];
    const tcode = test['http-code'] ?? '2xx';

    let actual: JsonObject;
    let code: number;
    switch (test.operation) {
      case 'expand': {
        const list = withSetup();
        // TxTester.expand: `url` must be a uri-typed parameter.
        for (const p of list) {
          if (p.name === 'url' && !Object.keys(p).some((k) => URI_TYPES.has(k))) {
            throw new Error('Wrong param type');
          }
        }
        params.parameter = withProfile(list);
        try {
          const res = await this.http(
            'POST',
            `${this.base}/ValueSet/$expand`,
            this.headers(ctx, true),
            this.toServer(params),
          );
          const vs = this.readExpansion(res);
          scrubDomainResource(vs);
          sortValueSet(vs);
          actual = vs;
          code = 200;
        } catch (e) {
          actual = this.fromServerError(e);
          scrubOperationOutcome(actual);
          code = (e as ClientError).status;
        }
        break;
      }
      case 'validate-code':
      case 'cs-validate-code':
      case 'batch-validate': {
        params.parameter = withProfile(withSetup());
        const [type, op] =
          test.operation === 'validate-code'
            ? ['ValueSet', 'validate-code']
            : test.operation === 'cs-validate-code'
              ? ['CodeSystem', 'validate-code']
              : ['ValueSet', 'batch-validate-code'];
        try {
          actual = await this.operateType(type, op, params, ctx);
          scrubParameters(actual);
          sortParameters(actual);
          code = 200;
        } catch (e) {
          actual = this.fromServerError(e);
          // TxTester.validateCS only drops the narrative; the others scrub the outcome too.
          if (test.operation !== 'cs-validate-code') scrubOperationOutcome(actual);
          delete actual.text;
          code = (e as ClientError).status;
        }
        break;
      }
      case 'lookup':
      case 'translate': {
        params.parameter = withProfile(withSetup());
        const url = test.operation === 'lookup' ? 'CodeSystem/$lookup' : 'ConceptMap/$translate';
        try {
          const res = await this.http(
            'POST',
            `${this.base}/${url}`,
            this.headers(ctx, true),
            this.toServer(params),
          );
          actual = this.readParameters(res);
          scrubParameters(actual);
          sortParameters(actual);
          code = 200;
        } catch (e) {
          // TerminologyClientR4.translate does not turn the R4 client's error into the one
          // TxTester catches: on an R4 server a translate error ends the test.
          if (test.operation === 'translate' && this.fhirVersion === 'R4') throw e;
          actual = this.fromServerError(e);
          scrubOperationOutcome(actual);
          code = (e as ClientError).status;
        }
        break;
      }
      default:
        throw new Error(`Unknown Operation ${test.operation}`);
    }
    const diff = compare(actual);
    if (!httpCodeOk(tcode, code))
      return `Response Code fail: should be '${tcode}' but is '${code}'`;
    return diff;
  }

  /** FHIRToolingClient.expandValueset: a ValueSet, or an error with an OperationOutcome. */
  private readExpansion(res: RawResponse): JsonObject {
    let r: JsonObject | null;
    try {
      r = unmarshal(res);
    } catch (e) {
      // Java: only an outcome travels on; anything else becomes an error without one.
      if (e instanceof ClientError && e.outcome) throw e;
      throw new Error((e as Error).message);
    }
    if (res.status < 200 || res.status >= 300) {
      throw new Error(`Server returned error code ${res.status} without an OperationOutcome`);
    }
    if (r?.resourceType !== 'ValueSet') {
      throw new Error(`Expected a ValueSet, got ${typeName(r)}`);
    }
    return this.fromServer(r);
  }

  /** FHIRToolingClient.lookupCode / translate: a Parameters, or an error with an outcome. */
  private readParameters(res: RawResponse): JsonObject {
    const r = unmarshal(res);
    if (res.status < 200 || res.status >= 300) {
      throw new Error(`Server returned error code ${res.status} without an OperationOutcome`);
    }
    if (r?.resourceType !== 'Parameters') {
      throw new Error(`Expected a Parameters, got ${typeName(r)}`);
    }
    return this.fromServer(r);
  }

  /**
   * FHIRToolingClient.operateType: GET with the parameters in the query when all are primitive
   * values, else POST of the Parameters; an answer that is not a Parameters comes back wrapped
   * in one, as its `return` parameter.
   */
  private async operateType(
    type: string,
    op: string,
    params: JsonObject,
    ctx: { clientHeaders: Record<string, string>; lang?: string; requestId?: string },
  ): Promise<JsonObject> {
    const body = this.toServer(params);
    const list = objects(body.parameter);
    const complex = list.some(
      (p) => !Object.keys(p).some((k) => PRIMITIVE_TYPES.has(k.replace(/^_/, ''))),
    );
    let res: RawResponse;
    if (complex) {
      res = await this.http('POST', `${this.base}/${type}/$${op}`, this.headers(ctx, true), body);
    } else {
      const query = list
        .map((p) => {
          const key = Object.keys(p).find((k) => PRIMITIVE_TYPES.has(k));
          const value = key === undefined ? '' : `${p[key] as string | number | boolean}`;
          return `${formEncode(typeof p.name === 'string' ? p.name : '')}=${formEncode(value)}&`;
        })
        .join('');
      res = await this.http(
        'GET',
        `${this.base}/${type}/$${op}?${query}`,
        this.headers(ctx, false),
      );
    }
    const r = unmarshal(res);
    if (res.status < 200 || res.status >= 300) {
      throw new Error(`Server returned error code ${res.status} without an OperationOutcome`);
    }
    if (r?.resourceType === 'Parameters') return this.fromServer(r);
    const wrapped: JsonObject = { name: 'return' };
    if (r) wrapped.resource = r;
    return this.fromServer({ resourceType: 'Parameters', parameter: [wrapped] });
  }
}

/** Passes and failures per suite, in run order. */
export function summarize(
  results: TestResult[],
): { suite: string; passed: number; failed: number }[] {
  const bySuite = new Map<string, { suite: string; passed: number; failed: number }>();
  for (const r of results) {
    const row = bySuite.get(r.suite) ?? { suite: r.suite, passed: 0, failed: 0 };
    if (r.passed) row.passed++;
    else row.failed++;
    bySuite.set(r.suite, row);
  }
  return [...bySuite.values()];
}

/** The summary as a text table (for console.log). */
export function formatSummary(results: TestResult[]): string {
  const rows = summarize(results);
  const total = {
    suite: 'total',
    passed: rows.reduce((n, r) => n + r.passed, 0),
    failed: rows.reduce((n, r) => n + r.failed, 0),
  };
  const lines = [...rows, total].map((r) => [
    r.suite,
    `${r.passed}`,
    `${r.failed}`,
    `${r.passed + r.failed}`,
  ]);
  const head = ['suite', 'passed', 'failed', 'tests'];
  const widths = head.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  const fmt = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  const rule = widths.map((w) => '-'.repeat(w)).join('  ');
  return [fmt(head), rule, ...lines.slice(0, -1).map(fmt), rule, fmt(lines[lines.length - 1])].join(
    '\n',
  );
}

export const KNOWN_FAILURES_FILE = path.join(__dirname, 'known-failures.json');

/** `suite/test` → the reason, for the failures of a run (one line, at most ~200 characters). */
export function knownFailuresOf(results: TestResult[]): Record<string, string> {
  const out: Record<string, string> = {};
  const failures = results.filter((r) => !r.passed);
  for (const r of failures.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))) {
    const reason = (r.reason ?? '').replace(/\s+/g, ' ').trim();
    out[r.id] = reason.length > 200 ? `${reason.slice(0, 197)}...` : reason;
  }
  return out;
}
