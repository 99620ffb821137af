// Reading a cluster dump (docs/file-formats.md, "The cluster") without holding it whole: a JSON `List`
// is read in chunks, cut into items (jsonListStream.ts), and each item is parsed, projected
// (core/input/projection.ts) and turned into the model (ClusterBuilder) at once, so memory holds the
// model and one raw chunk, not the text, every full object or every projected one.
// A 5,000-node dump (over a gigabyte) is more than one JavaScript string can hold, so streaming is
// what makes such files readable at all.
//
// Anything else (YAML, a top-level array, a single object, a List that is not valid JSON) goes the
// way every input file goes (documents.ts), which reports syntax errors with their position; the
// objects are projected there too. A bad item in a file too large for that path is reported with its
// index in `items`.
import { open } from 'node:fs/promises';
import { InputError } from '../../core/errors.ts';
import { ClusterBuilder, parseClusterObjects } from '../../core/input/cluster.ts';
import { isRecord } from '../../core/input/fields.ts';
import { projectClusterObject } from '../../core/input/projection.ts';
import type { Cluster } from '../../core/model/types.ts';
import { INPUT_LIMITS, tooLarge, Utf8Check } from './boundedText.ts';
import { decodeDocuments, readText } from './documents.ts';
import { ListItemSplitter, NotAList, ParsedItem } from './jsonListStream.ts';

const CHUNK_BYTES = 1 << 20;
/** Below this size a file that does not stream is decoded whole (longer text cannot be one string). */
const WHOLE_TEXT_LIMIT_BYTES = INPUT_LIMITS.clusterWhole.capBytes;

const WHITESPACE = new Set([0x20, 0x0a, 0x0d, 0x09]);

/**
 * The cluster of a JSON List file, each item projected and parsed as it is read; undefined when the file
 * is not one (or cannot be opened), or when the whole-text reader words its problem better.
 */
async function streamList(path: string): Promise<Cluster | undefined> {
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
    const limit = INPUT_LIMITS.clusterList;
    if (size > limit.capBytes) throw tooLarge(limit, size);
    // The items are decoded from bytes here, not by readText: they are checked as UTF-8 here too.
    const utf8 = new Utf8Check();
    let total = 0;
    const splitter = new ListItemSplitter();
    const builder = new ClusterBuilder();
    let count = 0;
    // Items that state no kind take their List's (`PodList`), which kubectl prints after the items.
    const kindless: { raw: unknown; at: number }[] = [];
    // The first object the model refuses: reported once the whole file is known to be a valid List
    // (a JSON syntax error anywhere comes first, as it does when the file is read whole).
    let refused: InputError | undefined;
    const add = (value: unknown, at: number): void => {
      if (refused) return;
      const projected = projectClusterObject(value);
      if (isRecord(projected) && (typeof projected['kind'] !== 'string' || projected['kind'] === '')) {
        kindless.push({ raw: projected, at });
        return;
      }
      try {
        builder.add(projected, `items[${at}]`);
      } catch (error) {
        if (!(error instanceof InputError)) throw error;
        refused = error;
      }
    };
    let first = true;
    // One buffer for every chunk: the splitter copies what it keeps, and each chunk's items are parsed
    // before the next read.
    const chunk = Buffer.allocUnsafe(CHUNK_BYTES);
    for (;;) {
      const { bytesRead } = await handle.read(chunk, 0, CHUNK_BYTES, null);
      if (bytesRead === 0) break;
      const bytes = chunk.subarray(0, bytesRead);
      if (first) {
        first = false;
        let k = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
        while (k < bytes.length && WHITESPACE.has(bytes[k]!)) k++;
        if (bytes[k] !== 0x7b) return undefined; // not `{`: YAML or a JSON array
      }
      // The file may have grown since its size was read.
      total += bytesRead;
      if (total > limit.capBytes) throw tooLarge(limit);
      utf8.push(bytes);
      for (const item of splitter.pushParsing(bytes)) {
        if (item instanceof ParsedItem) {
          add(item.value, count++);
          continue;
        }
        let value: unknown;
        try {
          value = JSON.parse(item.toString('utf8'));
        } catch (error) {
          if (size <= WHOLE_TEXT_LIMIT_BYTES) return undefined; // the whole-text path words it best
          throw new InputError(`items[${count}]`, '', `not valid JSON: ${(error as Error).message}`);
        }
        add(value, count++);
      }
    }
    utf8.end();
    const list = splitter.end();
    const kind = list['kind'];
    // An object that has `items` but is no List (`kind: Pod`) is one object: read whole, it says so.
    if (typeof kind === 'string' && kind !== '' && !kind.endsWith('List')) throw new NotAList(`its kind is ${kind}`);
    // The List's own fields are checked as for any document (a missing kind, say), before its items.
    builder.add(list, '');
    if (refused) throw refused;
    const itemKind = kind === 'List' || typeof kind !== 'string' ? undefined : kind.slice(0, -'List'.length);
    for (const { raw, at } of kindless) builder.add(raw, `items[${at}]`, itemKind);
    return builder.finish();
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
    return (await streamList(path)) ?? parseClusterObjects(decodeDocuments(await readText(path, INPUT_LIMITS.clusterWhole)).map(projectClusterObject));
  } catch (error) {
    if (error instanceof InputError) throw error.file === undefined ? error.inFile(path) : error;
    throw error;
  }
}
