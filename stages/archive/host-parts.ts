/**
 * The host columns of cc-index's flat schema, with its meaning (cc-index-table's
 * HostName): the last five labels counted from the end (`url_host_tld` is the last label,
 * `uk` for www.bbc.co.uk), the public suffix of the ICANN section of the Public Suffix
 * List and the domain below it, and the same with the list's private section too
 * (`blogspot.com`), and the name reversed. An IP address has none of them; a name under no listed suffix
 * (`site.test`) has its labels but no suffix or domain.
 */
import { parse } from 'tldts';
import type { CaptureHostParts } from '../../schemas/output-tables.js';

export type HostParts = CaptureHostParts;

const NONE: HostParts = {
  url_host_tld: null,
  url_host_2nd_last_part: null,
  url_host_3rd_last_part: null,
  url_host_4th_last_part: null,
  url_host_5th_last_part: null,
  url_host_registry_suffix: null,
  url_host_registered_domain: null,
  url_host_private_suffix: null,
  url_host_private_domain: null,
  url_host_name_reversed: null,
};

/** `host` as URL.hostname gives it (lower case, punycode, IPv6 in brackets). */
export function hostParts(host: string): HostParts {
  const name = host.endsWith('.') ? host.slice(0, -1) : host;
  if (name === '' || name.startsWith('[')) return NONE;
  const icann = parse(name, { allowPrivateDomains: false, extractHostname: false });
  if (icann.isIp) return NONE;
  const priv = parse(name, { allowPrivateDomains: true, extractHostname: false });
  const rev = name.split('.').reverse();
  // tldts falls back on the last label for a name under no listed suffix; cc-index has none
  const listed = icann.isIcann === true;
  const privateListed = priv.isIcann === true || priv.isPrivate === true;
  return {
    url_host_tld: rev[0] ?? null,
    url_host_2nd_last_part: rev[1] ?? null,
    url_host_3rd_last_part: rev[2] ?? null,
    url_host_4th_last_part: rev[3] ?? null,
    url_host_5th_last_part: rev[4] ?? null,
    url_host_registry_suffix: listed ? icann.publicSuffix : null,
    url_host_registered_domain: listed ? icann.domain : null,
    url_host_private_suffix: privateListed ? priv.publicSuffix : null,
    url_host_private_domain: privateListed ? priv.domain : null,
    url_host_name_reversed: rev.join('.'),
  };
}
