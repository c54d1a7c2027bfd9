"""What the corpus README says upstream itself does with an example (DESIGN §6).

``shared/upstream-examples/README.md`` has a table "Static check against the upstream CRD
schemas": per file, the schema findings (upstream's API server rejects the object) and the
unknown fields (upstream's API server prunes them). The conformance test holds our API server
to the same outcome.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_ROW = re.compile(r"^\|\s*`(?P<file>[^`]+\.yaml)`\s*\|(?P<rest>.*)\|\s*$")
_REQUIRED = re.compile(r"^(?P<parent>\.[^:]*): '(?P<name>[^']+)' is a required property$")
_SEGMENT = re.compile(r"\.([^.\[\]]+)|\[(\d+)\]")


@dataclass(frozen=True)
class Findings:
    """One README row: schema findings (texts) and unknown field paths (``.spec.a[0].b``)."""

    schema: tuple[str, ...]
    unknown: tuple[str, ...]

    def required_errors(self) -> list[str]:
        """The API server's messages for the ``'x' is a required property`` findings.

        ``.spec: 'releasePlan' is a required property`` -> ``spec.releasePlan: Required value``.
        """
        out = []
        for finding in self.schema:
            match = _REQUIRED.match(finding)
            if match:
                out.append(f"{match['parent'].lstrip('.')}.{match['name']}: Required value")
        return out


def _cells(rest: str) -> list[str]:
    """Split a Markdown row remainder on unescaped ``|``."""
    return [cell.replace("\\|", "|").strip() for cell in re.split(r"(?<!\\)\|", rest)]


def static_findings(readme: Path) -> dict[str, Findings]:
    """Parse the README's static-check table: relative file path -> :class:`Findings`."""
    if not readme.is_file():
        return {}
    text = readme.read_text(encoding="utf-8")
    start = text.find("## Static check")
    end = text.find("\n## ", start + 1)
    out: dict[str, Findings] = {}
    for line in text[start:end].splitlines():
        match = _ROW.match(line)
        if not match:
            continue
        schema_cell, unknown_cell = _cells(match["rest"])[:2]
        schema = () if schema_cell == "—" else tuple(s.strip() for s in schema_cell.split("; "))
        unknown = tuple(re.findall(r"`([^`]+)`", unknown_cell))
        out[match["file"]] = Findings(schema, unknown)
    return out


def without(doc: dict[str, Any], paths: tuple[str, ...]) -> dict[str, Any]:
    """A copy of ``doc`` without the fields at ``paths`` (README syntax, from the document root)."""
    out = copy.deepcopy(doc)
    for path in paths:
        steps: list[str | int] = [name or int(index) for name, index in _SEGMENT.findall(path)]
        node: Any = out
        for step in steps[:-1]:
            if isinstance(node, dict) and isinstance(step, str):
                node = node.get(step)
            elif isinstance(node, list) and isinstance(step, int) and step < len(node):
                node = node[step]
            else:
                node = None
        if isinstance(node, dict) and isinstance(steps[-1], str):
            node.pop(steps[-1], None)
    return out
