"""Your own graph from CSV or JSONL files (format in README, "Loading your own graph").

Nodes:          JSONL ``{"id": "...", "labels": ["Label", ...], "properties": {...}}``
                CSV   columns ``id``, ``labels`` (``;``-separated), other columns are properties;
                      a header ``year:int`` / ``score:float`` / ``flag:bool`` / ``tags:list``
                      converts the column.
Relationships:  JSONL ``{"source": "...", "target": "...", "type": "...", "properties": {...}}``
                CSV   columns ``source``, ``target``, ``type``, other columns are properties.

Every malformed row is reported as ``file:line: what is wrong``."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError, field_validator

from graphraft.errors import InputFileError
from graphraft.graph.records import ENTITY_LABEL, NodeRecord, RelationshipRecord

Scalar = str | int | float | bool
PropertyValue = Scalar | list[Scalar]


class NodeRow(BaseModel):
    id: str = Field(min_length=1)
    labels: list[str] = Field(min_length=1)
    properties: dict[str, PropertyValue] = {}

    @field_validator("labels", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @field_validator("labels")
    @classmethod
    def _no_empty_labels(cls, value: list[str]) -> list[str]:
        if any(not label.strip() for label in value):
            raise ValueError("labels cannot be empty strings")
        if ENTITY_LABEL in value:
            raise ValueError(f"the label {ENTITY_LABEL} is reserved")
        return [label.strip() for label in value]


class RelationshipRow(BaseModel):
    source: str = Field(min_length=1)
    target: str = Field(min_length=1)
    type: str = Field(min_length=1)
    properties: dict[str, PropertyValue] = {}


_CONVERTERS: dict[str, Callable[[str], Any]] = {
    "string": str,
    "int": int,
    "float": float,
    "bool": lambda v: {"true": True, "false": False, "1": True, "0": False}[v.strip().lower()],
    "list": lambda v: [item for item in v.split(";") if item],
}


def _describe(error: ValidationError) -> str:
    first = error.errors()[0]
    where = ".".join(str(p) for p in first["loc"])
    return f"{where}: {first['msg']}" if where else first["msg"]


def jsonl_rows(path: Path) -> Iterator[tuple[int, dict]]:
    """(line number, object) for each non-empty line of a JSONL file; errors name file:line."""
    for number, line in enumerate(_open(path), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputFileError(f"{path}:{number}: invalid JSON: {exc.msg}") from None
        if not isinstance(row, dict):
            raise InputFileError(f"{path}:{number}: expected a JSON object")
        yield number, row


def _csv_rows(path: Path, fixed: tuple[str, ...]) -> Iterator[tuple[int, dict]]:
    reader = csv.reader(_open(path))
    try:
        header = next(reader)
    except StopIteration:
        raise InputFileError(f"{path}: empty file, expected a header row") from None
    missing = [name for name in fixed if name not in header]
    if missing:
        raise InputFileError(f"{path}:1: header lacks column(s) {', '.join(missing)}")
    columns = []
    for name in header:
        key, _, kind = name.partition(":")
        if kind and kind not in _CONVERTERS:
            raise InputFileError(f"{path}:1: unknown column type {kind!r} in {name!r}")
        columns.append((key, _CONVERTERS[kind or "string"]))
    for cells in reader:
        number = reader.line_num
        if not any(cell.strip() for cell in cells):
            continue
        if len(cells) != len(header):
            raise InputFileError(f"{path}:{number}: expected {len(header)} columns, found {len(cells)}")
        row: dict[str, Any] = {"properties": {}}
        for (key, convert), cell in zip(columns, cells):
            if key in fixed:
                row[key] = cell.split(";") if key == "labels" else cell
            elif cell != "":
                try:
                    row["properties"][key] = convert(cell)
                except (ValueError, KeyError):
                    raise InputFileError(f"{path}:{number}: cannot read {cell!r} as column {key!r}") from None
        yield number, row


def _open(path: Path):
    if not path.exists():
        raise InputFileError(f"{path}: file not found")
    if not path.is_file():
        raise InputFileError(f"{path}: not a file")
    try:
        with path.open(encoding="utf-8", newline="") as handle:
            yield from handle
    except UnicodeDecodeError as exc:
        raise InputFileError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise InputFileError(f"{path}: cannot read: {exc.strerror}") from None


def _rows(path: Path, fixed: tuple[str, ...]) -> Iterator[tuple[int, dict]]:
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson", ".json"):
        return jsonl_rows(path)
    if suffix in (".csv", ".tsv"):
        return _csv_rows(path, fixed)
    raise InputFileError(f"{path}: unknown format; use .csv or .jsonl")


def read_nodes(path: Path) -> list[NodeRecord]:
    path = Path(path)
    nodes, seen = [], {}
    for number, row in _rows(path, ("id", "labels")):
        try:
            parsed = NodeRow.model_validate(row)
        except ValidationError as exc:
            raise InputFileError(f"{path}:{number}: {_describe(exc)}") from None
        if parsed.id in seen:
            raise InputFileError(f"{path}:{number}: duplicate node id {parsed.id!r} (first on line {seen[parsed.id]})")
        seen[parsed.id] = number
        nodes.append(NodeRecord(parsed.id, tuple(parsed.labels), dict(parsed.properties)))
    return nodes


def read_relationships(path: Path) -> list[RelationshipRecord]:
    path = Path(path)
    rels = []
    for number, row in _rows(path, ("source", "target", "type")):
        try:
            parsed = RelationshipRow.model_validate(row)
        except ValidationError as exc:
            raise InputFileError(f"{path}:{number}: {_describe(exc)}") from None
        rels.append(RelationshipRecord(parsed.source, parsed.target, parsed.type, dict(parsed.properties)))
    return rels
