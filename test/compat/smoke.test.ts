import request from 'supertest';
import { createTestApp, createUser, type TestApp } from '../factories';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

test('GET /version/ answers the API version', async () => {
  const res = await request(t.app).get('/version/');
  expect(res.status).toBe(200);
  expect(res.body).toBe('2.0.0');
  expect(res.headers['x-ocl-api-version']).toBe('2.0.0');
});

test('a created user can read their own profile', async () => {
  const user = await createUser(t);
  const res = await request(t.app).get('/user/').set('Authorization', user.auth);
  expect(res.status).toBe(200);
  expect(res.body.username).toBe(user.username);
});
