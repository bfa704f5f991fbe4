/** The parts of a page that extraction reports and the walk collects: links, headings, hreflang alternates. */

/** Where a link was found. */
export type LinkSource = 'a' | 'area' | 'link-alternate' | 'link-next' | 'link-prev' | 'iframe' | 'meta-refresh';

export interface ExtractedLink {
  /** Absolute URL, resolved against `<base href>` if present else the page URL; fragment kept. */
  url: string;
  /** Whitespace-collapsed anchor text (for `area`, and images inside `a`: the alt text), max 500 chars. */
  anchorText: string;
  /** `rel` attribute lowercased and whitespace-collapsed, '' if none. */
  rel: string;
  source: LinkSource;
}

export interface Heading {
  level: number;
  text: string;
}

export interface HreflangAlternate {
  /** the hreflang value as written, lowercased (`de-at`, `x-default`) */
  lang: string;
  url: string;
}
