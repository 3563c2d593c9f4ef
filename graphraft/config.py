"""All configuration in one place: environment variables (``GRAPHRAFT_*`` and the
standard ``NEO4J_*``), an optional ``.env`` file, and CLI flags that override both."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import platformdirs
import yaml
from pydantic import AliasChoices, BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from graphraft.errors import ConfigurationError, InputFileError

# Defaults more than one layer uses, defined once: the settings below, the stores, synthesis
# and resolution take them from here.
QUERY_TIMEOUT_MS = 10_000  # one read query
WRITE_TIMEOUT_MS = 300_000  # one write: a load batch, an index, clear
#: index builds, label counts and full-graph passes: at least this long, whatever the read limit
MAINTENANCE_TIMEOUT_MS = 600_000
SIMILARITY_FLOOR = 0.75  # vector resolution threshold (cosine)
MAX_CANDIDATES = 3  # anchors kept for an ambiguous mention
LOAD_BATCH_SIZE = 5_000  # nodes or relationships per write
#: the character match keeps names at least this close (rapidfuzz ratio: 1 - normalised Indel
#: distance); chosen on seeded typos of the MetaQA validation entities (benchmarks/typo_linking.py)
FUZZY_FLOOR = 0.75
#: addresses that reach this machine only (the stores name a local server briefly; `serve` without
#: an API key listens on nothing else)
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")


def default_home() -> Path:
    """Where GraphRAFT keeps its database, caches and converted models."""
    return Path(platformdirs.user_cache_dir("graphraft"))


def _secret(value: SecretStr | None, file: Path | None, file_setting: str) -> str | None:
    """A secret given as a value, else as the first line of a file (an unreadable file is an error)."""
    if value is not None:
        return value.get_secret_value()
    if file is None:
        return None
    try:
        return file.read_text().strip()
    except OSError as exc:
        raise ConfigurationError(f"cannot read {file_setting} {file}: {exc.strerror}") from None


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="GRAPHRAFT_", env_file=".env", extra="ignore", populate_by_name=True)

    home: Path = Field(default_factory=default_home, description="Cache and state directory.")

    # --- the graph store -------------------------------------------------------------
    graph: str | None = Field(
        None, description="Graph name (FalkorDB key). Default: the graph loaded last, else 'demo'."
    )
    neo4j_uri: str | None = Field(
        None,
        validation_alias=AliasChoices("GRAPHRAFT_NEO4J_URI", "NEO4J_URI"),
        description="bolt:// or neo4j:// URI. Unset: use the embedded FalkorDB server.",
    )
    neo4j_username: str = Field("neo4j", validation_alias=AliasChoices("GRAPHRAFT_NEO4J_USERNAME", "NEO4J_USERNAME"))
    neo4j_password: SecretStr | None = Field(
        None, validation_alias=AliasChoices("GRAPHRAFT_NEO4J_PASSWORD", "NEO4J_PASSWORD")
    )
    neo4j_password_file: Path | None = Field(
        None,
        validation_alias=AliasChoices("GRAPHRAFT_NEO4J_PASSWORD_FILE", "NEO4J_PASSWORD_FILE"),
        description="A file holding the Neo4j password (graphraft neo4j start writes one); NEO4J_PASSWORD wins.",
    )
    neo4j_database: str | None = Field(
        None, validation_alias=AliasChoices("GRAPHRAFT_NEO4J_DATABASE", "NEO4J_DATABASE")
    )
    neo4j_data_dir: Path | None = Field(
        None, description="Data folder of `graphraft neo4j start`. Default: HOME/neo4j."
    )
    neo4j_port: int = Field(0, ge=0, description="Bolt port of `graphraft neo4j start`; 0: a free one, kept after.")
    neo4j_jars: Path | None = Field(
        None, description="Where Maven keeps Neo4j's jars for `graphraft neo4j start`. Default: HOME/cache/neo4j."
    )
    neo4j_heap: str = Field("1g", description="JVM heap of `graphraft neo4j start` (512m, 2g, ...).")
    neo4j_pagecache: str = Field("512m", description="Page cache of `graphraft neo4j start`.")
    falkordb_host: str = Field("127.0.0.1", description="Host of an external FalkorDB server.")
    falkordb_port: int | None = Field(None, description="Port of an external FalkorDB server; unset: the embedded one.")
    falkordb_password: SecretStr | None = Field(None, description="Password of an external FalkorDB server.")
    falkordb_password_file: Path | None = Field(
        None,
        description="A file holding the password of an external FalkorDB server (the embedded one keeps its own in "
        "DATA_DIR/password); FALKORDB_PASSWORD wins.",
    )
    embedded_port: int = Field(0, description="Port for the embedded server; 0 picks a free one.")
    embedded_data_dir: Path | None = Field(None, description="Default: HOME/falkordb.")
    name_properties: dict[str, str] = Field(
        default_factory=dict,
        description="The property that names a label's nodes, where the rule would choose another "
        '(JSON: {"Employee": "lastName"}; graph/naming.py has the rule). Run `graphraft embed` after a change.',
    )
    query_timeout_ms: int = Field(QUERY_TIMEOUT_MS, gt=0, description="Time limit for a read query.")
    write_timeout_ms: int = Field(
        WRITE_TIMEOUT_MS, gt=0, description="Time limit for one write (a load batch, an index, clear)."
    )
    connect_timeout_s: float = Field(
        5.0, gt=0, description="Time limit to connect to the database and for admin calls."
    )
    ask_timeout_s: float = Field(120.0, gt=0, description="Overall time limit for answering one question.")
    # --- what one question may ask for (a request past these is refused at once) ---------
    max_ask_timeout_s: float = Field(
        600.0, gt=0, description="The longest deadline a request may ask for (`serve`'s timeout_s is capped to it)."
    )
    # --- serve's clients -------------------------------------------------------------
    api_key: SecretStr | None = Field(
        None, description="`serve`: the bearer token clients must send (GRAPHRAFT_API_KEY_FILE is the other way)."
    )
    api_key_file: Path | None = Field(None, description="`serve`: a file holding the bearer token; API_KEY wins.")
    max_queued: int = Field(
        16, gt=0, description="`serve`: questions waiting or running at once; more are answered 503 with Retry-After."
    )
    batch_window_ms: float = Field(
        20.0, ge=0, description="`serve`: how long the first waiting question waits for others to be answered with it."
    )
    max_batch: int = Field(8, gt=0, description="`serve`: most questions answered together (L1 searches them at once).")
    max_question_chars: int = Field(1_000, gt=0, description="Longest question, in characters.")
    max_mentions: int = Field(8, gt=0, description="Most entity mentions in one question.")
    max_anchors: int = Field(
        16, gt=0, description="Most anchor nodes one question resolves to (bridges grow with their square)."
    )
    max_candidate_queries: int = Field(
        5_000, gt=0, description="Most candidate queries around one question's anchors (L1 searches them all)."
    )
    load_batch_size: int = Field(LOAD_BATCH_SIZE, gt=0)

    # --- name embeddings -------------------------------------------------------------
    embedder: Literal["local", "openai", "none"] = "local"
    embedding_model: str | None = Field(
        None, description="Local sentence-transformers folder/id, or the OpenAI model name."
    )
    embedding_batch_size: int = Field(256, gt=0)
    openai_base_url: str | None = Field(
        None, validation_alias=AliasChoices("GRAPHRAFT_OPENAI_BASE_URL", "OPENAI_BASE_URL")
    )
    openai_api_key: SecretStr | None = Field(
        None, validation_alias=AliasChoices("GRAPHRAFT_OPENAI_API_KEY", "OPENAI_API_KEY")
    )

    # --- language models and entity extraction ---------------------------------------
    base_model: str = Field("bundled", description="'bundled' (SmolLM2-135M-Instruct), a folder or a hub id.")
    llm_model: str | None = Field(None, description="Chat model at the OpenAI-compatible endpoint (L0).")
    extractor: Literal["auto", "marked", "lexical", "openai", "local"] = "auto"
    l1_adapter: Path | None = Field(None, description="Trained L1 adapter folder (python -m graphraft.train l1).")
    l2_adapter: Path | None = Field(None, description="Trained L2 adapter folder (python -m graphraft.train l2).")
    dtype: Literal["auto", "float32", "bfloat16"] = Field(
        "auto",
        description="Model weights when answering: auto is bfloat16 where the hardware computes it "
        "natively (CUDA; a CPU with AVX512-BF16 or AMX), else float32.",
    )
    decoding: Literal["exact", "beam"] = Field(
        "exact",
        description="How L1 finds its top queries: exact best-first search over the candidate tree, "
        "or Hugging Face beam search (the reference).",
    )
    similarity_floor: float = Field(SIMILARITY_FLOOR, ge=-1.0, le=1.0, description="Vector resolution threshold.")
    max_candidates: int = Field(MAX_CANDIDATES, gt=0, description="Anchors kept for an ambiguous mention.")
    # None turns the character match off (a name dictionary of every node is read on first use)
    fuzzy_floor: float | None = Field(
        FUZZY_FLOOR,
        ge=0.0,
        le=1.0,
        description="Typo match: keep names at least this close by characters (rapidfuzz ratio).",
    )

    @field_validator("fuzzy_floor", mode="before")
    @classmethod
    def _fuzzy_off(cls, value):
        return None if isinstance(value, str) and value.strip().lower() in ("", "none", "off") else value

    @field_validator("neo4j_uri")
    @classmethod
    def _check_uri(cls, value: str | None) -> str | None:
        if value is None or value == "":
            return None
        schemes = ("bolt://", "bolt+s://", "bolt+ssc://", "neo4j://", "neo4j+s://", "neo4j+ssc://")
        if not value.startswith(schemes):
            raise ValueError(f"NEO4J_URI must start with bolt:// or neo4j://, got {value!r}")
        return value

    @property
    def data_dir(self) -> Path:
        return self.embedded_data_dir or self.home / "falkordb"

    @property
    def uses_neo4j(self) -> bool:
        return self.neo4j_uri is not None

    @property
    def neo4j_dir(self) -> Path:
        """The data folder of the Neo4j server GraphRAFT starts (`graphraft neo4j start`)."""
        return self.neo4j_data_dir or self.home / "neo4j"

    def neo4j_secret(self) -> str | None:
        """The Neo4j password: NEO4J_PASSWORD, else the first line of NEO4J_PASSWORD_FILE."""
        return _secret(self.neo4j_password, self.neo4j_password_file, "NEO4J_PASSWORD_FILE")

    def falkordb_secret(self) -> str | None:
        """An external FalkorDB's password: GRAPHRAFT_FALKORDB_PASSWORD, else its file's first line."""
        return _secret(self.falkordb_password, self.falkordb_password_file, "GRAPHRAFT_FALKORDB_PASSWORD_FILE")

    def api_secret(self) -> str | None:
        """`serve`'s bearer token: GRAPHRAFT_API_KEY, else the first line of GRAPHRAFT_API_KEY_FILE."""
        key = _secret(self.api_key, self.api_key_file, "GRAPHRAFT_API_KEY_FILE")
        if key is None:
            return None
        key = key.strip()
        where = "GRAPHRAFT_API_KEY" if self.api_key is not None else f"the API key file {self.api_key_file}"
        if len(key) < 16:
            raise ConfigurationError(f"{where} holds a key of {len(key)} characters; use 16 or more")
        return key


def load_settings(**overrides) -> Settings:
    """Build settings from the environment plus explicit overrides (None means 'not given')."""
    given = {k: v for k, v in overrides.items() if v is not None}
    try:
        return Settings(**given)
    except ValueError as exc:  # pydantic.ValidationError is a ValueError
        first = exc.errors()[0] if hasattr(exc, "errors") else {"msg": str(exc), "loc": ()}
        where = ".".join(str(p) for p in first.get("loc", ())) or "settings"
        raise ConfigurationError(f"invalid setting {where}: {first['msg']}") from None


class StageConfig(BaseModel):
    """A stage's settings (synthesis, training, asking, evaluation), TRL style: the defaults are
    declared once, on the fields; a YAML file may set any of them, and the command line builds
    one flag per field (``graphraft.cli.options``), nested fields as ``--parent-field``."""

    model_config = ConfigDict(extra="forbid")

    def narrowed(self, to: type[StageConfig]) -> StageConfig:
        """This config's values for the fields of a narrower stage config (``to``'s fields
        must be a subset: evaluation -> asking, generation -> synthesis)."""
        return to.model_validate(self.model_dump(include=set(to.model_fields)))

    @classmethod
    def from_yaml(cls, path: Path | None = None, **overrides):
        """The file's settings (none without a file), then every override that is not None; a
        dotted key (``lora.r``) sets a nested field. Errors name the file and the field."""
        data: dict = {}
        where = str(path) if path is not None else "settings"
        if path is not None:
            path = Path(path)
            if not path.is_file():
                raise InputFileError(f"{path}: config file not found")
            try:
                data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
            except yaml.YAMLError as exc:
                raise InputFileError(f"{path}: not valid YAML: {exc}") from None
            if not isinstance(data, dict):
                raise InputFileError(f"{path}: expected a mapping of settings")
        for key, value in overrides.items():
            if value is None:
                continue
            target = data
            *parents, last = key.split(".")
            for parent in parents:
                target = target.setdefault(parent, {})
            target[last] = value
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(p) for p in first["loc"])
            message = first["msg"].removeprefix("Value error, ")  # a validator's own words
            raise InputFileError(f"{where}: {field + ': ' if field else ''}{message}") from None
