// The playground's service worker: after one visit, the page and the engine
// open without a network. The build (web/build.mjs) fills in VERSION (a hash
// of every file) and FILES; a rebuilt playground has a new VERSION, so the
// browser installs this worker again, which keeps the new files and drops
// the old ones.
//
// Requests for the kept files are answered from the cache; anything else
// goes to the network.

const VERSION = '__VERSION__';
const FILES = ['__FILES__'];
const CACHE = `arbores-playground-${VERSION}`;

self.addEventListener('install', (event) => {
  event.waitUntil((async () => {
    const cache = await caches.open(CACHE);
    await cache.addAll(FILES.map((f) => new Request(f, { cache: 'reload' })));
    await self.skipWaiting();
  })());
});

self.addEventListener('activate', (event) => {
  event.waitUntil((async () => {
    for (const name of await caches.keys()) {
      if (name.startsWith('arbores-playground-') && name !== CACHE) await caches.delete(name);
    }
    await self.clients.claim();
  })());
});

self.addEventListener('fetch', (event) => {
  const request = event.request;
  if (request.method !== 'GET' || new URL(request.url).origin !== self.location.origin) return;
  event.respondWith((async () => {
    const cache = await caches.open(CACHE);
    // The page itself under any fragment or query ("./" is kept).
    const url = new URL(request.url);
    const key = request.mode === 'navigate' && url.pathname.endsWith('/') ? new URL('./', self.registration.scope).href : request;
    const hit = await cache.match(key, { ignoreSearch: request.mode === 'navigate' });
    if (hit) return hit;
    return fetch(request);
  })());
});
