// Share by URL: the editor's code in the fragment (`#code=...`), which never
// reaches a server. A page opened from such a link puts the code in the
// editor; it runs only when the person presses Run.

const PREFIX = '#code=';

/** The page's address with `code` in the fragment. */
export function shareUrl(code) {
  const url = new URL(window.location.href);
  url.hash = `code=${encodeURIComponent(code)}`;
  return url.toString();
}

/** The code in a fragment, or null when there is none (or it is malformed). */
export function sharedCode(hash) {
  if (!hash.startsWith(PREFIX)) return null;
  try {
    return decodeURIComponent(hash.slice(PREFIX.length));
  } catch {
    return null;
  }
}
