"""Text of a Rollout's recorded releases, its RolloutHistories (pure), for ``rollout history``.

``releases_table`` lists one release per row (``ROLLOUT-ID  PHASE  STEPS  PODS  AGE``, oldest
first; PHASE is the history's ``completed`` or ``-`` while it is not); ``release_steps`` lists the
pods each step of one release released (``STEP  POD  IP  NODE``), ``<none>`` for a step whose pods
are not known.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from typing import Any

from kruise.rollouts.cli.views import human_age, table


def _parse(stamp: Any) -> datetime.datetime | None:
    try:
        return datetime.datetime.fromisoformat(str(stamp).replace("Z", "+00:00"))
    except ValueError:
        return None


def history_id(history: Mapping[str, Any]) -> str:
    """The release's rollout-id (``spec.rollout.rolloutID``)."""
    return str(((history.get("spec") or {}).get("rollout") or {}).get("rolloutID") or "")


def releases_table(histories: Sequence[Mapping[str, Any]], now: datetime.datetime) -> str:
    """One row per RolloutHistory, oldest first."""
    ordered = sorted(histories, key=lambda h: str((h.get("metadata") or {}).get("creationTimestamp") or ""))
    rows = [["ROLLOUT-ID", "PHASE", "STEPS", "PODS", "AGE"]]
    for history in ordered:
        status = history.get("status") or {}
        steps = status.get("canarySteps") or []
        created = _parse((history.get("metadata") or {}).get("creationTimestamp"))
        age = human_age((now - created).total_seconds()) if created else "<unknown>"
        pods = sum(len(s.get("pods") or []) for s in steps)
        rows.append([history_id(history), str(status.get("phase") or "-"), str(len(steps)), str(pods), age])
    return table(rows)


def release_steps(history: Mapping[str, Any]) -> str:
    """The pods of every step of one release."""
    rows = [["STEP", "POD", "IP", "NODE"]]
    for step in (history.get("status") or {}).get("canarySteps") or []:
        index = str(step.get("canaryStepIndex") or "")
        pods = step.get("pods") or []
        if not pods:
            rows.append([index, "<none>", "", ""])
        for pod in pods:
            rows.append(
                [index, str(pod.get("name") or ""), str(pod.get("ip") or ""), str(pod.get("nodeName") or "")]
            )
    status = history.get("status") or {}
    head = f"rollout-id {history_id(history)}: {status.get('phase') or 'not completed'}\n"
    return head + table(rows)
