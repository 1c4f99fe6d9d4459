"""Assemble README.md: the parts in docs/readme/*.md go between the README's part markers.

Each feature keeps its documentation in its own file (docs/readme/NN_topic.md); this script
puts them, in file-name order, between ``<!-- parts:start -->`` and ``<!-- parts:end -->``.
tests/test_docs.py fails when README.md is not what this script would write.

Usage: python docs/assemble_readme.py [--check]
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
START, END = "<!-- parts:start -->", "<!-- parts:end -->"


def assembled(readme: str) -> str:
    """README text with the parts block rebuilt from docs/readme/."""
    head, _, rest = readme.partition(START)
    _, _, tail = rest.partition(END)
    parts = [p.read_text().strip() + "\n" for p in sorted((ROOT / "docs" / "readme").glob("*.md"))]
    return f"{head}{START}\n\n" + "\n".join(parts) + f"\n{END}{tail}"


def main() -> int:
    path = ROOT / "README.md"
    current = path.read_text()
    if START not in current or END not in current:
        print(f"{path}: no {START} / {END} markers", file=sys.stderr)
        return 1
    new = assembled(current)
    if "--check" in sys.argv:
        if new != current:
            print("README.md is out of date: run python docs/assemble_readme.py", file=sys.stderr)
            return 1
        return 0
    path.write_text(new)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
