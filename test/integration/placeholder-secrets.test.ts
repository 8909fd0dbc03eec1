/**
 * Issue 9 item 12: `deploy/k8s/secret.yaml` shipped `ADMIN_TOKEN: REPLACE-ME-with-a-long-random-token`,
 * which passed validation. The built gateway must refuse such placeholders: exit 2, one line.
 */
import { runGatewayToExit } from '../helpers/server';

describe('the built gateway and placeholder secrets', () => {
  it.each([
    ['ADMIN_TOKEN', 'REPLACE-ME-with-a-long-random-token'],
    ['ADMIN_TOKEN', 'change-me-change-me'],
    ['REDIS_URL', 'redis://:changeme@127.0.0.1:6379/0'],
  ])('refuses %s=%s with exit code 2 and a line naming it', async (name, value) => {
    const { code, output } = await runGatewayToExit({ [name]: value, PORT: '0', HOST: '127.0.0.1' });
    expect(code).toBe(2);
    expect(output).toMatch(new RegExp(`^config error: ${name}: .*well-known placeholder`, 'm'));
    expect(output).not.toContain('"msg":"listening"');
  });
});
