"""Running the `graphraft` command as a user does (a subprocess with a clean environment)."""

from __future__ import annotations

import os
import subprocess
import sys


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
