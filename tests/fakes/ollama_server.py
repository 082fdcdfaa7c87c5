"""A local stand-in for Ollama's HTTP API: only ``POST /api/embed``, checked the way the real
server would see the official `ollama` client's request.

Vectors are a stable function of the input text, so tests can compare them.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np


def fake_vector(text: str, dims: int) -> list[float]:
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
    return np.random.default_rng(seed).standard_normal(dims).astype(np.float32).tolist()


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that timed out and hung up is what the timeout test wants


class FakeOllama:
    """``with FakeOllama(models={"nomic-embed-text": 768}) as fake: fake.url``."""

    def __init__(self, models: dict[str, int] | None = None, delay: float = 0.0) -> None:
        self.models = models if models is not None else {"nomic-embed-text": 768}
        self.delay = delay
        self.raw: bytes | None = None  # set: every answer is 200 with these bytes (a bad server)
        self.requests: list[dict[str, Any]] = []
        self.problems: list[str] = []  # requests the real server would not have taken
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _reply(self, status: int, body: dict[str, Any]) -> None:
                raw = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def do_POST(self) -> None:
                if self.path != "/api/embed":
                    fake.problems.append(f"unexpected path {self.path}")
                    return self._reply(404, {"error": "not found"})
                if self.headers.get("Content-Type") != "application/json":
                    fake.problems.append("missing Content-Type: application/json")
                if not (self.headers.get("User-Agent") or "").startswith("ollama-python/"):
                    fake.problems.append("not the official client")
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.requests.append(body)
                if not set(body) <= {
                    "model",
                    "input",
                    "truncate",
                    "options",
                    "keep_alive",
                    "dimensions",
                }:
                    fake.problems.append(f"unknown fields {sorted(body)}")
                if fake.delay:
                    time.sleep(fake.delay)
                if fake.raw is not None:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(fake.raw)))
                    self.end_headers()
                    self.wfile.write(fake.raw)
                    return None
                model = body.get("model")
                if model not in fake.models:
                    return self._reply(
                        404, {"error": f'model "{model}" not found, try pulling it first'}
                    )
                texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
                if not all(isinstance(t, str) for t in texts):
                    fake.problems.append("input must be strings")
                dims = fake.models[model]
                self._reply(
                    200, {"model": model, "embeddings": [fake_vector(t, dims) for t in texts]}
                )

        self.server = _QuietServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FakeOllama:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
