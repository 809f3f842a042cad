"""The ```hcl blocks of a Markdown text (for scripts/provider-docs-examples)."""

import re

OPEN = re.compile(rb"^([ \t]*)```hcl[ \t]*\r?\n$")


def blocks(text: bytes):
    """The ```hcl blocks of a Markdown text, in order, as bytes: the lines between the
    fences, each with its newline, indentation included. A fence may be indented (inside a
    list item); the closing one has the same indentation."""
    lines = text.splitlines(keepends=True)
    i = 0
    while i < len(lines):
        m = OPEN.match(lines[i])
        if not m:
            i += 1
            continue
        close = re.compile(rb"^" + re.escape(m.group(1)) + rb"```[ \t]*\r?\n?$")
        j = i + 1
        while j < len(lines) and not close.match(lines[j]):
            j += 1
        if j == len(lines):
            raise SystemExit(f"unclosed ```hcl block at line {i + 1}")
        yield b"".join(lines[i + 1 : j])
        i = j + 1
