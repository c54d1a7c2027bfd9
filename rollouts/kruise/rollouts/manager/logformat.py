"""Log line formats of ``kruise manager``: ``text`` (the default) or ``json`` (``--logging-format``).

kruise-manager's ``--logging-format=json`` writes one JSON object per line for log collectors;
ours carries ``ts`` (RFC 3339, UTC), ``level``, ``logger`` and ``msg`` (plus ``error`` with the
traceback when there is one).
"""

from __future__ import annotations

import datetime
import json
import logging

TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class JsonFormatter(logging.Formatter):
    """One JSON object per record."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "ts": datetime.datetime.fromtimestamp(record.created, datetime.UTC).isoformat(
                timespec="milliseconds"
            ),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        if record.exc_info:
            entry["error"] = self.formatException(record.exc_info)
        return json.dumps(entry)


def configure_logging(level: str, fmt: str = "text") -> None:
    """Root logging at ``level`` in the ``text`` or ``json`` format (``ValueError`` otherwise)."""
    if fmt not in ("", "text", "json"):
        raise ValueError(f"logging format {fmt!r}: want text or json")
    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter() if fmt == "json" else logging.Formatter(TEXT_FORMAT))
    logging.basicConfig(level=level, handlers=[handler])
