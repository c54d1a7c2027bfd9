"""The TrafficRouter contract (DESIGN §3), for every provider, against the real API server.

- ``ensure`` of a step changes the objects and is not converged; the same call again finds
  nothing to do: converged, no change; the objects hold the step's weights or match rules;
- ``restore`` gives every user object back exactly and removes what the rollout created;
  a second ``restore`` (or one on an untouched world) is converged with no change.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest

from kruise.core.errors import NotFoundError
from kruise.core.kube import KubeClient
from kruise.traffic.intent import RouteReport, TrafficIntent, TrafficRouter
from kruise.traffic.registry import build_router
from tests.integration.traffic.providers import CANARY, CASES, MATCHES, STABLE, Case


def step(
    namespace: str, weight: int | None = None, matches: list[dict[str, object]] | None = None
) -> TrafficIntent:
    return TrafficIntent(
        namespace=namespace,
        stable_service=STABLE,
        canary_service=CANARY,
        weight=weight,
        matches=tuple(matches or ()),
        revision_key="pod-template-hash",
        stable_revision="v1",
        canary_revision="v2",
    )


async def router_for(case: Case, kube: KubeClient, namespace: str) -> TrafficRouter:
    source = await case.setup(kube, namespace)
    return build_router(kube, case.ref, namespace, source)


async def converge(call: Callable[[], Awaitable[RouteReport]], attempts: int = 5) -> list[RouteReport]:
    """Call until converged; the reports in order (a provider may need a few calls)."""
    reports: list[RouteReport] = []
    for _ in range(attempts):
        report = await call()
        reports.append(report)
        if report.converged:
            return reports
    raise AssertionError(f"not converged after {attempts} calls: {reports}")


cases = pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])


@cases
async def test_weight_step_changes_once_then_converges(case: Case, kube: KubeClient, namespace: str) -> None:
    router = await router_for(case, kube, namespace)
    first = await router.ensure(step(namespace, 20))
    assert first.changed and not first.converged, first
    second = await router.ensure(step(namespace, 20))
    assert second.converged and not second.changed, second
    assert set(await case.weights(kube, namespace)) == {(80, 20)}

    moved = await router.ensure(step(namespace, 50))
    assert moved.changed and not moved.converged
    assert (await router.ensure(step(namespace, 50))).converged
    assert set(await case.weights(kube, namespace)) == {(50, 50)}


@cases
async def test_match_step_routes_matching_requests_to_canary(
    case: Case, kube: KubeClient, namespace: str
) -> None:
    router = await router_for(case, kube, namespace)
    first = await router.ensure(step(namespace, None, MATCHES))
    assert first.changed and not first.converged, first
    second = await router.ensure(step(namespace, None, MATCHES))
    assert second.converged and not second.changed, second
    assert await case.matched(kube, namespace)


@cases
async def test_restore_gives_back_the_original_objects(case: Case, kube: KubeClient, namespace: str) -> None:
    router = await router_for(case, kube, namespace)
    original = await case.snapshot(kube, namespace)

    untouched = await router.restore(step(namespace))
    assert untouched.converged and not untouched.changed, untouched

    await converge(lambda: router.ensure(step(namespace, 20)))
    await converge(lambda: router.ensure(step(namespace, None, MATCHES)))
    assert await case.snapshot(kube, namespace) != original

    reports = await converge(lambda: router.restore(step(namespace)))
    assert reports[0].changed and not reports[0].converged
    assert reports[-1].converged and not reports[-1].changed
    assert await case.snapshot(kube, namespace) == original


@cases
async def test_a_step_without_traffic_changes_nothing(case: Case, kube: KubeClient, namespace: str) -> None:
    router = await router_for(case, kube, namespace)
    original = await case.snapshot(kube, namespace)
    report = await router.ensure(step(namespace))
    assert report.converged and not report.changed
    assert await case.snapshot(kube, namespace) == original


@cases
async def test_ensure_on_missing_objects_is_not_found(case: Case, kube: KubeClient, namespace: str) -> None:
    router = build_router(kube, case.ref, namespace)
    with pytest.raises(NotFoundError):
        await router.ensure(step(namespace, 20))
    restored = await router.restore(step(namespace))
    assert restored.converged and not restored.changed
