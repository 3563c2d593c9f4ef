"""Load on `graphraft serve`: clients posting questions for a bounded time, over real HTTP.

Starts `graphraft serve` (a subprocess, uvicorn) with the given adapters on the given graph,
waits for /health, then runs the same questions with 1 client and with N clients, each for
--seconds, in this one run. Prints requests, failures, throughput and p50/p95 latency for each.

    python benchmarks/serve_load.py --graph demo --clients 4 --seconds 60
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx

from graphraft.graph.loaders.question_sets import Dataset, Split, load_items


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(args, port: int) -> subprocess.Popen:
    command = [sys.executable, "-m", "graphraft", "serve", "--port", str(port), "--graph", args.graph]
    for flag, value in (("--l1-adapter", args.l1_adapter), ("--l2-adapter", args.l2_adapter)):
        if value:
            command += [flag, str(value)]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"graphraft serve exited: {server.stderr.read()[-2000:]}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                return server
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    server.kill()
    raise SystemExit("graphraft serve did not become healthy in 300 s")


def load(url: str, questions: list[str], clients: int, seconds: float) -> dict:
    latencies: list[float] = []
    failures: list[str] = []
    lock = threading.Lock()
    stop = time.monotonic() + seconds

    def client(offset: int) -> None:
        with httpx.Client(timeout=120) as http:
            i = offset
            while time.monotonic() < stop:
                question = questions[i % len(questions)]
                i += clients
                started = time.perf_counter()
                try:
                    response = http.post(f"{url}/ask", json={"question": question})
                    ok = response.status_code == 200
                    problem = None if ok else f"{response.status_code}: {response.text[:200]}"
                except httpx.HTTPError as exc:
                    problem = f"{type(exc).__name__}: {exc}"
                with lock:
                    if problem is None:
                        latencies.append(time.perf_counter() - started)
                    else:
                        failures.append(problem)

    began = time.perf_counter()
    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - began
    ordered = sorted(latencies)
    return {
        "clients": clients,
        "requests": len(latencies) + len(failures),
        "failures": len(failures),
        "first_failures": failures[:3],
        "seconds": round(elapsed, 1),
        "per_second": round(len(latencies) / elapsed, 2),
        "p50_s": round(statistics.median(ordered), 3) if ordered else None,
        "p95_s": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 3) if ordered else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--graph", default="demo")
    parser.add_argument("--dataset", default="demo", choices=[d.value for d in Dataset])
    parser.add_argument("--l1-adapter", type=Path, default=Path("outputs/training/l1-demo/adapter"))
    parser.add_argument("--l2-adapter", type=Path, default=Path("outputs/training/l2-demo/adapter"))
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--questions", type=int, default=40, help="Validation questions to cycle through.")
    args = parser.parse_args()
    for adapter in (args.l1_adapter, args.l2_adapter):
        if adapter and not adapter.is_dir():
            raise SystemExit(f"{adapter}: no adapter there (make demo trains the demo's)")
    items = load_items(Dataset(args.dataset), None, None, Split.validation, None, None)[: args.questions]
    questions = [item.question for item in items]
    port = free_port()
    server = start_server(args, port)
    try:
        url = f"http://127.0.0.1:{port}"
        load(url, questions[:2], 1, 5)  # warm-up: first forward calls, caches
        results = [load(url, questions, clients, args.seconds) for clients in (1, args.clients)]
    finally:
        server.terminate()
        server.wait(timeout=60)
    print(json.dumps(results, indent=2))
    for r in results:
        print(
            f"{r['clients']} client(s): {r['requests']} requests in {r['seconds']} s, {r['failures']} failed, "
            f"{r['per_second']} answered/s, p50 {r['p50_s']} s, p95 {r['p95_s']} s"
        )


if __name__ == "__main__":
    main()
