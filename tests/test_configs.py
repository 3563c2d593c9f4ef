"""One configuration per stage: every field is a YAML key and a flag, declared once; the
library never loads the command-line toolkit."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.main import get_command
from typer.testing import CliRunner

from graphraft.cli import app
from graphraft.cli.options import config_fields, flag_name, with_config_flags
from graphraft.errors import InputFileError
from graphraft.evaluation.config import EvaluationConfig
from graphraft.inference.config import AskConfig
from graphraft.synthesis.synthesizer import SynthesisConfig
from graphraft.training.config import TrainConfig

STAGES = [
    ("synthesize", SynthesisConfig, ()),
    ("train", TrainConfig, ("task",)),  # the command's argument
    ("ask", AskConfig, ("group",)),  # one question: nothing to group
    ("eval", EvaluationConfig, ()),
]


def options_of(command_name: str) -> set[str]:
    command = get_command(app).commands[command_name]
    return {opt for param in command.params for opt in (*param.opts, *param.secondary_opts)}


@pytest.mark.parametrize("command, model, skip", STAGES, ids=[s[0] for s in STAGES])
def test_every_field_of_a_stage_config_is_a_flag(command, model, skip):
    options = options_of(command)
    fields = [key for key, _, _ in config_fields(model)]
    assert len(fields) >= 6
    missing = [key for key in fields if key not in skip and flag_name(key) not in options]
    assert missing == []
    assert "--config" in options  # ... and a YAML file of them


def test_a_flag_wins_over_the_file_and_the_file_over_the_default(tmp_path):
    app_ = typer.Typer()
    seen = {}

    @app_.command()
    @with_config_flags(TrainConfig, skip=("task",))
    def command(task: str, overrides: dict | None = None):
        seen.update(overrides)

    config = tmp_path / "train.yaml"
    config.write_text("data: [a.jsonl]\noutput_dir: out\nepochs: 3\nbatch_size: 4\nbf16: true\nlora:\n  r: 8\n")
    result = CliRunner().invoke(
        app_, ["l1", "--epochs", "0.5", "--no-bf16", "--lora-alpha", "4", "--data", "b.jsonl", "--data", "c.jsonl@0.2"]
    )
    assert result.exit_code == 0, result.output
    trained = TrainConfig.from_yaml(config, task="l1", **seen)
    assert (trained.epochs, trained.batch_size, trained.bf16) == (0.5, 4, False)  # flag, file, flag
    assert (trained.lora.r, trained.lora.alpha, trained.lora.dropout) == (8, 4, 0.05)  # file, flag, default
    assert [(d.path.name, d.share) for d in trained.data] == [("b.jsonl", None), ("c.jsonl", 0.2)]
    assert trained.learning_rate == TrainConfig.model_fields["learning_rate"].default


def test_training_data_takes_shares_as_text_or_mapping_and_checks_them(tmp_path):
    config = tmp_path / "train.yaml"
    config.write_text(
        "task: l1\noutput_dir: out\nmax_train_examples: 100\n"
        "data: [a.jsonl, b.jsonl@0.25, {path: c@home.jsonl, share: 0.5}, d@x.jsonl]\n"
    )
    data = TrainConfig.from_yaml(config).data
    assert [(str(d.path), d.share) for d in data] == [
        ("a.jsonl", None),
        ("b.jsonl", 0.25),
        ("c@home.jsonl", 0.5),
        ("d@x.jsonl", None),  # an @ in a file name is part of the name
    ]
    with pytest.raises(InputFileError, match=r"train\.yaml: data: .*shares add up to 1\.2, more than 1"):
        TrainConfig.from_yaml(config, data=["a.jsonl@0.7", "b.jsonl@0.5"])
    with pytest.raises(InputFileError, match=r"data\.0\.share: .*greater than 0"):
        TrainConfig.from_yaml(config, data=["a.jsonl@0"])
    with pytest.raises(ValueError, match="shares need max_train_examples"):
        TrainConfig.model_validate({"task": "l1", "output_dir": "o", "data": "a@0.5", "max_train_examples": None})


def test_a_stage_config_file_with_an_unknown_or_bad_key_names_it(tmp_path):
    config = tmp_path / "synthesis.yaml"
    config.write_text("max_hops: 2\nalternativs: 5\n")
    with pytest.raises(InputFileError, match=r"synthesis\.yaml: alternativs: Extra inputs are not permitted"):
        SynthesisConfig.from_yaml(config)
    config.write_text("max_hops: 7\n")
    with pytest.raises(InputFileError, match=r"synthesis\.yaml: max_hops"):
        SynthesisConfig.from_yaml(config)
    config.write_text("max_hops: 2\n")
    assert SynthesisConfig.from_yaml(config, alternatives=5).model_dump() == {
        **SynthesisConfig().model_dump(),
        "max_hops": 2,
        "alternatives": 5,
    }


def test_the_library_loads_neither_typer_nor_rich():
    code = (
        "import sys, graphraft, graphraft.inference.pipeline, graphraft.training.trainer, "
        "graphraft.synthesis.synthesizer, graphraft.evaluation.runner, graphraft.demo; "
        "print(sorted({'typer', 'rich'} & set(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_typo_match_has_a_floor_setting_that_can_turn_it_off(monkeypatch):
    from graphraft.config import load_settings
    from graphraft.errors import ConfigurationError

    assert load_settings().fuzzy_floor == 0.75
    for off in ("off", "", "None"):
        monkeypatch.setenv("GRAPHRAFT_FUZZY_FLOOR", off)
        assert load_settings().fuzzy_floor is None
    monkeypatch.setenv("GRAPHRAFT_FUZZY_FLOOR", "1.5")
    with pytest.raises(ConfigurationError, match="fuzzy_floor"):
        load_settings()


SHIPPED = sorted((Path(__file__).parents[1] / "training").glob("*.yaml"))


@pytest.mark.parametrize("path", SHIPPED, ids=[p.name for p in SHIPPED])
def test_every_shipped_training_config_loads_and_names_a_task_and_its_data(path):
    config = TrainConfig.from_yaml(path)
    assert config.task in {"l1", "l2"}
    assert config.data and config.output_dir
    # the shares of a file's rows stay within the whole
    assert sum(source.share or 0 for source in config.data) <= 1.0
