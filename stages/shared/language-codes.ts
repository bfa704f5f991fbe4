/**
 * Language codes: pages hold BCP 47 tags (`en-GB`, as `lang` attributes write them), while
 * cc-index's `content_languages` and WARC-Identified-Content-Language hold ISO 639-3 codes.
 */
import { iso6393To1 } from 'iso-639-3';

/** BCP 47 primary subtag (ISO 639-1) → ISO 639-3, macrolanguages as such (`zh` → `zho`). */
const TAG_TO_ISO6393: ReadonlyMap<string, string> = new Map(Object.entries(iso6393To1).map(([three, one]) => [one, three]));

/**
 * The ISO 639-3 code of a BCP 47 tag's language (`en-GB` → `eng`, `zh-Hant` → `zho`,
 * `ceb` → `ceb`), as cc-index's `content_languages` has it; null for a tag that names none.
 */
export function iso6393OfTag(tag: string | null): string | null {
  if (tag === null) return null;
  const primary = tag.toLowerCase().split('-')[0]!;
  if (primary.length === 2) return TAG_TO_ISO6393.get(primary) ?? null;
  return /^[a-z]{3}$/.test(primary) ? primary : null;
}
