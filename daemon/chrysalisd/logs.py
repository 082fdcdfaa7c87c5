"""The daemon's log: one line per record on stderr, JSON for machines, short text for people.

``log_format = "auto"`` (the default) picks by where stderr goes: a terminal gets text
(``04:07:56 warning  embedder: Ollama is not answering ...``), anything else (systemd, a
container, a file, a test) gets JSON, one object per line. ``"text"`` or ``"json"`` forces
one (``CHRYSALIS_LOG_FORMAT``).

Either form carries the record's time, level, logger (JSON) and message only: whatever else
a record holds (``extra=``, uvicorn's ``color_message``) is left out, so a value handed to a
logger that way, a secret included, never reaches the log.
"""

from __future__ import annotations

import logging
import sys
from datetime import UTC, datetime
from typing import Any, Literal, TextIO

import pythonjsonlogger.json

__all__ = ["JsonFormatter", "TextFormatter", "chosen_format", "configure_logging"]

Format = Literal["auto", "text", "json"]


class JsonFormatter(pythonjsonlogger.json.JsonFormatter):
    """One JSON object per line: ts, level, logger, msg (and exc when there is one)."""

    FIELDS = ("ts", "level", "logger", "msg", "exc")

    def __init__(self) -> None:
        super().__init__(
            ["asctime", "levelname", "name", "message"],
            rename_fields={
                "asctime": "ts",
                "levelname": "level",
                "name": "logger",
                "message": "msg",
                "exc_info": "exc",
            },
            json_ensure_ascii=False,
        )

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        return datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds")

    def process_log_record(self, log_data: dict[str, Any]) -> dict[str, Any]:
        log_data["level"] = str(log_data["level"]).lower()
        return {k: log_data[k] for k in self.FIELDS if k in log_data}


class TextFormatter(logging.Formatter):
    """``HH:MM:SS level    message`` in local time (a person reads it beside their clock),
    then the traceback when there is one."""

    def format(self, record: logging.LogRecord) -> str:
        when = datetime.fromtimestamp(record.created).strftime("%H:%M:%S")
        line = f"{when} {record.levelname.lower():<8} {record.getMessage()}"
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


def isatty(stream: object) -> bool:
    """Whether ``stream`` is a terminal (False for a closed or odd one)."""
    try:
        return bool(stream.isatty())  # type: ignore[attr-defined]
    except (AttributeError, ValueError):
        return False


def chosen_format(setting: Format, stream: TextIO) -> Literal["text", "json"]:
    """``setting`` itself, or for ``"auto"``: text on a terminal, JSON elsewhere."""
    if setting != "auto":
        return setting
    return "text" if isatty(stream) else "json"


def configure_logging(level: str, setting: Format, stream: TextIO | None = None) -> str:
    """Send every log record to ``stream`` (stderr) at ``level`` in the chosen format;
    returns that format (``"text"`` or ``"json"``)."""
    stream = sys.stderr if stream is None else stream
    form = chosen_format(setting, stream)
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter() if form == "json" else TextFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    for quiet in ("faiss.loader", "apscheduler"):  # per-job and library-loading chatter
        logging.getLogger(quiet).setLevel(logging.WARNING)
    # chrysalis logs what it warns about (e.g. "Ollama is not answering"); other libraries'
    # warnings go through logging so stderr stays one record per line.
    logging.captureWarnings(True)
    return form
