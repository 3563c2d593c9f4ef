"""Which property names a node: what anchoring matches, names are embedded from, and answers
and evidence show.

Graphs name their nodes in properties of their own: ``name`` (a Person), ``title`` (a Movie),
``companyName`` or ``productName`` (Northwind). The rule, per label, over the label's keys:

1. the property given for that label (``GRAPHRAFT_NAME_PROPERTIES='{"Employee": "lastName"}'``);
2. else ``name``, then ``title``;
3. else the label's own ``<label>Name`` (``productName`` for ``Product``, ``categoryName`` for
   ``Category``), in any case;
4. else the first key, in alphabetical order, that ends in ``name`` (``companyName``,
   ``contactName``: ``companyName``), in any case;
5. else none: nodes of that label are reached by relationships and by ``id``, not by name.

A node with several labels takes the name of the first (in alphabetical order) whose rule
gives a value on that node; a node whose labels give none keeps the ``name``/``title`` fallback.
Its name, as text, is kept in ``name_text`` beside the normalised ``name_norm`` key (both
GraphRAFT's own, hidden from evidence), so every reader takes the same name without knowing the
rule.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from graphraft.graph.records import OWN_PROPERTIES

#: tried in this order before the label's own ``<label>Name``
GENERIC = ("name", "title")


class NamingRule:
    """The rule above, with the per-label choices a user gave (``overrides``)."""

    def __init__(self, overrides: Mapping[str, str] | None = None):
        self.overrides = dict(overrides or {})

    def property_for(self, label: str, keys: Iterable[str]) -> str | None:
        """The property that names nodes of ``label``, given the keys they carry."""
        if label in self.overrides:
            return self.overrides[label]
        keys = sorted(set(keys) - OWN_PROPERTIES)
        for key in GENERIC:
            if key in keys:
                return key
        own = f"{label}name".lower()
        for key in keys:
            if key.lower() == own:
                return key
        return next((key for key in keys if key.lower().endswith("name")), None)

    def name_of(self, labels: Iterable[str], properties: Mapping[str, Any]) -> str | None:
        """The name of one node, as text (None: the node has none)."""
        for label in sorted(labels):
            key = self.property_for(label, properties)
            if key is not None:
                text = _text(properties.get(key))
                if text is not None:
                    return text
        for key in GENERIC:
            text = _text(properties.get(key))
            if text is not None:
                return text
        return None

    def labels_named(self, keys_by_label: Mapping[str, Iterable[str]]) -> dict[str, str | None]:
        """For a schema: each label's naming property (None: its nodes have no name)."""
        return {label: self.property_for(label, keys) for label, keys in sorted(keys_by_label.items())}


def _text(value: Any) -> str | None:
    if value is None or isinstance(value, (bool, list, dict)):
        return None
    text = str(value).strip()
    return text or None
