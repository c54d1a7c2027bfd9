"""200 generated malformed CloneSets and Rollouts (seeded, :mod:`.malformed`) through the real API
server, CRD schemas and webhooks (server-side dry run: nothing is stored).

Each one is refused with a message naming its field, or accepted where upstream accepts it (the
list is in :mod:`.malformed`); afterwards the manager's log holds no traceback (the mutating
webhooks see these objects before the schema does, and must not crash on them).
"""

from __future__ import annotations

import os
from collections import Counter

import pytest

from kruise.core.errors import ApiError
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CLONESETS
from kruise.rollouts.manager.process import ManagerProcess
from kruise.rollouts.resources import ROLLOUTS
from tests.integration.cloneset.test_cloneset_inplace import web_cloneset
from tests.integration.faults.malformed import Case, generate
from tests.integration.rollouts import helpers as h

SEED = int(os.environ.get("KRUISE_FAULT_SEED", "11"))
COUNT = 200


async def verdict(kube: KubeClient, namespace: str, case: Case) -> str | None:
    """The refusal message, or None when the object was accepted."""
    if case.kind == "CloneSet":
        body, res = case.apply(web_cloneset(namespace, replicas=2, partition=0)), CLONESETS
    else:
        base = h.rollout(namespace, [{"replicas": 1, "pause": {}}, {"replicas": "100%"}])
        body, res = case.apply(base), ROLLOUTS
    try:
        await kube.create(res, body, namespace, dry_run=True)
    except ApiError as err:
        assert err.status in (400, 422), f"{case.path}={case.value!r}: {err}"
        return err.message
    return None


async def test_malformed_objects_are_refused_with_their_field_named(
    kube: KubeClient, namespace: str, manager: ManagerProcess
) -> None:
    log_start = manager.log_path.stat().st_size
    tally: Counter[str] = Counter()
    problems: list[str] = []
    for case in generate(SEED, COUNT):
        message = await verdict(kube, namespace, case)
        outcome = case.outcome
        if outcome.accepted:
            tally["accepted"] += 1
            if message is not None:
                problems.append(
                    f"{case.kind} {case.path}={case.value!r} refused, upstream accepts: {message}"
                )
            continue
        tally["refused"] += 1
        if message is None:
            problems.append(f"{case.kind} {case.path}={case.value!r} accepted")
        elif not all(fragment in message.lower() for fragment in outcome.fragments):
            problems.append(f"{case.kind} {case.path}={case.value!r}: {outcome.fragments} not in {message}")
    print(f"\n[kruise] seed {SEED}: {COUNT} malformed objects, {dict(tally)}")
    assert not problems, "\n".join(problems)
    log = manager.log_path.read_bytes()[log_start:].decode(errors="replace")
    assert "Traceback" not in log, log[log.index("Traceback") - 500 :][:4000]


@pytest.fixture(autouse=True)
def _seed_in_report(request: pytest.FixtureRequest) -> None:
    request.node.user_properties.append(("fault_seed", SEED))
