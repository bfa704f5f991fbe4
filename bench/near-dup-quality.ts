/**
 * Precision and recall of the near-duplicate index on pairs with known edit sizes
 * (testweb/near-duplicates.ts). For each k, the originals are added to a fresh index, then
 * every variant is looked up: the pair is predicted a near-duplicate iff its original is
 * found. The index's answer is also checked against a linear scan, so a missed fingerprint
 * within k would show up as an index error.
 */
import { MemoryKvStore } from './support/memory-kv-store.js';
import { addAndFindOriginal, findWithin } from '../stages/simhash/fingerprint-index.js';
import { hammingDistance, simhash64, simhashToHex } from '../stages/shared/content-identity/simhash.js';
import { EDIT_SIZES, NEAR_DUPLICATE_MAX_EDIT_FRACTION, nearDuplicatePairs, type NearDuplicatePair } from '../testweb/near-duplicates.js';
import { median } from './stats.js';

export interface QualityRow {
  k: number;
  tp: number;
  fp: number;
  fn: number;
  tn: number;
  precision: number;
  recall: number;
  /** variants that matched some other pair's original */
  crossMatches: number;
  /** lookups whose answer differed from the linear scan's */
  indexErrors: number;
}

export interface EditSizeRow {
  editedWords: number | 'unrelated';
  pairs: number;
  labelledNear: number;
  foundAtK3: number;
  medianDistance: number;
  maxDistance: number;
  minDistance: number;
}

interface Fingerprinted extends NearDuplicatePair {
  ho: bigint;
  hv: bigint;
  distance: number;
}

const originalUrl = (p: NearDuplicatePair) => `https://${p.id}.pairs.test/original`;

export function fingerprintPairs(seed: number, pairsPerSize: number): Fingerprinted[] {
  return nearDuplicatePairs(seed, { pairsPerSize }).map((p) => {
    const ho = simhash64(p.original);
    const hv = simhash64(p.variant);
    return { ...p, ho, hv, distance: hammingDistance(ho, hv) };
  });
}

export async function measureQuality(pairs: Fingerprinted[], k: number): Promise<QualityRow> {
  const store = new MemoryKvStore();
  for (const p of pairs) await addAndFindOriginal(store, { h: simhashToHex(p.ho), url: originalUrl(p), t: 1 }, k);
  const row: QualityRow = { k, tp: 0, fp: 0, fn: 0, tn: 0, precision: 0, recall: 0, crossMatches: 0, indexErrors: 0 };
  for (const p of pairs) {
    const found = new Set((await findWithin(store, p.hv, k)).map((e) => e.url));
    const scan = pairs.filter((o) => hammingDistance(o.ho, p.hv) <= k).map(originalUrl);
    if (scan.length !== found.size || scan.some((u) => !found.has(u))) row.indexErrors++;
    const predicted = found.has(originalUrl(p));
    if (found.size > (predicted ? 1 : 0)) row.crossMatches++;
    if (predicted && p.nearDuplicate) row.tp++;
    else if (predicted) row.fp++;
    else if (p.nearDuplicate) row.fn++;
    else row.tn++;
  }
  row.precision = row.tp / Math.max(1, row.tp + row.fp);
  row.recall = row.tp / Math.max(1, row.tp + row.fn);
  return row;
}

export function editSizeTable(pairs: Fingerprinted[]): EditSizeRow[] {
  const groups: Array<[EditSizeRow['editedWords'], Fingerprinted[]]> = [
    ...EDIT_SIZES.map((size) => [size, pairs.filter((p) => p.kind === 'edit' && p.editedWords === size)] as [number, Fingerprinted[]]),
    ['unrelated', pairs.filter((p) => p.kind === 'unrelated')],
  ];
  return groups.map(([editedWords, group]) => {
    const d = group.map((p) => p.distance);
    return {
      editedWords,
      pairs: group.length,
      labelledNear: group.filter((p) => p.nearDuplicate).length,
      foundAtK3: group.filter((p) => p.distance <= 3).length,
      medianDistance: median(d),
      minDistance: Math.min(...d),
      maxDistance: Math.max(...d),
    };
  });
}

export { NEAR_DUPLICATE_MAX_EDIT_FRACTION };
