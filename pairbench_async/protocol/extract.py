"""Extracting the candidate's program from a chat reply.

Models wrap code in fences with assorted tags (```python, ```py, ```Python3, none),
forget the closing fence when a reply is cut off, add prose and example-output blocks
around it, or answer with bare code. The choice made here decides which program gets
evaluated, so it is deterministic and documented:

1. Fenced blocks are read line by line: an opening line of three or more backticks
   (or tildes) with an optional tag, closed by a line of at least as many of the same
   character; a fence left open runs to the end of the reply. The opening fence's
   indentation (a fence inside a list item) is removed from the block's lines.
   Blocks with only whitespace are ignored.
2. The last block tagged as Python (``python``, ``py``, ``python3``, ``py3``, any case)
   wins; else the last untagged block that parses as Python; else the last untagged
   block; else the last block with another tag that parses as Python.
3. With no fence at all, the whole reply is taken when it parses as Python and holds
   at least one real statement (not a lone name or constant, so a one-word reply like
   "Done" is not code).
4. Otherwise ``None``: the runner records that no code was found and evaluates the
   unchanged program.

Pure module: no I/O.
"""

from __future__ import annotations

import ast
import re
from typing import Final

__all__ = ["extract_code"]

_OPEN: Final = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<tag>[^\s`]*)[^`]*$")
_PYTHON_TAGS: Final = frozenset({"python", "py", "python3", "py3", "python2"})


def _blocks(text: str) -> list[tuple[str, str]]:
    """(lower-cased tag, body) of every fenced block, in order."""
    blocks: list[tuple[str, str]] = []
    lines = text.split("\n")
    i, n = 0, len(lines)
    while i < n:
        if not lines[i].lstrip(" \t").startswith(("```", "~~~")):
            i += 1
            continue
        opening = _OPEN.match(lines[i])
        if not opening:
            i += 1
            continue
        fence, tag = opening.group("fence"), opening.group("tag").lower()
        indent = len(opening.group("indent"))
        body: list[str] = []
        i += 1
        while i < n and not _closes(lines[i], fence[0], len(fence)):
            body.append(lines[i])
            i += 1
        i += 1
        code = "\n".join(_unindent(line, indent) for line in body).strip("\n")
        if code.strip():
            blocks.append((tag, code + "\n"))
    return blocks


def _closes(line: str, char: str, width: int) -> bool:
    """Whether ``line`` closes a fence of ``width`` ``char``s: at least as many of the same
    character, alone on the line but for spaces and tabs."""
    bare = line.strip(" \t")
    return len(bare) >= width and bare == char * len(bare)


def _unindent(line: str, width: int) -> str:
    """``line`` without up to ``width`` leading spaces (the opening fence's indentation)."""
    stripped = line.lstrip(" \t")
    return line[min(width, len(line) - len(stripped)) :]


def _parses(code: str) -> bool:
    try:
        ast.parse(code)
    except (SyntaxError, ValueError):
        return False
    return True


def _is_program(code: str) -> bool:
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return False
    return any(
        not (isinstance(node, ast.Expr) and isinstance(node.value, (ast.Name, ast.Constant)))
        for node in tree.body
    )


def extract_code(reply: str) -> str | None:
    """The program in ``reply`` (ending with a newline), or ``None`` if it holds none."""
    text = reply.replace("\r\n", "\n").replace("\r", "\n")
    blocks = _blocks(text)
    python = [code for tag, code in blocks if tag in _PYTHON_TAGS]
    if python:
        return python[-1]
    untagged = [code for tag, code in blocks if not tag]
    for code in reversed(untagged):
        if _parses(code):
            return code
    if untagged:
        return untagged[-1]
    for _tag, code in reversed(blocks):
        if _parses(code):
            return code
    if not blocks and _is_program(text.strip()):
        return text.strip("\n") + "\n"
    return None
