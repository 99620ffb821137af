// Reading input bytes: the caps, the UTF-8 check (also across pieces), and UTF-16 told apart.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { firstInvalidUtf8, formatBytes, INPUT_LIMITS, readBoundedStream, Utf8Check } from '../../src/adapters/files/boundedText.ts';
import { readCatalogFile, readClusterFile, readNodePoolsFile, readText } from '../../src/adapters/files/index.ts';
import { inputErrorOf, inputErrorOfAsync } from './helpers.ts';

const dir = mkdtempSync(join(tmpdir(), 'ekc-bounded-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const small = { capBytes: 16, what: 'a test file' };

function file(name: string, bytes: string | Buffer): string {
  const path = join(dir, name);
  writeFileSync(path, bytes);
  return path;
}

describe('firstInvalidUtf8', () => {
  it.each([
    ['ASCII', [0x61, 0x62], -1],
    ['two-byte é', [0x61, 0xc3, 0xa9], -1],
    ['four-byte emoji', [0xf0, 0x9f, 0x9a, 0x80], -1],
    ['a stray continuation byte', [0x61, 0x80], 1],
    ['an overlong slash', [0xc0, 0xaf], 0],
    ['an overlong three-byte form', [0xe0, 0x80, 0xaf], 0],
    ['a surrogate', [0xed, 0xa0, 0x80], 0],
    ['above U+10FFFF', [0xf4, 0x90, 0x80, 0x80], 0],
    ['a character cut off by the end', [0x61, 0x62, 0xe2, 0x82], 2],
    ['a lead byte followed by ASCII', [0xc3, 0x28], 0],
    ['0xFF', [0x61, 0xff], 1],
  ])('%s', (_case, bytes, offset) => {
    expect(firstInvalidUtf8(Buffer.from(bytes))).toBe(offset);
  });
});

describe('Utf8Check over pieces', () => {
  const euro = Buffer.from('a€b€', 'utf8'); // 61 e2 82 ac 62 e2 82 ac

  it.each([
    ['whole', [euro]],
    ['cut inside the first character', [euro.subarray(0, 2), euro.subarray(2)]],
    ['one byte at a time', [...euro].map((b) => Buffer.from([b]))],
    ['cut before the last byte', [euro.subarray(0, 7), euro.subarray(7)]],
  ])('accepts valid text %s', (_case, pieces) => {
    const check = new Utf8Check();
    for (const piece of pieces) check.push(piece);
    expect(() => check.end()).not.toThrow();
  });

  it.each([
    ['an invalid byte in the second piece', [Buffer.from('abcd'), Buffer.from([0x65, 0xff])], 'at byte offset 5, byte 0xFF does not begin a valid character'],
    ['a character cut by a piece and broken in the next', [Buffer.from([0x61, 0xe2]), Buffer.from([0x28, 0x61])], 'at byte offset 1, byte 0xE2'],
    ['text ending inside a character', [Buffer.from([0x61, 0xe2, 0x82])], 'at byte offset 1, the text ends inside a character'],
  ])('refuses %s, with the offset', (_case, pieces, problem) => {
    const error = inputErrorOf(() => {
      const check = new Utf8Check();
      for (const piece of pieces) check.push(piece);
      check.end();
    });
    expect(error.problem).toContain(problem);
  });

  it.each([
    ['UTF-16 little-endian with its mark', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('{"a":1}', 'utf16le')]), 'UTF-16'],
    ['UTF-16 big-endian with its mark', Buffer.from([0xfe, 0xff, 0x00, 0x7b]), 'UTF-16'],
    ['UTF-16 without a mark', Buffer.from('{"a":1}', 'utf16le'), 'UTF-16'],
    ['UTF-32 with its mark', Buffer.from([0xff, 0xfe, 0x00, 0x00, 0x7b, 0, 0, 0]), 'UTF-32'],
  ])('names %s', (_case, bytes, encoding) => {
    expect(inputErrorOf(() => new Utf8Check().push(bytes)).problem).toBe(`the file is ${encoding}; save it as UTF-8 (it starts the way ${encoding} text does)`);
  });
});

describe('caps', () => {
  it.each([
    [4 * 1024 ** 3, '4 GiB'],
    [400 * 1024 ** 2, '400 MiB'],
    [65 * 1024 ** 2, '65 MiB'],
    [1536 * 1024 ** 2, '1536 MiB'],
  ])('%d bytes read as %s', (bytes, text) => {
    expect(formatBytes(bytes)).toBe(text);
  });

  it('every input has its cap, the cluster List one large enough for a 5,000-node dump', () => {
    expect(INPUT_LIMITS.clusterList.capBytes).toBeGreaterThan(3 * 1151 * 1024 ** 2);
    for (const limit of [INPUT_LIMITS.catalog, INPUT_LIMITS.nodePools, INPUT_LIMITS.state]) expect(limit.capBytes).toBe(64 * 1024 ** 2);
  });

  it.each([
    ['a regular file larger than the cap, refused by its size', () => file('big.json', 'x'.repeat(17)), 'is 17 bytes, larger than 16 bytes, the most a test file may hold'],
    ['a file exactly at the cap', () => file('exact.json', 'x'.repeat(16)), undefined],
  ])('%s', async (_case, make, problem) => {
    const path = make();
    if (problem === undefined) expect(await readText(path, small)).toBe('x'.repeat(16));
    else expect((await inputErrorOfAsync(() => readText(path, small))).message).toBe(`${path}: ${problem}`);
  });

  it('a stream is read only up to one byte past the cap', async () => {
    let pulled = 0;
    const endless = new Readable({
      read() {
        pulled += 8;
        this.push(Buffer.from('aaaaaaaa'));
      },
    });
    const error = await inputErrorOfAsync(() => readBoundedStream(endless, small));
    expect(error.problem).toBe('is larger than 16 bytes, the most a test file may hold (reading stopped there)');
    expect(pulled).toBeLessThan(64);
    endless.destroy();
  });

  it('a FIFO that never ends is read up to the cap, then refused', { timeout: 60_000 }, async () => {
    const fifo = join(dir, 'pools.fifo');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    const writer = spawn('sh', ['-c', `yes '# padding' > '${fifo}'`], { stdio: 'ignore' });
    try {
      const error = await inputErrorOfAsync(() => readNodePoolsFile(fifo));
      expect(error.message).toBe(`${fifo}: is larger than 64 MiB, the most a NodePool file may hold (reading stopped there)`);
    } finally {
      writer.kill('SIGKILL');
    }
  });

  it('a sparse 5 GiB cluster file is refused by its size, before it is read', async () => {
    const path = file('huge.json', '');
    truncateSync(path, 5 * 1024 ** 3);
    expect((await inputErrorOfAsync(() => readClusterFile(path))).message).toBe(`${path}: is 5 GiB, larger than 4 GiB, the most a cluster file may hold`);
  });
});

describe('the file readers refuse text that is not UTF-8', () => {
  const list = (label: string) => `{"kind":"List","apiVersion":"v1","items":[{"kind":"Namespace","metadata":{"name":"${label}"}}]}`;

  it.each([
    ['a cluster List (read in parts)', (bytes: Buffer) => readClusterFile(file('c.json', bytes))],
    ['a catalog', (bytes: Buffer) => readCatalogFile(file('cat.json', bytes))],
  ])('%s: the offset of the first bad byte', async (_case, read) => {
    const text = list('ab');
    const at = text.indexOf('ab');
    const bytes = Buffer.concat([Buffer.from(text.slice(0, at)), Buffer.from([0xc3, 0x28]), Buffer.from(text.slice(at + 2))]);
    const error = await inputErrorOfAsync(() => read(bytes));
    expect(error.problem).toBe(`is not valid UTF-8: at byte offset ${at}, byte 0xC3 does not begin a valid character; save the file as UTF-8`);
  });

  it('keeps valid UTF-8 (a label with an accent) as it is', async () => {
    const cluster = await readClusterFile(file('accent.json', list('café')));
    expect(cluster.namespaces.map((n) => n.name)).toEqual(['café']);
  });
});
