"""notebooks/quickstart.ipynb runs top to bottom (tiny random model, the session's server)."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
from nbclient import NotebookClient

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "quickstart.ipynb"


def test_the_quickstart_notebook_runs(tmp_path, server, graphraft_home, monkeypatch):
    for key, value in {
        "GRAPHRAFT_HOME": str(graphraft_home),
        **server.env(),
        "GRAPHRAFT_EMBEDDER": "none",
        "GRAPHRAFT_QUICKSTART_MODEL": "tiny-random",
        "GRAPHRAFT_QUICKSTART_OUTPUTS": str(tmp_path / "outputs"),
    }.items():
        monkeypatch.setenv(key, value)
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(
        notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    text = "\n".join(
        output.get("text", "")
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.get("outputs", [])
    )
    assert "279 nodes, 734 relationships" in text
    assert "301 rows, 301 with a best query" in text
    assert text.count("Q: ") == 3 and "cypher:  MATCH (a:" in text
    summary = json.loads((tmp_path / "outputs" / "training" / "l1-demo" / "summary.json").read_text())
    assert summary["steps"] == 4 and summary["base_model"] == "tiny-random"
    assert (tmp_path / "outputs" / "training" / "l2-demo" / "adapter" / "graphraft_adapter.json").is_file()
