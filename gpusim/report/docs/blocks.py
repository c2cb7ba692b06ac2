"""Where the generated documents are, and the `<!-- generated:KEY -->` blocks inside them."""
from __future__ import annotations

import re
from pathlib import Path


PRESET = "H200"                                   # the preset whose values the tables give
MODEL_MD = Path("docs/model.md")
VALIDATION_MD = Path("docs/validation.md")
README_MD = Path("README.md")
VALIDATION_PNG = Path("docs/img/validation.png")     # README.md's figure, drawn from VALIDATION_MD
WRITE_COMMAND = "python3 -m gpusim.report.docs --write --validation"

BLOCK = re.compile(r"<!-- generated:(?P<key>[\w:.-]+) -->\n(?P<body>.*?)<!-- end generated -->", re.S)


# blocks in a markdown file

def read_blocks(text: str) -> dict[str, str]:
    return {m.group("key"): m.group("body") for m in BLOCK.finditer(text)}


def replace_blocks(text: str, bodies: dict[str, str]) -> str:
    """`text` with the body of every block named in `bodies` replaced (the others kept as they are)."""
    def sub(m):
        key = m.group("key")
        body = bodies.get(key, m.group("body"))
        return f"<!-- generated:{key} -->\n{body}<!-- end generated -->"
    return BLOCK.sub(sub, text)


def stale_blocks(text: str, bodies: dict[str, str], where: str) -> list[str]:
    """Why the generated blocks of `text` (file `where`) differ from `bodies`: one line each."""
    have = read_blocks(text)
    out = [f"{where}: block {k} is stale" for k in bodies if k in have and have[k] != bodies[k]]
    out += [f"{where}: no block {k} (add `<!-- generated:{k} -->` and `<!-- end generated -->` where it belongs)"
            for k in bodies if k not in have]
    out += [f"{where}: block {k} has no generator" for k in have if k not in bodies]
    counts = {k: len(re.findall(rf"<!-- generated:{re.escape(k)} -->", text)) for k in bodies}
    out += [f"{where}: block {k} appears {n} times" for k, n in counts.items() if n > 1]
    return out
