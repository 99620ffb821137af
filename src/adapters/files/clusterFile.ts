// Reading a cluster dump (CONTRACT §2) without holding it whole: a JSON `List` is read in chunks, cut
// into items (jsonListStream.ts), and each item is parsed and projected (core/input/projection.ts) at
// once, so memory holds the projected objects and one raw chunk, not the text and every full object.
// A 5,000-node dump (over a gigabyte) is more than one JavaScript string can hold, so streaming is
// what makes such files readable at all.
//
// Anything else (YAML, a top-level array, a single object, a List that is not valid JSON) goes the
// way every input file goes (documents.ts), which reports syntax errors with their position; the
// objects are projected there too. A bad item in a file too large for that path is reported with its
// index in `items`.
import { open } from 'node:fs/promises';
import { InputError } from '../../core/errors.ts';
import { parseClusterObjects } from '../../core/input/cluster.ts';
import { projectClusterObject } from '../../core/input/projection.ts';
import type { Cluster } from '../../core/model/types.ts';
import { decodeDocuments, readText } from './documents.ts';
import { ListItemSplitter, NotAList, ParsedItem } from './jsonListStream.ts';

const CHUNK_BYTES = 1 << 20;
/** Below this size a file that does not stream is decoded whole (longer text cannot be one string). */
const WHOLE_TEXT_LIMIT_BYTES = 400 * 1024 * 1024;

const WHITESPACE = new Set([0x20, 0x0a, 0x0d, 0x09]);

/** The documents of a JSON List file, projected; undefined when the file is not one (or cannot be opened). */
async function streamList(path: string): Promise<unknown[] | undefined> {
  let handle;
  try {
    handle = await open(path, 'r');
  } catch {
    return undefined; // readText reports it with the usual wording
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) return undefined; // a directory ...: readText words it
    const size = stat.size;
    const splitter = new ListItemSplitter();
    const items: unknown[] = [];
    let first = true;
    for (;;) {
      const chunk = Buffer.allocUnsafe(CHUNK_BYTES);
      const { bytesRead } = await handle.read(chunk, 0, CHUNK_BYTES, null);
      if (bytesRead === 0) break;
      const bytes = chunk.subarray(0, bytesRead);
      if (first) {
        first = false;
        let k = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
        while (k < bytes.length && WHITESPACE.has(bytes[k]!)) k++;
        if (bytes[k] !== 0x7b) return undefined; // not `{`: YAML or a JSON array
      }
      for (const item of splitter.pushParsing(bytes)) {
        if (item instanceof ParsedItem) {
          items.push(projectClusterObject(item.value));
          continue;
        }
        let value: unknown;
        try {
          value = JSON.parse(item.toString('utf8'));
        } catch (error) {
          if (size <= WHOLE_TEXT_LIMIT_BYTES) return undefined; // the whole-text path words it best
          throw new InputError(`items[${items.length}]`, '', `not valid JSON: ${(error as Error).message}`);
        }
        items.push(projectClusterObject(value));
      }
    }
    const list = splitter.end();
    list['items'] = items;
    return [list];
  } catch (error) {
    if (error instanceof NotAList) {
      if ((await handle.stat()).size <= WHOLE_TEXT_LIMIT_BYTES) return undefined;
      throw new InputError('', '', `not a kubectl List that can be read in parts (${error.message}), and too large to read whole`);
    }
    throw error;
  } finally {
    await handle.close();
  }
}

/** `kubectl get ... -o json` output (a List) or the same objects as YAML documents. */
export async function readClusterFile(path: string): Promise<Cluster> {
  try {
    const streamed = await streamList(path);
    const documents = streamed ?? decodeDocuments(await readText(path)).map(projectClusterObject);
    return parseClusterObjects(documents);
  } catch (error) {
    if (error instanceof InputError) throw error.file === undefined ? error.inFile(path) : error;
    throw error;
  }
}
