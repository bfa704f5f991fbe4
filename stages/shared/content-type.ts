/** `text/html; charset=UTF-8` → { mimeType: 'text/html', charset: 'utf-8' } */
export function parseContentType(header: string | undefined): { mimeType: string; charset: string | null } {
  if (!header) return { mimeType: '', charset: null };
  const [type, ...params] = header.split(';');
  let charset: string | null = null;
  for (const p of params) {
    const [k, v] = p.split('=');
    if (k?.trim().toLowerCase() === 'charset' && v) charset = v.trim().replace(/^"|"$/g, '').toLowerCase();
  }
  return { mimeType: (type ?? '').trim().toLowerCase(), charset };
}
