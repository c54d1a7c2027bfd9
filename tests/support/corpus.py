"""Where the tests find upstream's example manifests (the conformance corpus).

``tests/data/upstream-examples`` is a vendored copy of the corpus (OpenKruise, Kruise Rollouts
and Argo Rollouts examples; provenance in its README.md), so a clean clone runs the suite
without anything beside it.
"""

from __future__ import annotations

from pathlib import Path

UPSTREAM_EXAMPLES = Path(__file__).resolve().parents[1] / "data" / "upstream-examples"
"""The corpus root: ``kruise/``, ``kruise-rollouts/``, ``argo-rollouts/`` by project and kind."""
