#!/usr/bin/env python3
"""Rewrites the configuration table in docs/operations.md from config/galleryd.example.toml
(which `galleryd check-config --defaults` generates), so the guide never drifts from the code."""
import re, pathlib
root = pathlib.Path(__file__).resolve().parent.parent
rows, doc = [], None
for line in (root / "config/galleryd.example.toml").read_text().splitlines():
    m = re.match(r"# (.*) \(env (\w+)\)$", line)
    if m:
        doc = m.groups()
        continue
    m = re.match(r"#? ?(\w+) = (.*)$", line)
    if m and doc:
        d = m.group(2)
        d = "none" if d.startswith("(not set)") else "number of cores" if d.startswith("<") else f"`{d}`"
        rows.append(f"| `{m.group(1)}` | `{doc[1]}` | {d} | {doc[0]} |")
        doc = None
table = "| key | environment variable | default | meaning |\n|---|---|---|---|\n" + "\n".join(rows) + "\n"
guide = root / "docs/operations.md"
text = guide.read_text()
text = re.sub(r"\| key \| environment variable \|.*?\n\n", table + "\n", text, count=1, flags=re.S)
guide.write_text(text)
