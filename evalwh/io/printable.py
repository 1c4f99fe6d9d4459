"""Text from files made safe to print: control characters shown, never sent.

An id, a judge's name or an ir_metadata block comes from someone else's file. Printed as it
is, an ESC (``\\x1b``) starts a terminal escape sequence (colours, a changed window title, a
cleared screen, a hidden line), a carriage return overwrites what came before, a line break
splits a Markdown table row, and ``<script>`` in a Markdown file runs where the Markdown is
shown as HTML. evalwh refuses control characters in the ids it is given
(:data:`CONTROL`, :func:`evalwh.store.ingest.frames.check_name`) and escapes them, wherever
they came from, on every terminal and Markdown output: :func:`terminal` for text printed to
a terminal or a plain-text table, :func:`markdown` for a Markdown cell or sentence.
"""

from __future__ import annotations

import re

CONTROL = re.compile("[\\x00-\\x1f\\x7f-\\x9f\\u061c\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069\\u2028\\u2029]")
"""Control characters: C0 (tab and line breaks included), DEL, C1, and Unicode's direction
overrides and isolates (which reorder what a terminal shows: "Trojan Source") and its line and
paragraph separators."""

FILE_CONTROL = re.compile("[\\x01-\\x08\\x0e-\\x1f\\x7f-\\x9f\\u061c\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069\\u2028\\u2029]")
"""The control characters a line of a run or qrels file may not hold: :data:`CONTROL` but the
field separators and line breaks (tab, vertical tab, form feed, ``\\r``, ``\\n``) and NUL, which the
readers refuse on their own. No topic or document id may hold one (an ESC would reach every
terminal that prints the id), and no other field holds one on a legal line either."""

_TAG_START = re.compile(r"<(?=[A-Za-z/!?])")
"""A ``<`` that could open an HTML tag, comment or declaration (``<script``, ``</``, ``<!--``);
``<<`` and ``< (`` stay as they are."""


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal(text: object) -> str:
    """``text`` with every control character written as its escape (``\\x1b``, ``\\n``, ``\\u202e``).

    Examples:
        >>> terminal("run\\x1b[31mred"), terminal("a\\nb"), terminal("bm25")
        ('run\\\\x1b[31mred', 'a\\\\x0ab', 'bm25')
    """
    value = str(text)
    return CONTROL.sub(_escaped, value) if CONTROL.search(value) else value


def markdown(text: object, *, cell: bool = True) -> str:
    """``text`` for Markdown: control characters escaped (a line break cannot split a table
    row), a ``<`` that could open an HTML tag as ``&lt;`` (no tag in a run id or a judge's
    name is ever HTML where the Markdown is shown), and ``|`` escaped for a table ``cell``.

    Examples:
        >>> markdown("<script>alert(1)</script>|x\\ny"), markdown("<< (AP)")
        ('&lt;script>alert(1)&lt;/script>\\\\|x\\\\x0ay', '<< (AP)')
    """
    out = _TAG_START.sub("&lt;", terminal(text))
    return out.replace("|", "\\|") if cell else out
