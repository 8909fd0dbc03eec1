import request from 'supertest';
import { ADMIN_TOKEN, testApp } from '../helpers/app';

const t = testApp();
const admin = (url: string) => request(t.admin).put(url).set('Authorization', `Bearer ${ADMIN_TOKEN}`);
const put = (path: string, auth: Record<string, unknown>) =>
  admin(`/admin/triggers/${path}`).send({
    workflowId: 'wf-a',
    workspaceId: 'ws-a',
    deployed: true,
    auth,
    provider: { name: 'vonage', secrets: ['vonage-signature-secret-0123456789abcdef'] },
  });

describe('auth on the header a preset signs in (contract §10)', () => {
  it('a bearer auth on Authorization with vonage (signed in Authorization) is 400 naming auth.header', async () => {
    const res = await put('vonage-auth', { token: 'tok-1234567890' });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body.error.details)).toContain('auth.header');
    const explicit = await put('vonage-auth2', { token: 'tok-1234567890', header: 'Authorization' });
    expect(explicit.status).toBe(400);
  });

  it('the same auth on another header is accepted', async () => {
    expect((await put('vonage-auth3', { token: 'tok-1234567890', header: 'X-Gateway-Token' })).status).toBe(200);
  });
});
