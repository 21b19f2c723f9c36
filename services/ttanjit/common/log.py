"""Structured logs: one JSON object per line on stderr (``TTANJIT_LOG_FORMAT=text``
for humans). Extra fields ride on ``logging``'s ``extra=``:

    log.info("claimed", extra={"game": gid, "reason": "failover"})
"""

from __future__ import annotations

import logging
import sys
import time
from typing import Any

import orjson

_STD = set(logging.LogRecord("", 0, "", 0, "", (), None).__dict__) | {"message", "asctime"}


class JsonFormatter(logging.Formatter):
    def __init__(self, service: str) -> None:
        super().__init__()
        self.service = service

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "service": self.service,
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for k, v in record.__dict__.items():
            if k not in _STD and not k.startswith("_"):
                out[k] = v
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return orjson.dumps(out, default=str).decode()


class TextFormatter(logging.Formatter):
    """For humans (``make run``): the message, then the extra fields as
    ``key=value`` (a game id, a reason: what the JSON line says too)."""

    def __init__(self, service: str) -> None:
        super().__init__(f"%(asctime)s {service} %(levelname)s %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        extra = [f"{k}={v}" for k, v in record.__dict__.items()
                 if k not in _STD and not k.startswith("_")]
        if not extra:
            return line
        head, sep, rest = line.partition("\n")  # a traceback stays below
        return f"{head}  {' '.join(extra)}{sep}{rest}"


def setup(service: str, level: str = "INFO", fmt: str = "json") -> logging.Logger:
    handler = logging.StreamHandler(sys.stderr)
    if fmt == "json":
        handler.setFormatter(JsonFormatter(service))
    else:
        handler.setFormatter(TextFormatter(service))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    logging.getLogger("nats").setLevel(max(logging.WARNING, root.level))
    return logging.getLogger(f"ttanjit.{service}")
