// Writes a generated cluster to a file exactly as `kubectl get nodes,pods,pdb,ds,deploy -A -o json`
// prints it (a List, 4-space indentation), one object at a time, so that 5,000 kubectl-sized nodes
// (about 700 MB) never sit in memory at once.
//
//   node --import tsx bench/writeCluster.ts <nodes> <out.json> [podsPerNode] [seed]
import { closeSync, openSync, writeSync } from 'node:fs';
import { emitCluster, type GenerateOptions } from './generate.ts';

export function writeClusterFile(path: string, options: GenerateOptions): { bytes: number; items: number; pods: number } {
  const fd = openSync(path, 'w');
  let bytes = 0;
  let items = 0;
  let pods = 0;
  let pending: string[] = [];
  let pendingLength = 0;
  const write = (text: string): void => {
    pending.push(text);
    pendingLength += text.length;
    if (pendingLength > 8 << 20) flush();
  };
  const flush = (): void => {
    const chunk = Buffer.from(pending.join(''), 'utf8');
    writeSync(fd, chunk);
    bytes += chunk.length;
    pending = [];
    pendingLength = 0;
  };
  try {
    write('{\n    "apiVersion": "v1",\n    "items": [');
    emitCluster(options, (item) => {
      // Every line of the object indented by two levels, as kubectl prints a List's items.
      write(`${items === 0 ? '' : ','}\n        ${JSON.stringify(item, null, 4).replaceAll('\n', '\n        ')}`);
      items++;
      if (item['kind'] === 'Pod') pods++;
    });
    write('\n    ],\n    "kind": "List",\n    "metadata": {\n        "resourceVersion": ""\n    }\n}\n');
    flush();
  } finally {
    closeSync(fd);
  }
  return { bytes, items, pods };
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop()!)) {
  const [nodes, out, podsPerNode, seed] = process.argv.slice(2);
  if (!nodes || !out) throw new Error('usage: writeCluster.ts <nodes> <out.json> [podsPerNode] [seed]');
  const result = writeClusterFile(out, { nodes: Number(nodes), podsPerNode: Number(podsPerNode ?? 30), seed: Number(seed ?? 42), kubectl: true });
  console.log(JSON.stringify(result));
}
