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
from graphraft.graph.records import (
    OWN_PROPERTIES,
    NodeRecord,
    RelationshipRecord,
    is_reserved_label,
)

Scalar = str | int | float | bool
PropertyValue = Scalar | list[Scalar]

#: properties GraphRAFT writes on every node itself; a file setting them would break
#: identity (``id`` is the row's own field), name lookup or the vector index
RESERVED_PROPERTIES = OWN_PROPERTIES


def check_name(kind: str, name: str) -> str:
    """A label, relationship type or property key that both databases can spell."""
    if not name.strip():
        raise ValueError(f"{kind} cannot be empty")
    if "`" in name:
        raise ValueError(f"{kind} {name!r} contains a backtick, which a Cypher name cannot hold in both databases")
    if any(ord(ch) < 32 for ch in name):
        raise ValueError(f"{kind} {name!r} contains a control character")
    return name.strip()


def _check_keys(properties: dict[str, Any], reserved: frozenset[str] = frozenset()) -> dict[str, Any]:
    for key in properties:
        check_name("property key", key)
        if key in reserved:
            raise ValueError(f"property {key!r} is reserved: GraphRAFT sets it on every node itself")
    return properties


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
    def _valid_labels(cls, value: list[str]) -> list[str]:
        labels = [check_name("a label", label) for label in value]
        for label in labels:
            if is_reserved_label(label):
                raise ValueError(f"the label {label} is reserved (GraphRAFT's own labels begin and end with __)")
        return labels

    @field_validator("properties")
    @classmethod
    def _valid_keys(cls, value: dict[str, Any]) -> dict[str, Any]:
        return _check_keys(value, RESERVED_PROPERTIES)


class RelationshipRow(BaseModel):
    source: str = Field(min_length=1)
    target: str = Field(min_length=1)
    type: str = Field(min_length=1)
    properties: dict[str, PropertyValue] = {}

    @field_validator("type")
    @classmethod
    def _valid_type(cls, value: str) -> str:
        return check_name("a relationship type", value)

    @field_validator("properties")
    @classmethod
    def _valid_keys(cls, value: dict[str, Any]) -> dict[str, Any]:
        return _check_keys(value)


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
    message = first["msg"].removeprefix("Value error, ")
    return f"{where}: {message}" if where else message


def text_lines(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, line without its newline) for each non-blank line of a text file; a missing,
    unreadable or non-UTF-8 file is an error naming it."""
    for number, line in enumerate(_open(Path(path)), 1):
        if line.strip():
            yield number, line.rstrip("\r\n")


def jsonl_rows(path: Path) -> Iterator[tuple[int, dict]]:
    """(line number, object) for each non-empty line of a JSONL file; errors name file:line."""
    for number, line in text_lines(path):
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
    repeated = sorted({name for name in header if header.count(name) > 1})
    if repeated:
        raise InputFileError(f"{path}:1: column(s) {', '.join(repeated)} appear more than once")
    columns = []
    for name in header:
        key, _, kind = name.partition(":")
        if kind and kind not in _CONVERTERS:
            raise InputFileError(f"{path}:1: unknown column type {kind!r} in {name!r}")
        if key not in fixed:
            try:
                _check_keys({key: None}, RESERVED_PROPERTIES if "labels" in fixed else frozenset())
            except ValueError as exc:
                raise InputFileError(f"{path}:1: column {name!r}: {exc}") from None
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
        # utf-8-sig: spreadsheet programs begin their CSV with a byte-order mark
        with path.open(encoding="utf-8-sig", newline="") as handle:
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
    if not nodes:
        raise InputFileError(f"{path}: no nodes in the file")
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
    if not rels:
        raise InputFileError(f"{path}: no relationships in the file")
    return rels
