"""A small local HTTP server that answers JSON POSTs, standing in for an OpenAI-compatible API."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, HTTPServer

# (path, request body) -> (status, response body or None)
Answer = Callable[[str, dict], tuple[int, dict | None]]


@contextmanager
def json_endpoint(answer: Answer) -> Iterator[tuple[str, list[dict]]]:
    """Yields the base URL (``.../v1``) and the list of requests it has received."""
    calls: list[dict] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            calls.append({"path": self.path, "body": body, "auth": self.headers.get("Authorization")})
            status, payload = answer(self.path, body)
            data = json.dumps(payload).encode() if payload is not None else b""
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", calls
    finally:
        server.shutdown()


def chat_completion(model: str, content: str) -> dict:
    """Just enough of the chat-completions API's answer."""
    return {
        "id": "x",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }
