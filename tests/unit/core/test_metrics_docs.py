"""docs/metrics.md documents every series the manager exports (beyond process metrics)."""

from __future__ import annotations

from pathlib import Path

from prometheus_client import REGISTRY

from kruise.rollouts.manager.metrics import StateSources

DOCS = Path(__file__).resolve().parents[3] / "docs" / "metrics.md"
OURS = (
    "controller_runtime_",
    "workqueue_",
    "rest_client_",
    "leader_election_",
    "kruise_",
    "rollout_",
    "analysis_run_",
)


def exposed_names() -> set[str]:
    families = [*REGISTRY.collect()]
    for collector in StateSources().collectors():
        families.extend(collector.describe())
    names = {f.name + "_total" if f.type == "counter" else f.name for f in families}
    return {n for n in names if n.startswith(OURS)}


def test_every_exported_family_is_in_the_metrics_table() -> None:
    text = DOCS.read_text()
    names = exposed_names()
    assert len(names) >= 50
    undocumented = sorted(n for n in names if f"`{n}`" not in text and not _in_group(n, text))
    assert not undocumented, f"add to docs/metrics.md: {undocumented}"


def _in_group(name: str, text: str) -> bool:
    """``rollout_info_replicas_available``, ``_unavailable``, ... share one row."""
    base, _, suffix = name.rpartition("_")
    return f"`{base}_available`" in text and f"`_{suffix}`" in text
