"""Makes a static embedder table smaller: fewer dimensions (the first D of
the PCA, which are ordered by variance), and only the most probable Latin
pieces and Chinese words. Single Chinese characters are all kept, so that
any Chinese text still segments. Translations to dropped entries go.

Deterministic: the same input table and options give the same bytes.
scripts/distill-embedder runs it after distill.py; on its own:

Usage: compact.py IN OUT [--dim D] [--latin N] [--han-words M]
"""
import argparse
import os
import struct
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from distill import HAN, LATIN, WORD_START, write_table  # noqa: E402


def read_table(path):
    b = open(path, "rb").read()
    if b[:8] != b"ARBEMB01":
        sys.exit("%s: not an Arbores embedder table" % path)
    dim, nv, ne, li = struct.unpack_from("<4I", b, 8)
    p = 24
    info = b[p : p + li].decode("utf-8")
    p += li
    sl = struct.unpack_from("<I", b, p)[0]
    p += 4
    strings = b[p : p + sl]
    p += sl
    offs = struct.unpack_from("<%dI" % (ne + 1), b, p)
    p += 4 * (ne + 1)
    logp = struct.unpack_from("<%df" % ne, b, p)
    p += 4 * ne
    vidx = struct.unpack_from("<%dI" % ne, b, p)
    p += 4 * ne
    scales = np.frombuffer(b, dtype="<f4", count=nv, offset=p)
    p += 4 * nv
    codes = np.frombuffer(b, dtype=np.int8, count=nv * dim, offset=p).reshape(nv, dim)
    p += nv * dim
    k = struct.unpack_from("<I", b, p)[0]
    p += 4
    ids = np.frombuffer(b, dtype="<u4", count=nv * k, offset=p).reshape(nv, k)
    p += 4 * nv * k
    sims = np.frombuffer(b, dtype=np.uint8, count=nv * k, offset=p).reshape(nv, k)
    names = [strings[offs[i] : offs[i + 1]].decode("utf-8") for i in range(ne)]
    entries = [(names[i], logp[i], vidx[i]) for i in range(ne)]
    vectors = codes.astype(np.float32) * scales[:, None]
    return info, entries, vectors, ids, sims, k


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("input")
    ap.add_argument("out")
    ap.add_argument("--dim", type=int, default=24)
    ap.add_argument("--latin", type=int, default=1000000, help="most probable Latin entries kept")
    ap.add_argument("--han-words", type=int, default=1000000, help="most probable Chinese words kept")
    a = ap.parse_args()
    info, entries, vectors, ids, sims, k = read_table(a.input)
    names = [e[0] for e in entries]

    def bare(s):
        return s[1:] if s.startswith(WORD_START) else s

    latin = [e for e in entries if LATIN.match(bare(e[0]) or "-")]
    han = [e for e in entries if HAN.match(bare(e[0]) or "-")]
    chars = [e for e in han if len(bare(e[0])) == 1]
    words = [e for e in han if len(bare(e[0])) > 1]
    by_prob = lambda es: sorted(es, key=lambda e: (-e[1], e[0]))  # noqa: E731
    kept = by_prob(latin)[: a.latin] + chars + by_prob(words)[: a.han_words]
    # Keep a word's other spelling (with and without the start mark) with it.
    kept_bare = {bare(e[0]) for e in kept}
    kept = [e for e in entries if bare(e[0]) in kept_bare]
    old_vectors = sorted({e[2] for e in kept})
    renumber = {v: i for i, v in enumerate(old_vectors)}
    kept_names = {e[0] for e in kept}
    new_entries = [(s, lp, renumber[v]) for s, lp, v in kept]
    new_vectors = vectors[old_vectors, : a.dim]
    neighbours = []
    for v in old_vectors:
        ns = []
        for j in range(k):
            t = int(ids[v, j])
            if t != 0xFFFFFFFF and names[t] in kept_names:
                ns.append((names[t], sims[v, j] / 255.0))
        neighbours.append(ns)
    note = " Compacted by scripts/embedder/compact.py to %d entries, %d vectors of %d dimensions." % (
        len(new_entries), len(new_vectors), a.dim)
    write_table(a.out, info + note, a.dim, new_entries, new_vectors, neighbours, k)
    print("%s: %d bytes;%s" % (a.out, os.path.getsize(a.out), note), file=sys.stderr)


if __name__ == "__main__":
    main()
