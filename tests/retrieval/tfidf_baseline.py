"""A plain TF-IDF baseline on the retrieval set, for comparison with
arb:semantic-search (docs/PERFORMANCE.md): each node is its description
plus its symbol names split into words; words are lowercased runs of
letters and digits, Chinese and Japanese runs become their characters and
character pairs; no stemming, no code, no translations. Nodes are ranked
by the cosine of (1 + log tf) x idf vectors. Queries are split into dev
and held-out exactly as evaluate.scm does, and scored the same way.

Usage: python3 tests/retrieval/tfidf_baseline.py
"""
import math
import os
import re
from collections import Counter, defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
WORD = re.compile(r"[a-z0-9]+")


def terms(text):
    text = text.lower()
    out = WORD.findall(CJK.sub(" ", text))
    for run in CJK.findall(text):
        out.extend(run)
        out.extend(run[i : i + 2] for i in range(len(run) - 1))
    return out


def read_nodes():
    text = open(os.path.join(HERE, "nodes.scm"), encoding="utf-8").read()
    nodes = []
    for key, names, desc in re.findall(r'^\((\S+) "\w+" \(([^)]*)\)\n "([^"]*)"', text, re.M):
        nodes.append((key, desc + " " + " ".join(re.findall(r'"([^"]*)"', names))))
    return nodes


def read_queries():
    text = open(os.path.join(HERE, "queries.scm"), encoding="utf-8").read()
    return [
        (kind, lang, q, rel.split())
        for kind, lang, q, rel in re.findall(r'^\((\S+) (\w+) "([^"]*)" \(([^)]*)\)\)', text, re.M)
    ]


def main():
    nodes = read_nodes()
    docs = [Counter(terms(t)) for _, t in nodes]
    df = Counter(t for d in docs for t in d)
    n = len(docs)
    idf = {t: math.log((n + 1) / (c + 1)) + 1 for t, c in df.items()}

    def vector(counts):
        v = {t: (1 + math.log(c)) * idf[t] for t, c in counts.items() if t in idf}
        norm = math.sqrt(sum(x * x for x in v.values())) or 1.0
        return {t: x / norm for t, x in v.items()}

    vectors = [vector(d) for d in docs]
    keys = [k for k, _ in nodes]
    rows = []
    seen = Counter()
    for kind, lang, q, rel in read_queries():
        split = "test" if seen[kind] % 3 == 2 else "dev"
        seen[kind] += 1
        qv = vector(Counter(terms(q)))
        scores = [(sum(x * v.get(t, 0.0) for t, x in qv.items()), i) for i, v in enumerate(vectors)]
        top = [keys[i] for s, i in sorted(scores, key=lambda p: (-p[0], p[1])) if s > 0][:10]
        ranks = [top.index(r) + 1 if r in top else None for r in rel]
        found = [r for r in ranks if r]
        rec = lambda k: len([r for r in found if r <= k]) / min(k, len(rel))  # noqa: E731
        rows.append((kind, lang, split, rec(1), rec(5), 1 / min(found) if found else 0.0))
        if q == "排序算法":
            print("排序算法: sorting nodes in the top 6: %d of 6" % len([r for r in found if r <= 6]))
    names = {
        "keyword": "keyword, same language",
        "paraphrase": "paraphrase, no shared words",
        "symbol": "symbol-name queries",
        "zh-en": "Chinese query, English descriptions",
        "en-zh": "English query, Chinese descriptions",
    }
    for split, title in (("dev", "dev:"), ("test", "test (held out):"), (None, "all:")):
        print(title)
        print("| queries | recall@1 | recall@5 | MRR@10 |\n|---|---|---|---|")
        groups = defaultdict(list)
        for r in rows:
            if split is None or r[2] == split:
                groups["all"].append(r)
                groups[names[r[0]]].append(r)
                groups["Chinese queries" if r[1] == "zh" else "English queries"].append(r)
        order = ["all"] + list(names.values()) + ["Chinese queries", "English queries"]
        for g in order:
            rs = groups[g]
            if rs:
                avg = lambda i: sum(r[i] for r in rs) / len(rs)  # noqa: E731
                print("| %s (%d) | %.2f | %.2f | %.2f |" % (g, len(rs), avg(3), avg(4), avg(5)))
        print()


if __name__ == "__main__":
    main()
