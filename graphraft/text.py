"""Name normalisation shared by loading (the ``name_norm`` property) and anchoring."""

from __future__ import annotations

import re
import unicodedata

_SPACES = re.compile(r"\s+")


def normalize_name(name: str) -> str:
    """Case-, accent- and spacing-insensitive key for exact name matching."""
    decomposed = unicodedata.normalize("NFKD", name)
    stripped = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return _SPACES.sub(" ", stripped.casefold()).strip()
