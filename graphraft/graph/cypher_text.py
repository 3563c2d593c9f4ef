"""Safe spelling of names and values inside Cypher text.

Values normally travel as parameters; these helpers exist for the places where Cypher
has no parameters (labels, relationship types) and for the renderer, whose queries are
model targets and must therefore be self-contained text.
"""

from __future__ import annotations

import re

_PLAIN_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def quote_identifier(name: str) -> str:
    """A label, type or property key as Cypher text: bare when plain, else back-quoted."""
    if not name:
        raise ValueError("an identifier cannot be empty")
    if _PLAIN_IDENTIFIER.match(name):
        return name
    return "`" + name.replace("`", "``") + "`"


def string_literal(value: str) -> str:
    """A double-quoted Cypher string literal with backslashes and quotes escaped."""
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    escaped = escaped.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
    return f'"{escaped}"'


def label_expression(labels: tuple[str, ...] | list[str]) -> str:
    """``:A:B`` for a node pattern."""
    return "".join(":" + quote_identifier(label) for label in labels)
