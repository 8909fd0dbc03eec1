/** `--help` prints every setting with its default, one line each, instead of starting. */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { settingsHelp } from '../../src/config/help';
import { configSchema } from '../../src/config/schema';

const MAIN = join(__dirname, '..', '..', 'dist', 'main.js');

function settingLine(help: string, name: string): string {
  const line = help.split('\n').find((l) => l.trimStart().startsWith(`${name} `));
  if (!line) throw new Error(`no line for ${name} in:\n${help}`);
  return line;
}

describe('settingsHelp', () => {
  const help = settingsHelp();

  it('has one line per setting, with its default and what it is', () => {
    for (const name of Object.keys(configSchema.shape)) expect(settingLine(help, name).split(/\s{2,}/).filter(Boolean)).toHaveLength(3);
    expect(settingLine(help, 'PORT')).toMatch(/^ {2}PORT +8080 +public listener port/);
    expect(settingLine(help, 'RATE_LIMIT_DEFAULT')).toMatch(/ 600\/60 /);
    expect(settingLine(help, 'BODY_MIN_RATE')).toMatch(/ 1024\/5 /);
    expect(settingLine(help, 'KAFKA_IDEMPOTENT')).toMatch(/ true /);
    expect(settingLine(help, 'TOPIC_TRIGGERS')).toMatch(/ workflow\.triggers /);
    expect(settingLine(help, 'REDIS_URL')).toMatch(/ \(unset\) /);
  });

  it('keeps each line within a terminal\'s width', () => {
    for (const line of help.split('\n')) expect(line.length).toBeLessThanOrEqual(140);
  });
});

describe('dist/main.js arguments', () => {
  it('--help prints the settings and exits 0 without starting, even with a bad setting', () => {
    const run = spawnSync(process.execPath, [MAIN, '--help'], { env: { PATH: process.env.PATH, PORT: 'not-a-port' }, encoding: 'utf8', timeout: 20_000 });
    expect(run.status).toBe(0);
    expect(run.stdout).toBe(settingsHelp());
    expect(run.stdout + run.stderr).not.toContain('listening');
    expect(run.stderr).toBe('');
  });

  it('-h does the same', () => {
    const run = spawnSync(process.execPath, [MAIN, '-h'], { env: { PATH: process.env.PATH }, encoding: 'utf8', timeout: 20_000 });
    expect(run.status).toBe(0);
    expect(run.stdout).toBe(settingsHelp());
  });

  it('refuses any other argument with exit 2, pointing at --help', () => {
    const run = spawnSync(process.execPath, [MAIN, '--port=9000'], { env: { PATH: process.env.PATH }, encoding: 'utf8', timeout: 20_000 });
    expect(run.status).toBe(2);
    expect(run.stderr).toBe('config error: unknown argument --port=9000: settings are environment variables (--help lists them)\n');
  });
});
