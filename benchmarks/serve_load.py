"""Load on `graphraft serve`: clients posting questions for a bounded time, over real HTTP.

Starts `graphraft serve` (a subprocess, uvicorn) with the given adapters on the given graph,
waits for /health, then runs the same validation questions with each number of clients in
--clients, each for --seconds, while a probe asks /health twice a second. For each level it
prints requests, answers a second, p50/p95 latency, the deliberate refusals (503 queue full,
504 past the deadline) apart from every other failure, /health's p99, and the server's
resident memory at the start and the end of the level.

--compare-unbatched runs the same levels a second time against a server that answers one
question at a time (GRAPHRAFT_MAX_BATCH=1), in this one run, so that batching is measured
against its absence on the same machine at the same time.

    python benchmarks/serve_load.py --graph demo --clients 1 4 16 --seconds 300
    python benchmarks/serve_load.py --clients 1 4 --seconds 60 --compare-unbatched

Exit status 1 when any request failed other than by a deliberate 503/504.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

from graphraft.graph.loaders.question_sets import Dataset, Split, load_items

DELIBERATE = {503, 504}  # a full queue, a deadline: the service saying no on purpose


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(args, port: int, batch: int | None) -> subprocess.Popen:
    command = [sys.executable, "-m", "graphraft", "serve", "--port", str(port), "--graph", args.graph]
    for flag, value in (("--l1-adapter", args.l1_adapter), ("--l2-adapter", args.l2_adapter)):
        if value:
            command += [flag, str(value)]
    env = dict(os.environ)
    if batch is not None:
        env["GRAPHRAFT_MAX_BATCH"] = str(batch)
    # the server's log to a file: a pipe nobody reads fills up (64 KB, a few hundred questions'
    # log lines) and then stalls the server on its next log line
    log = Path(tempfile.mkdtemp(prefix="serve-load-")) / "server.log"
    with log.open("w") as handle:
        server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=handle, env=env)
    print(f"server log: {log}", flush=True)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"graphraft serve exited: {log.read_text()[-2000:]}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                return server
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    server.kill()
    raise SystemExit("graphraft serve did not become healthy in 300 s")


def resident_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        return None
    return None


def percentile(ordered: list[float], fraction: float) -> float | None:
    if not ordered:
        return None
    return round(ordered[min(len(ordered) - 1, int(fraction * len(ordered)))], 3)


def load(url: str, questions: list[str], clients: int, seconds: float, pid: int) -> dict:
    latencies: list[float] = []
    refused: dict[int, int] = {}
    failures: list[str] = []
    health: list[float] = []
    lock = threading.Lock()
    stop = time.monotonic() + seconds

    def client(offset: int) -> None:
        with httpx.Client(timeout=180) as http:
            i = offset
            while time.monotonic() < stop:
                question = questions[i % len(questions)]
                i += clients
                started = time.perf_counter()
                try:
                    response = http.post(f"{url}/ask", json={"question": question})
                    status, problem = response.status_code, None
                    if status != 200 and status not in DELIBERATE:
                        problem = f"{status}: {response.text[:200]}"
                except httpx.HTTPError as exc:
                    status, problem = None, f"{type(exc).__name__}: {exc}"
                with lock:
                    if problem is not None:
                        failures.append(problem)
                    elif status == 200:
                        latencies.append(time.perf_counter() - started)
                    else:
                        refused[status] = refused.get(status, 0) + 1
                        time.sleep(1)  # as Retry-After asks, roughly

    def probe() -> None:
        with httpx.Client(timeout=30) as http:
            while time.monotonic() < stop:
                started = time.perf_counter()
                try:
                    ok = http.get(f"{url}/health").status_code == 200
                except httpx.HTTPError:
                    ok = False
                with lock:
                    if ok:
                        health.append(time.perf_counter() - started)
                    else:
                        failures.append("/health did not answer 200")
                time.sleep(0.5)

    memory_start = resident_mb(pid)
    began = time.perf_counter()
    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    threads.append(threading.Thread(target=probe))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - began
    ordered, health_ordered = sorted(latencies), sorted(health)
    return {
        "clients": clients,
        "answered": len(latencies),
        "refused_503": refused.get(503, 0),
        "refused_504": refused.get(504, 0),
        "failures": len(failures),
        "first_failures": failures[:3],
        "seconds": round(elapsed, 1),
        "per_second": round(len(latencies) / elapsed, 3),
        "p50_s": round(statistics.median(ordered), 3) if ordered else None,
        "p95_s": percentile(ordered, 0.95),
        "health_p99_s": percentile(health_ordered, 0.99),
        "health_checks": len(health),
        "memory_mb_start": memory_start,
        "memory_mb_end": resident_mb(pid),
    }


def run_levels(args, questions: list[str], batch: int | None) -> list[dict]:
    port = free_port()
    server = start_server(args, port, batch)
    try:
        url = f"http://127.0.0.1:{port}"
        load(url, questions[:2], 1, 5, server.pid)  # warm-up: first forward calls, caches
        results = []
        for clients in args.clients:
            result = load(url, questions, clients, args.seconds, server.pid)
            result["server"] = "one at a time" if batch == 1 else "batched"
            results.append(result)
            print(line(result), flush=True)
        return results
    finally:
        server.terminate()
        try:
            server.wait(timeout=120)
        except subprocess.TimeoutExpired:
            server.kill()
            print("the server did not stop within 120 s of SIGTERM: killed", flush=True)


def line(r: dict) -> str:
    return (
        f"{r['server']}, {r['clients']} client(s): {r['answered']} answered in {r['seconds']} s "
        f"({r['per_second']}/s), p50 {r['p50_s']} s, p95 {r['p95_s']} s, 503 {r['refused_503']}, "
        f"504 {r['refused_504']}, other failures {r['failures']}, /health p99 {r['health_p99_s']} s "
        f"({r['health_checks']} checks), memory {r['memory_mb_start']} -> {r['memory_mb_end']} MB"
        + (f"; first failures: {r['first_failures']}" if r["failures"] else "")
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--graph", default="demo")
    parser.add_argument("--dataset", default="demo", choices=[d.value for d in Dataset])
    parser.add_argument("--l1-adapter", type=Path, default=Path("outputs/training/l1-demo/adapter"))
    parser.add_argument("--l2-adapter", type=Path, default=Path("outputs/training/l2-demo/adapter"))
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 4, 16])
    parser.add_argument("--seconds", type=float, default=300)
    parser.add_argument("--questions", type=int, default=40, help="Validation questions to cycle through.")
    parser.add_argument("--compare-unbatched", action="store_true", help="Also run a one-at-a-time server.")
    parser.add_argument("--json", type=Path, help="Also write the results here.")
    args = parser.parse_args()
    for adapter in (args.l1_adapter, args.l2_adapter):
        if adapter and not adapter.is_dir():
            raise SystemExit(f"{adapter}: no adapter there (make demo trains the demo's)")
    items = load_items(Dataset(args.dataset), None, None, Split.validation, None, None)[: args.questions]
    questions = [item.question for item in items]
    results = run_levels(args, questions, None)
    if args.compare_unbatched:
        results += run_levels(args, questions, 1)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=2))
    print("\n".join(line(r) for r in results))
    if any(r["failures"] for r in results):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
