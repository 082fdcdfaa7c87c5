"""A local stand-in for Ollama's ``POST /api/chat``, strict about the request the official
`ollama` client sends for a structured-output extraction, answering scripted replies.

Each reply is the text of ``message.content`` (a `str`, usually JSON) or a whole response
body (a `dict`), or an ``(status, body)`` pair for an error. Requests it would not take, or
one more than scripted, get a 400 and are listed in ``problems``: a test asserts it empty.
The body of a success is what real Ollama answers for ``stream: false``.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = str | dict[str, Any] | tuple[int, dict[str, Any]]

_FIELDS = {
    "model",
    "messages",
    "tools",
    "stream",
    "format",
    "options",
    "keep_alive",
    "think",
    "logprobs",
    "top_logprobs",
}


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that timed out and hung up is what the timeout test wants


def chat_body(
    model: str, content: str, prompt_tokens: int = 0, eval_tokens: int = 0
) -> dict[str, Any]:
    """A successful non-streamed ``/api/chat`` answer, shaped like real Ollama's."""
    return {
        "model": model,
        "created_at": "2025-01-01T00:00:00.000000Z",
        "message": {"role": "assistant", "content": content},
        "done_reason": "stop",
        "done": True,
        "total_duration": 1_000_000,
        "load_duration": 100_000,
        "prompt_eval_count": prompt_tokens,
        "prompt_eval_duration": 200_000,
        "eval_count": eval_tokens,
        "eval_duration": 700_000,
    }


class FakeOllamaChat:
    """``with FakeOllamaChat(schema=REPLY_SCHEMA, marker="[prompt p1]") as fake:``, then
    ``fake.script(reply, ...)`` before each call; ``fake.requests`` holds the bodies seen."""

    def __init__(
        self,
        *,
        schema: dict[str, Any],
        marker: str,
        models: tuple[str, ...] = ("llama3.2",),
        delay: float = 0.0,
        prompt_tokens: int = 11,
        eval_tokens: int = 7,
    ) -> None:
        self.schema = schema
        self.marker = marker
        self.models = models
        self.delay = delay
        self.prompt_tokens = prompt_tokens
        self.eval_tokens = eval_tokens
        self.replies: deque[Reply] = deque()
        # without a scripted reply, the answer computed from the request's user message (the
        # bead's text after the header), if set: a fake model for suites that run many beads
        self.answer: Callable[[str], Reply] | None = None
        self.requests: list[dict[str, Any]] = []
        self.problems: list[str] = []
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _reply(self, status: int, body: dict[str, Any]) -> None:
                raw = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def _refuse(self, problem: str) -> None:
                with fake._lock:
                    fake.problems.append(problem)
                self._reply(400, {"error": problem})

            def do_GET(self) -> None:
                self._refuse(f"unexpected GET {self.path}")

            def do_POST(self) -> None:
                if self.path != "/api/chat":
                    return self._refuse(f"unexpected path {self.path}")
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    body = json.loads(raw)
                except ValueError:
                    return self._refuse("body is not JSON")
                with fake._lock:
                    fake.requests.append(body)
                problem = fake.check(self.headers, body)
                if problem:
                    return self._refuse(problem)
                if fake.delay:
                    time.sleep(fake.delay)
                if body["model"] not in fake.models:
                    model = body["model"]
                    return self._reply(
                        404, {"error": f'model "{model}" not found, try pulling it first'}
                    )
                with fake._lock:
                    reply = fake.replies.popleft() if fake.replies else None
                if reply is None and fake.answer is not None:
                    reply = fake.answer(body["messages"][1]["content"])
                if reply is None:
                    return self._refuse("a request no test scripted")
                if isinstance(reply, tuple):
                    return self._reply(*reply)
                if isinstance(reply, str):
                    reply = chat_body(body["model"], reply, fake.prompt_tokens, fake.eval_tokens)
                self._reply(200, reply)

        self.server = _QuietServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def script(self, *replies: Reply) -> None:
        with self._lock:
            self.replies.extend(replies)

    def check(self, headers: Any, body: dict[str, Any]) -> str | None:
        """What real Ollama (or the extractor's contract) would not take, else None."""
        if not (headers.get("Content-Type") or "").startswith("application/json"):
            return "missing Content-Type: application/json"
        if not (headers.get("User-Agent") or "").startswith("ollama-python/"):
            return "not the official client"
        if not set(body) <= _FIELDS:
            return f"unknown fields {sorted(set(body) - _FIELDS)}"
        if not isinstance(body.get("model"), str) or not body["model"]:
            return "no model"
        if body.get("stream") is not False:
            return f"stream must be false, got {body.get('stream')!r}"
        if body.get("tools", []) != []:
            return "tools were sent"
        if body.get("format") != self.schema:
            return "format is not the extractor's schema"
        if body.get("options") != {"temperature": 0}:
            return f"options must be temperature 0, got {body.get('options')!r}"
        messages = body.get("messages")
        if not isinstance(messages, list) or [m.get("role") for m in messages] != [
            "system",
            "user",
        ]:
            return "messages must be [system, user]"
        if not all(
            isinstance(m.get("content"), str) and set(m) == {"role", "content"} for m in messages
        ):
            return "messages must be {role, content} with text"
        if self.marker not in messages[0]["content"]:
            return f"system prompt lacks the version marker {self.marker!r}"
        return None

    def __enter__(self) -> FakeOllamaChat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
