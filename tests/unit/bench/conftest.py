"""bench/ holds scripts, not a package: its modules import each other by name, so tests do too."""

from __future__ import annotations

import sys
from pathlib import Path

BENCH = str(Path(__file__).resolve().parents[3] / "bench")
if BENCH not in sys.path:
    sys.path.insert(0, BENCH)
