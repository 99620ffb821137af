// Where the instance-type catalog comes from, seen from the application. The live source (EC2 and
// Pricing APIs behind a cache) and the bundled list both answer through this port, always with a date
// on the prices: a plan priced from an unknown point in time would be a silent lie about savings.
import type { Catalog } from '../model/types.ts';

export type CatalogOrigin = 'live' | 'cache' | 'bundled';

export interface CatalogLoad {
  readonly catalog: Catalog;
  /** When the prices were fetched (live, cache) or generated (bundled), epoch ms. Always set. */
  readonly pricesAsOf: number;
  readonly source: CatalogOrigin;
  /** Human-readable sentences: a fallback was used, the cache could not be read or written, ... */
  readonly warnings: readonly string[];
}

export interface CatalogSource {
  /** Never rejects for an AWS failure: falls back to older data and says so in `warnings`. */
  load(nowMs: number): Promise<CatalogLoad>;
}

/** A catalog as it was fetched, with the time its prices were read. */
export interface CachedCatalog {
  readonly catalog: Catalog;
  readonly pricesAsOf: number;
}

/** Keeps the last live catalog between runs, so that most runs make no EC2 or Pricing calls. */
export interface CatalogCache {
  /** The last catalog stored, or undefined when there is none (or it is incomplete). */
  get(): Promise<CachedCatalog | undefined>;
  put(entry: CachedCatalog): Promise<void>;
}

/**
 * A cache that lives as long as the process: for tests and offline runs. It keeps a structured copy so
 * that a caller mutating what it got back cannot change what the next `get` returns, as with a store.
 */
export class InMemoryCatalogCache implements CatalogCache {
  private entry: CachedCatalog | undefined;
  getCalls = 0;
  putCalls = 0;

  constructor(initial?: CachedCatalog) {
    this.entry = initial === undefined ? undefined : structuredClone(initial);
  }

  async get(): Promise<CachedCatalog | undefined> {
    this.getCalls += 1;
    return this.entry === undefined ? undefined : structuredClone(this.entry);
  }

  async put(entry: CachedCatalog): Promise<void> {
    this.putCalls += 1;
    this.entry = structuredClone(entry);
  }
}
