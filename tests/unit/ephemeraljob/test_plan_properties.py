"""Properties of ``plan()`` over random pods: whatever the pods' states, ``parallelism`` bounds
the pods working at once, ``replicas`` the targets, the counters add up, and a round decided again
on its own status changes nothing."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kruise.workloads.ephemeraljob.containers import ContainerState, Settings, has_job_containers, pod_state
from kruise.workloads.ephemeraljob.plan import plan
from tests.unit.ephemeraljob.builders import (
    EXIT_0,
    EXIT_1,
    NOW,
    RUN_ERROR,
    RUNNING,
    WAITING,
    injected,
    job,
    pod,
)

JSON = dict[str, Any]
STATES: list[JSON | None] = [None, RUNNING, WAITING, EXIT_0, EXIT_1, RUN_ERROR]
# per pod: not injected / injected by us with a state (None: unreported) / another job's container
POD = st.one_of(
    st.just(("fresh", None)),
    st.tuples(st.just("ours"), st.sampled_from(STATES)),
    st.just(("theirs", None)),
)


def _pods(specs: list[tuple[str, JSON | None]]) -> list[JSON]:
    out = []
    for i, (kind, state) in enumerate(specs):
        ephemeral = {"fresh": [], "ours": [injected()], "theirs": [injected(uid="other")]}[kind]
        states = {} if state is None else {"debugger": state}
        out.append(pod(f"p{i}", age=len(specs) - i, ephemeral=ephemeral, states=states))
    return out


@settings(max_examples=200, deadline=None)
@given(
    specs=st.lists(POD, max_size=8),
    replicas=st.one_of(st.none(), st.integers(0, 8)),
    parallelism=st.integers(1, 4),
)
def test_parallelism_replicas_and_counters(
    specs: list[tuple[str, JSON | None]], replicas: int | None, parallelism: int
) -> None:
    extra: JSON = (
        {"parallelism": parallelism}
        if replicas is None
        else {"parallelism": parallelism, "replicas": replicas}
    )
    j = job(**extra)
    pods = _pods(specs)
    p = plan(j, pods, NOW)
    assert p.status is not None
    s = Settings.of(j)
    by_name = {x["metadata"]["name"]: x for x in pods}
    targets = [by_name[n] for n in p.targets]
    assert replicas is None or len(targets) <= replicas
    assert not any(x["spec"]["ephemeralContainers"] and not has_job_containers(s, x) for x in targets)
    in_flight = sum(
        has_job_containers(s, x) and pod_state(s, x) not in (ContainerState.SUCCEEDED, ContainerState.FAILED)
        for x in targets
    )
    assert set(p.inject) <= {n for n in p.targets if not has_job_containers(s, by_name[n])}
    if p.inject:
        assert in_flight + len(p.inject) <= parallelism
    st_ = p.status
    assert st_.match == len(targets)
    assert st_.succeeded + st_.failed + st_.running + st_.waiting <= st_.match
    again = plan({**j, "status": st_.to_dict()}, pods, NOW)
    if st_.completion_time is not None:  # finished: only the TTL is left to wait for
        assert (again.status, again.inject, again.delete_job) == (None, (), False)
    else:
        assert again.status is not None and again.status.to_dict() == st_.to_dict()
