"""Command-line flags built from a stage's configuration (TRL style): each field of the pydantic
model is one flag, with the field's description as its help, so a setting is declared once and is
both a YAML key and a flag. A flag left out is None and leaves the file's (or the default) value.

Why this is written here and not taken from pydantic-settings (``CliSettingsSource``,
``YamlConfigSettingsSource``) or TRL (``TrlParser``): both of those parse with argparse, while
every GraphRAFT command is a typer (click) command; adopting them would mean a second parser
beside typer for six commands, two help formats, and argparse's own exits in place of the
one-line errors of ``run_guarded``. The YAML source takes its file from the class's
configuration, so the path a ``--config`` flag gives at run time needs plumbing of its own, and
its validation errors do not name the file. What is left to write is small: flags from the fields
(here, ~60 lines) and "flag > file > default, dotted keys for nested fields, errors naming the
file and the field" (``StageConfig.from_yaml``, ~30 lines), both tested in tests/test_configs.py."""

from __future__ import annotations

import functools
import inspect
import types
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal, Optional

import typer
from pydantic import BaseModel

SCALARS = (bool, int, float, str, Path)


def _flag_type(annotation: Any) -> Any:
    """The type a flag takes for a field's annotation, or None when it has no flag form."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        inner = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
        return _flag_type(inner[0]) if len(inner) == 1 else None
    if origin is Literal:
        return str  # the model checks the choice
    if origin is list:
        (item,) = typing.get_args(annotation) or (str,)
        if item in SCALARS:
            return list[item]
        # a list of small models written as text on the command line (TrainConfig.data's PATH@SHARE)
        return list[str] if isinstance(item, type) and issubclass(item, BaseModel) else None
    return annotation if annotation in SCALARS else None


def config_fields(model: type[BaseModel], prefix: str = "") -> list[tuple[str, Any, str]]:
    """(dotted key, flag type, help) for every field, nested models' fields as ``parent.field``."""
    found = []
    for name, field in model.model_fields.items():
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            found += config_fields(annotation, f"{prefix}{name}.")
            continue
        kind = _flag_type(annotation)
        if kind is None:
            raise TypeError(f"{model.__name__}.{name}: no flag form for {annotation!r}")
        help_text = field.description or ""
        if field.default is not None and not field.is_required() and field.default != "":
            help_text = f"{help_text} [default: {field.default}]".strip()
        found.append((f"{prefix}{name}", kind, help_text))
    return found


def flag_name(key: str) -> str:
    return "--" + key.replace(".", "-").replace("_", "-")


def with_config_flags(model: type[BaseModel], skip: tuple[str, ...] = ()) -> Callable:
    """Give a typer command one flag per field of ``model`` (but those in ``skip`` and those the
    command declares itself). The command receives the flags that were given as
    ``overrides={dotted key: value}``."""

    def decorate(command: Callable) -> Callable:
        own = inspect.signature(command, eval_str=True)
        declared = {name for name in own.parameters if name != "overrides"}
        params = [p for name, p in own.parameters.items() if name != "overrides"]
        generated: dict[str, str] = {}  # parameter name -> dotted key
        for key, kind, help_text in config_fields(model):
            name = key.replace(".", "__")
            if key in skip or name in declared:
                continue
            flag = flag_name(key)
            if kind is bool:  # both ways: a file's `true` can be turned off from the command line
                flag = f"{flag}/--no-{flag[2:]}"
            option = typer.Option(flag, help=help_text, show_default=False)
            params.append(
                inspect.Parameter(
                    name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=Annotated[Optional[kind], option]
                )
            )
            generated[name] = key

        @functools.wraps(command)
        def wrapper(**kwargs):
            overrides = {generated[name]: kwargs.pop(name) for name in list(kwargs) if name in generated}
            return command(**kwargs, overrides={k: v for k, v in overrides.items() if v is not None})

        wrapper.__signature__ = own.replace(parameters=params)
        wrapper.__annotations__ = {}
        return wrapper

    return decorate


# Options several commands share, declared once.
ConfigFileOption = Annotated[Optional[Path], typer.Option("--config", help="A YAML file of this stage's settings.")]
ModelOption = Annotated[Optional[str], typer.Option(help="Base model: 'bundled', a folder or a hub id.")]
L1AdapterOption = Annotated[Optional[Path], typer.Option(help="Trained L1 adapter folder.")]
L2AdapterOption = Annotated[Optional[Path], typer.Option(help="Trained L2 adapter folder.")]
ExtractorOption = Annotated[Optional[str], typer.Option(help="auto | marked | lexical | openai | local.")]
