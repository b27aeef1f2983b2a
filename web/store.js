// The knowledge base in IndexedDB, as the worker keeps it.
//
// One database, "arbores" (version 1), with two object stores:
//   blobs   key: a blob's name, 64 hex digits   value: its bytes (Uint8Array)
//   refs    key: "current"                      value: the refs record (Uint8Array)
// Blobs are content-addressed and never change; the refs record names the
// newest reflog entry, from which the whole state is reachable. A save writes
// the new blobs and then the refs record in one readwrite transaction, so it
// lands whole or not at all. The transaction first checks that the stored
// refs record is still the one this worker loaded or last wrote: if another
// tab saved in between, nothing is written (a "conflict").
//
// Everything here is plain IndexedDB; what the bytes mean is the engine's
// business (Engine.exportNew/exportFull/importStored).

export const DB_NAME = 'arbores';
const DB_VERSION = 1;
const BLOBS = 'blobs';
const REFS = 'refs';
const REFS_KEY = 'current';
const DAMAGED_PREFIX = 'arbores-damaged-';

/** A failure with a kind the page can act on: "unavailable" (the database
 *  cannot be opened: nothing is read or written), "damaged" (it opens but its
 *  contents cannot be read), "conflict" or "write". */
export class StoreError extends Error {
  constructor(kind, message) {
    super(message);
    this.kind = kind;
  }
}

function request(r) {
  return new Promise((resolve, reject) => {
    r.onsuccess = () => resolve(r.result);
    r.onerror = () => reject(r.error);
  });
}

function finished(tx) {
  return new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve();
    tx.onabort = () => reject(tx.error || new Error('the transaction was aborted'));
    tx.onerror = () => reject(tx.error || new Error('the transaction failed'));
  });
}

function describe(e) {
  if (e instanceof Error || (e && typeof e.message === 'string')) {
    return e.name && e.name !== 'Error' ? `${e.name}: ${e.message}` : e.message;
  }
  return String(e);
}

/** Opens (creating if needed) a database with the two stores. */
export function openStore(name = DB_NAME) {
  return new Promise((resolve, reject) => {
    if (typeof indexedDB === 'undefined') {
      reject(new StoreError('unavailable', 'this browser offers no IndexedDB to this page'));
      return;
    }
    let r;
    try {
      r = indexedDB.open(name, DB_VERSION);
    } catch (e) {
      reject(new StoreError('unavailable', `IndexedDB cannot be opened: ${describe(e)}`));
      return;
    }
    r.onupgradeneeded = () => {
      const db = r.result;
      if (!db.objectStoreNames.contains(BLOBS)) db.createObjectStore(BLOBS);
      if (!db.objectStoreNames.contains(REFS)) db.createObjectStore(REFS);
    };
    r.onblocked = () => {
      // Only an older version held open elsewhere blocks an upgrade; version 1
      // is the first, so this does not happen today.
      console.warn(`store: opening ${name} waits for another tab to close it`);
    };
    r.onsuccess = () => {
      const db = r.result;
      if (!db.objectStoreNames.contains(BLOBS) || !db.objectStoreNames.contains(REFS)) {
        db.close();
        reject(new StoreError('unavailable', `the database "${name}" of this site is not the playground's: it lacks the object stores "${BLOBS}" and "${REFS}"`));
        return;
      }
      // A newer page that wants to upgrade the database gets it.
      db.onversionchange = () => db.close();
      resolve(db);
    };
    r.onerror = () => {
      // Never written to in these cases: a database of a newer playground, or
      // storage the browser refuses, is left as it is.
      const e = r.error;
      const why = e?.name === 'VersionError'
        ? `the database "${name}" was written by a newer version of the playground (${describe(e)})`
        : `IndexedDB cannot be opened: ${describe(e)}`;
      reject(new StoreError('unavailable', why));
    };
  });
}

/** Everything stored: `{refs, blobs: Map(hex -> bytes), count, bytes}`.
 *  `refs` is undefined when nothing was ever saved. */
export async function readStore(db) {
  let refs, keys, values;
  try {
    const tx = db.transaction([BLOBS, REFS], 'readonly');
    const done = finished(tx);
    [refs, keys, values] = await Promise.all([
      request(tx.objectStore(REFS).get(REFS_KEY)),
      request(tx.objectStore(BLOBS).getAllKeys()),
      request(tx.objectStore(BLOBS).getAll()),
      done,
    ]);
  } catch (e) {
    throw new StoreError('damaged', `the stored knowledge cannot be read: ${describe(e)}`);
  }
  const blobs = new Map();
  let bytes = 0;
  for (let i = 0; i < keys.length; i++) {
    blobs.set(keys[i], values[i]);
    bytes += values[i]?.byteLength ?? 0;
  }
  return { refs, blobs, count: keys.length, bytes };
}

function sameBytes(a, b) {
  if (a == null || b == null) return a == null && b == null;
  if (!(a instanceof Uint8Array) || !(b instanceof Uint8Array) || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Writes an export (`{blobs: [{hash, bytes}], refs}`): the blobs, then the
 *  refs record, in one transaction, if the stored refs record is still
 *  `expected` (undefined: nothing stored yet). */
export async function writeExport(db, exp, expected) {
  let tx;
  try {
    tx = db.transaction([BLOBS, REFS], 'readwrite', { durability: 'strict' });
  } catch (e) {
    throw new StoreError('write', `cannot start a transaction: ${describe(e)}`);
  }
  const done = finished(tx);
  done.catch(() => {}); // reported below, through `await done`
  try {
    const refsStore = tx.objectStore(REFS);
    const stored = await request(refsStore.get(REFS_KEY));
    if (!sameBytes(stored, expected)) {
      tx.abort();
      throw new StoreError('conflict',
        'the stored knowledge base was changed by another tab or window of this playground since this session loaded it');
    }
    const blobs = tx.objectStore(BLOBS);
    for (const { hash, bytes } of exp.blobs) blobs.put(bytes, hash);
    refsStore.put(exp.refs, REFS_KEY);
    await done;
  } catch (e) {
    if (e instanceof StoreError) throw e;
    throw new StoreError('write', describe(e));
  }
}

/** Copies every record of the database into a new one named
 *  "arbores-damaged-<time>", then empties the original. Returns the copy's
 *  name. Fails (changing nothing in the original) if the records cannot be
 *  read or copied. */
export async function moveAside(db) {
  let refKeys, refValues, blobKeys, blobValues;
  try {
    const tx = db.transaction([BLOBS, REFS], 'readonly');
    const done = finished(tx);
    [refKeys, refValues, blobKeys, blobValues] = await Promise.all([
      request(tx.objectStore(REFS).getAllKeys()),
      request(tx.objectStore(REFS).getAll()),
      request(tx.objectStore(BLOBS).getAllKeys()),
      request(tx.objectStore(BLOBS).getAll()),
      done,
    ]);
  } catch (e) {
    throw new StoreError('write', `the damaged records cannot be read to keep a copy: ${describe(e)}`);
  }
  const name = DAMAGED_PREFIX + new Date().toISOString().replace(/[:.]/g, '-');
  let copy;
  try {
    copy = await openStore(name);
    const tx = copy.transaction([BLOBS, REFS], 'readwrite', { durability: 'strict' });
    const done = finished(tx);
    for (let i = 0; i < refKeys.length; i++) tx.objectStore(REFS).put(refValues[i], refKeys[i]);
    for (let i = 0; i < blobKeys.length; i++) tx.objectStore(BLOBS).put(blobValues[i], blobKeys[i]);
    await done;
  } catch (e) {
    throw new StoreError('write', `a copy of the damaged records cannot be written to "${name}": ${describe(e)}`);
  } finally {
    copy?.close();
  }
  await clearStore(db);
  return name;
}

/** Deletes every record of both stores. */
export async function clearStore(db) {
  try {
    const tx = db.transaction([BLOBS, REFS], 'readwrite', { durability: 'strict' });
    const done = finished(tx);
    tx.objectStore(REFS).clear();
    tx.objectStore(BLOBS).clear();
    await done;
  } catch (e) {
    throw new StoreError('write', `the stored records cannot be deleted: ${describe(e)}`);
  }
}
