// The yardstick of the benchmark: how long merely decoding the cluster file takes (read the bytes, then
// `JSON.parse` the text), in its own process. A file beyond the longest string V8 can hold (about
// 512 MiB) cannot be given to one `JSON.parse`: its items are then parsed one by one (splitting the text
// at item boundaries is not counted), which is what any reader of such a file has to do.
//
//   node --import tsx bench/parseOnly.ts <cluster.json>
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { splitListItems } from '../src/adapters/files/jsonListStream.ts';

const file = process.argv[2];
if (!file) throw new Error('usage: parseOnly.ts <cluster.json>');
const bytes = readFileSync(file);
let parseMs = 0;
let mode: 'whole' | 'items';
let items = 0;
if (bytes.length < 500 * 1024 * 1024) {
  mode = 'whole';
  const text = bytes.toString('utf8');
  const start = performance.now();
  const list = JSON.parse(text) as { items: unknown[] };
  parseMs = performance.now() - start;
  items = list.items.length;
} else {
  mode = 'items';
  for (const piece of splitListItems(bytes)) {
    const text = piece.toString('utf8');
    const start = performance.now();
    JSON.parse(text);
    parseMs += performance.now() - start;
    items++;
  }
}
console.log(JSON.stringify({ bytes: bytes.length, items, mode, parseSeconds: parseMs / 1000 }));
