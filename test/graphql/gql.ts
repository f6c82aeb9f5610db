import request, { type Response } from 'supertest';
import type { TestApp } from '../factories';

/** Parsed JSON, as loosely typed as supertest gives it: tests read nested results directly. */
export type Json = Response['body'];

/** One GraphQL error as the API formats it. */
export interface GqlError {
  message: string;
  path?: Array<string | number>;
  extensions?: { code?: string; fieldErrors?: Record<string, string[]> };
}

export interface GqlResponse {
  status: number;
  data: Json;
  errors: GqlError[] | undefined;
}

/** POSTs one GraphQL operation; `auth` is an `Authorization` header value (none: anonymous). */
export async function gql(
  t: TestApp,
  auth: string | undefined,
  query: string,
  variables?: Record<string, unknown>,
): Promise<GqlResponse> {
  const req = request(t.app).post('/graphql');
  if (auth !== undefined) void req.set('Authorization', auth);
  const res = await req.send({ query, variables });
  return { status: res.status, data: res.body.data, errors: res.body.errors };
}

/** The `extensions.code` of the first error, failing loudly when the call succeeded. */
export function errorCode(res: GqlResponse): string | undefined {
  if (!res.errors || res.errors.length === 0) {
    throw new Error(`expected an error, got data ${JSON.stringify(res.data)}`);
  }
  return res.errors[0].extensions?.code;
}

/** The data of a call that must succeed (its errors, if any, fail the test with their text). */
export function dataOf(res: GqlResponse): Json {
  if (res.errors && res.errors.length > 0) {
    throw new Error(`unexpected GraphQL errors: ${JSON.stringify(res.errors)}`);
  }
  expect(res.status).toBe(200);
  return res.data;
}
