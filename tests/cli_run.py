"""Running the `graphraft` command as a user does (a subprocess with a clean environment)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from graphraft.graph.local_server import pid_alive


def run(args, env: dict[str, str], timeout: float = 300) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("GRAPHRAFT_", "NEO4J_"))}
    return subprocess.run(
        [sys.executable, "-m", "graphraft", *args],
        capture_output=True,
        text=True,
        env={**clean, **env},
        timeout=timeout,
        check=False,
    )


def one_line_error(proc: subprocess.CompletedProcess) -> str:
    """The single `error: ...` line a user mistake must give (no traceback, nothing else)."""
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert "Traceback" not in proc.stderr, proc.stderr
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    return lines[0]


def kill_hard(pid: int) -> None:
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not pid_alive(pid)


def graph_files(folder: Path, n: int) -> tuple[Path, Path]:
    """Graph n: 200 + n nodes in a chain, so every load has its own counts."""
    nodes, rels = folder / f"n{n}.jsonl", folder / f"r{n}.jsonl"
    count = 200 + n
    nodes.write_text(
        "".join(
            json.dumps({"id": f"g{n}-{i}", "labels": ["Item"], "properties": {"name": f"item {n} {i}"}}) + "\n"
            for i in range(count)
        )
    )
    rels.write_text(
        "".join(
            json.dumps({"source": f"g{n}-{i}", "target": f"g{n}-{i + 1}", "type": "NEXT"}) + "\n"
            for i in range(count - 1)
        )
    )
    return nodes, rels


def each_fails_in_time(pid: int, calls: dict, slack: float) -> None:
    """With the server ``pid`` stalled (SIGSTOP), every call of ``calls`` ({name: (call, limit
    in seconds)}) must fail as a stalled server within its limit plus ``slack``; the server is
    let go again whatever happens."""
    import pytest

    from graphraft.errors import DatabaseUnavailableError

    os.kill(pid, signal.SIGSTOP)
    try:
        for name, (call, limit) in calls.items():
            started = time.monotonic()
            with pytest.raises(DatabaseUnavailableError, match="is the server stalled"):
                call()
            took = time.monotonic() - started
            assert took < limit + slack, f"{name}: {took:.1f} s, the limit {limit} s + {slack} s"
    finally:
        os.kill(pid, signal.SIGCONT)
