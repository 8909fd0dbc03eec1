/** Issue 20 item 3: the built gateway refuses TRUST_PROXY=true at start (exit 2, one line naming it). */
import { runGatewayToExit } from '../helpers/server';

describe('the built gateway and TRUST_PROXY=true', () => {
  it('exits with code 2 and a line naming TRUST_PROXY that asks for a hop count or the proxy addresses', async () => {
    const { code, output } = await runGatewayToExit({ TRUST_PROXY: 'true', PORT: '0', ADMIN_PORT: '0', HOST: '127.0.0.1' });
    expect(code).toBe(2);
    expect(output).toMatch(/^config error: TRUST_PROXY: true would believe every X-Forwarded-For hop.*name the proxies/m);
  });
});
