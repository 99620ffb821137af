// The README is what a newcomer reads first, so it is held to what a newcomer needs: short, in the order
// they need it (run the demo, try it on a cluster, read the plan, fix what goes wrong, deploy, decide
// whether to trust it), with every command it shows safe to paste and every path and link real. The
// detail lives in docs/*.md, held to the same rules about paths, links and references.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');

const README = 'README.md';
const DOCS = readdirSync(join(root, 'docs'))
  .filter((name) => name.endsWith('.md'))
  .map((name) => `docs/${name}`);
const ALL = [README, ...DOCS];

/** Words as `wc -w` counts them: runs of non-whitespace. */
const wordCount = (text: string) => text.split(/\s+/).filter((word) => word !== '').length;

/** Fenced code blocks (```...```), in order. */
const codeBlocks = (text: string) => [...text.matchAll(/^```[^\n]*\n([\s\S]*?)^```/gm)].map((m) => m[1]!);
const withoutCodeBlocks = (text: string) => text.replace(/^```[^\n]*\n[\s\S]*?^```/gm, '');

/** `## ` headings, in order (outside code blocks). */
const sectionHeadings = (text: string) =>
  withoutCodeBlocks(text)
    .split('\n')
    .filter((line) => line.startsWith('## '))
    .map((line) => line.slice(3).trim());

/** The body of a `## ` section, up to the next `## ` heading. */
function section(text: string, heading: string): string {
  const lines = text.split('\n');
  const start = lines.findIndex((line) => line === `## ${heading}`);
  if (start < 0) return '';
  const end = lines.findIndex((line, i) => i > start && line.startsWith('## '));
  return lines.slice(start + 1, end < 0 ? undefined : end).join('\n');
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens; repeats get -1, -2. */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const line of withoutCodeBlocks(text).split('\n')) {
    const m = /^#{1,6} (.*)$/.exec(line);
    if (!m) continue;
    const base = m[1]!
      .trim()
      .toLowerCase()
      .replace(/`/g, '')
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** Relative Markdown links `[text](target)` outside code blocks. */
const relativeLinks = (text: string) =>
  [...withoutCodeBlocks(text).matchAll(/\[[^\]]*\]\(([^)\s]+)\)/g)].map((m) => m[1]!).filter((target) => !/^[a-z]+:/i.test(target));

const REPO_PREFIXES = ['src/', 'test/', 'infra/', 'demo/', 'docs/', 'bench/', 'scripts/'];

/** Repository paths named in inline code spans and in code blocks. */
function repositoryPaths(text: string): string[] {
  const inline = [...withoutCodeBlocks(text).matchAll(/`([^`\n]+)`/g)].map((m) => m[1]!);
  const tokens = [...inline, ...codeBlocks(text)].flatMap((chunk) => chunk.split(/[\s=(),'"]+/));
  return tokens
    // A source position (`file.ts:31:11`) names the file.
    .map((token) => token.replace(/(:\d+)+$/, '').replace(/[.,:;]+$/, ''))
    .filter((token) => REPO_PREFIXES.some((prefix) => token.startsWith(prefix)))
    .filter((token) => !token.includes('<'));
}

/** A path exists, or (with `*`) some file in its folder matches it. */
function pathExists(path: string): boolean {
  if (!path.includes('*')) return existsSync(join(root, path));
  const folder = dirname(path);
  if (folder.includes('*') || !existsSync(join(root, folder))) return false;
  const pattern = new RegExp(`^${path.slice(folder.length + 1).replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*')}$`);
  return readdirSync(join(root, folder)).some((name) => pattern.test(name));
}

describe('README.md, as a newcomer reads it', () => {
  const readme = read(README);

  it('is at most 4,000 words (counted as wc -w counts)', () => {
    expect(wordCount(readme)).toBeLessThanOrEqual(4000);
  });

  it('has its sections in the order a newcomer needs them', () => {
    expect(sectionHeadings(readme)).toEqual([
      'What it is',
      'Quick start',
      'Trying it on your cluster',
      'Reading the table',
      'Troubleshooting',
      'NodePools',
      'Deploying the Lambda',
      'Safety',
      'Internals',
    ]);
  });

  it('shows `npm ci && npm start` and `npm ci && npm test` in its first code block, in the quick start', () => {
    const first = codeBlocks(readme)[0] ?? '';
    expect(first).toContain('npm ci && npm start');
    expect(first).toContain('npm ci && npm test');
    expect(codeBlocks(section(readme, 'Quick start'))[0]).toBe(first);
  });

  it('installs the CLI from the clone (npm link, or npm pack and a global install of the file)', () => {
    const trying = section(readme, 'Trying it on your cluster');
    expect(trying).toContain('npm ci && npm link');
    expect(trying).toContain('npm pack');
    expect(trying).toMatch(/npm install -g \.\/eks-consolidator-<version>\.tgz/);
    expect(trying).toMatch(/kubectl get [^\n]* -o json \| eks-consolidator plan - /);
  });

  it('opens Safety by saying that nothing has run against real AWS or EKS', () => {
    const firstLine = section(readme, 'Safety')
      .split('\n')
      .find((line) => line.trim() !== '');
    expect(firstLine).toMatch(/^\*{0,2}Nothing here has run against real AWS or EKS/);
  });

  it('keeps a Mutation testing subsection in Safety, with the measured score per file', () => {
    const safety = section(readme, 'Safety');
    expect(safety).toMatch(/^### Mutation testing$/m);
    expect(safety).toMatch(/^\| all measured \| \d+ \| \d+ \| \d+ \| \d+ \| \d+ \| \d+\.\d% \| \d+\.\d% \|$/m);
  });

  it('says how to turn the dry run off, with the param serverless.yml really has', () => {
    const deploying = section(readme, 'Deploying the Lambda');
    const serverless = read('serverless.yml');
    expect(serverless).toMatch(/^ {4}dryRun: 'true'$/m);
    expect(serverless).toContain('DRY_RUN: ${param:dryRun}');
    expect(deploying).toContain('--param="dryRun=false"');
  });

  it('says that next to Karpenter nothing is acted on until a pool is handed over, as the infra example shows', () => {
    const deploying = section(readme, 'Deploying the Lambda');
    expect(deploying).toMatch(/nothing is acted on until a pool is handed over/i);
    expect(deploying).toContain('eks-consolidator.io/disruption');
    expect(deploying).toContain('infra/nodepools.example.yaml');
    const example = read('infra/nodepools.example.yaml');
    expect(example).toContain('eks-consolidator.io/disruption:');
    expect(example).toMatch(/consolidateAfter: Never/);
  });

  it('says the browser test installs nothing unless INSTALL_CHROMIUM=1 is set', () => {
    expect(section(readme, 'Quick start')).toContain('INSTALL_CHROMIUM=1');
    expect(read('test/replay/html.browser.test.ts')).toContain("env[INSTALL_CHROMIUM] !== '1'");
  });
});

describe.each(ALL)('%s', (file) => {
  const text = read(file);

  it.each([
    ['../shared', /\.\.\/shared/],
    ['CONTRACT.md', /CONTRACT\.md/],
    ['seed NNN', /seed 0/i],
    ['issue N', /issue [0-9]/i],
    ['npx eks-consolidator', /npx eks-consolidator/],
  ])('names nothing a reader cannot run or see: no %s', (_name, pattern) => {
    const hits = text.split('\n').filter((line) => pattern.test(line));
    expect(hits).toEqual([]);
  });

  it('links only to files and headings that exist', () => {
    const broken = relativeLinks(text).filter((target) => {
      const [path, anchor] = target.split('#') as [string, string | undefined];
      const resolved = path === '' ? file : relative(root, join(root, dirname(file), path));
      if (!existsSync(join(root, resolved))) return true;
      return anchor !== undefined && resolved.endsWith('.md') && !anchors(read(resolved)).has(anchor);
    });
    expect(broken).toEqual([]);
  });

  it('names only repository paths that exist', () => {
    const paths = repositoryPaths(text);
    expect(paths.filter((path) => !pathExists(path))).toEqual([]);
  });
});

describe('the checks themselves', () => {
  it.each([
    ['a missing file', 'src/no-such-file.ts', false],
    ['a file', 'src/core/disruption/pass.ts', true],
    ['a folder', 'src/core/', true],
    ['a glob with a match', 'test/act/mutation.*.test.ts', true],
    ['a glob without one', 'test/act/nothing.*.test.ts', false],
  ])('pathExists: %s', (_case, path, exists) => {
    expect(pathExists(path)).toBe(exists);
  });

  it('finds paths in inline code and code blocks, and GitHub anchors for headings', () => {
    const sample = 'See `src/a.ts`, then:\n\n```sh\nnode --import tsx bench/run.ts --out=docs/x.md\n```\n\n## Handing a pool over, `now`\n';
    expect(repositoryPaths(sample)).toEqual(['src/a.ts', 'bench/run.ts', 'docs/x.md']);
    expect(anchors(sample).has('handing-a-pool-over-now')).toBe(true);
    expect(wordCount('one two\n\nthree  four')).toBe(4);
  });
});
