"""Every docstring example of the package and the CLI runs and prints what it says (doctest).

The examples are documentation (the API pages render them); one that no longer holds misleads
a reader silently, as two did (a pool id renamed, an effect size from an older example).
"""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

import evalwh

ROOT = Path(evalwh.__file__).parent
MODULES = sorted(
    ".".join(("evalwh", *path.relative_to(ROOT).with_suffix("").parts)).removesuffix(".__init__")
    for path in ROOT.rglob("*.py")
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for test in doctest.DocTestFinder().find(module, name):
        runner.run(test)
    assert runner.failures == 0, f"{name}: {runner.failures} docstring example(s) print otherwise (output above)"
