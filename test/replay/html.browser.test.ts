// `replay --format html` in Debian's headless Chromium (playwright-core, executablePath /usr/bin/chromium):
// the page renders with no network, has one series per config in each chart, and shows the JSON's
// numbers. When Chromium is absent the test is skipped with the reason printed. A test run must not change
// the machine unasked, so it installs Debian's chromium package with apt-get only when INSTALL_CHROMIUM=1
// is set (and it runs as root with apt-get present).
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderReplayHtml } from '../../src/cli/replayHtml.ts';
import type { ReplayReport } from '../../src/core/replay/report.ts';
import { replayDir, replaySeed003 } from './seed003Fixture.ts';

// The page function runs in the browser; the project's TypeScript has no DOM library, so declare it here.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
declare const document: any;

const CHROMIUM = '/usr/bin/chromium';
const LAUNCH_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** Opt-in for installing Chromium from Debian's packages when it is missing. */
const INSTALL_CHROMIUM = 'INSTALL_CHROMIUM';

/**
 * Why the browser test cannot run here, or undefined when Chromium is (or has just been) installed.
 * Installing is opt-in: without INSTALL_CHROMIUM=1 nothing is installed.
 */
function ensureChromium(chromium = CHROMIUM, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (existsSync(chromium)) return undefined;
  if (env[INSTALL_CHROMIUM] !== '1') return `${chromium} is absent; install the Debian package chromium, or set ${INSTALL_CHROMIUM}=1 to let this test install it with apt-get (as root)`;
  const root = process.getuid?.() === 0;
  const aptGet = spawnSync('sh', ['-c', 'command -v apt-get'], { encoding: 'utf8' }).status === 0;
  if (!root || !aptGet) return `${chromium} is absent and ${INSTALL_CHROMIUM}=1 cannot install it here (${root ? 'no apt-get' : 'not root'})`;
  const aptEnv = { ...env, DEBIAN_FRONTEND: 'noninteractive' };
  spawnSync('apt-get', ['update', '-qq'], { stdio: 'ignore', env: aptEnv, timeout: 120_000 });
  const install = spawnSync('apt-get', ['install', '-y', '-qq', 'chromium'], { stdio: 'ignore', env: aptEnv, timeout: 240_000 });
  return existsSync(chromium) ? undefined : `apt-get install chromium failed (exit ${install.status}): skipping the browser test`;
}

const skipReason = ensureChromium();
if (skipReason) console.warn(`replay html browser test skipped: ${skipReason}`);

let dir: string;
let report: ReplayReport;
let page: {
  title: string;
  requests: string[];
  costSeries: string[];
  evictionSeries: { config: string; total: number }[];
  summary: { config: string; cells: Record<string, { value: string; text: string }> }[];
  embedded: unknown;
  timelines: { config: string; rows: number }[];
};

describe('installing Chromium for this test', () => {
  const absent = join(import.meta.dirname, 'no-such-chromium');

  it.each([
    ['unset', {}],
    ['empty', { INSTALL_CHROMIUM: '' }],
    ['"true" (only "1" opts in)', { INSTALL_CHROMIUM: 'true' }],
  ])('is not attempted when INSTALL_CHROMIUM is %s: the test is skipped with the reason', (_case, env) => {
    const reason = ensureChromium(absent, env);
    expect(reason).toContain(`${absent} is absent`);
    expect(reason).toContain('INSTALL_CHROMIUM=1');
    expect(existsSync(absent)).toBe(false);
  });

  it('is not needed when the browser is there', () => {
    expect(ensureChromium(import.meta.filename, {})).toBeUndefined();
  });
});

describe.skipIf(skipReason !== undefined)(`replay --format html in Chromium${skipReason ? ` (skipped: ${skipReason})` : ''}`, () => {
  beforeAll(async () => {
    dir = replayDir('ekc-html-');
    report = await replaySeed003(48, dir);
    const file = join(dir, 'replay.html');
    writeFileSync(file, renderReplayHtml(report));

    const { chromium } = await import('playwright-core');
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: LAUNCH_ARGS, headless: true });
    try {
      const tab = await browser.newPage();
      const requests: string[] = [];
      tab.on('request', (r) => requests.push(r.url()));
      await tab.goto(pathToFileURL(file).href);
      page = await tab.evaluate(() => ({
        title: document.title,
        requests: [],
        costSeries: [...document.querySelectorAll('#cost-chart path.series')].map((p) => p.getAttribute('data-config') ?? ''),
        evictionSeries: [...document.querySelectorAll('#evictions-chart g.series')].map((g) => ({
          config: g.getAttribute('data-config') ?? '',
          total: [...g.querySelectorAll('rect')].reduce((sum, r) => sum + Number(r.getAttribute('data-evictions')), 0),
        })),
        summary: [...document.querySelectorAll('#summary tbody tr')].map((tr) => ({
          config: tr.getAttribute('data-config') ?? '',
          cells: Object.fromEntries([...tr.querySelectorAll('td')].map((td) => [td.getAttribute('data-key') ?? '', { value: td.getAttribute('data-value') ?? '', text: td.textContent ?? '' }])),
        })),
        embedded: JSON.parse(document.getElementById('replay-data')?.textContent ?? 'null'),
        timelines: [...document.querySelectorAll('section.decisions')].map((s) => ({ config: s.getAttribute('data-config') ?? '', rows: s.querySelectorAll('tbody tr').length })),
      }));
      page.requests = requests.filter((url) => !url.startsWith('file:'));
    } finally {
      await browser.close();
    }
  }, 180_000);

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('renders without loading anything from the network', () => {
    expect(page.title).toContain('eks-consolidator replay');
    expect(page.requests).toEqual([]);
  });

  it('has one series per config in each chart', () => {
    const names = report.configs.map((c) => c.name);
    expect(page.costSeries).toEqual(names);
    expect(page.evictionSeries.map((s) => s.config)).toEqual(names);
  });

  it('shows the numbers of the JSON', () => {
    expect(page.embedded).toEqual(JSON.parse(JSON.stringify(report)));
    for (const [i, config] of report.configs.entries()) {
      expect(page.evictionSeries[i]!.total).toBe(config.summary.podsEvicted);
      const row = page.summary.find((r) => r.config === config.name)!;
      for (const [key, cell] of Object.entries(row.cells)) {
        expect(Number(cell.value)).toBe(config.summary[key as keyof typeof config.summary]);
      }
      expect(row.cells['podsEvicted']!.text).toBe(String(config.summary.podsEvicted));
      expect(row.cells['regret']!.text).toBe(String(config.summary.regret));
      expect(row.cells['endCostPerHour']!.text).toBe(`$${config.summary.endCostPerHour.toFixed(4)}`);
      expect(page.timelines.find((t) => t.config === config.name)!.rows).toBe(config.decisions.length);
    }
  });
});
