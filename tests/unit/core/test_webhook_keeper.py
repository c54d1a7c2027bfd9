"""The match-condition keeper decides from the informer's copy: equal costs no request, drift is
rewritten from that copy, and a stale copy (our own write not seen yet) is not trusted."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kruise.core.errors import ConflictError
from kruise.core.informer import Delta, EventType
from kruise.core.kube.resources import MUTATING_WEBHOOKS
from kruise.core.webhook.conditions import MatchCondition
from kruise.core.webhook.configuration import MUTATING_NAME, VALIDATING_NAME, conditions_differ
from kruise.core.webhook.keeper import ConditionKeeper, cache_decides

A = (MatchCondition("c", "a"),)
B = (MatchCondition("c", "b"),)


def config(
    conditions: tuple[MatchCondition, ...], rv: str = "1", name: str = MUTATING_NAME
) -> dict[str, Any]:
    hook: dict[str, Any] = {"name": "mpod.kb.io"}
    if conditions:
        hook["matchConditions"] = [c.to_dict() for c in conditions]
    return {"metadata": {"name": name, "resourceVersion": rv}, "webhooks": [hook, {"name": "other"}]}


class Kube:
    """Records requests; ``live`` is the API server's object."""

    def __init__(self, live: dict[str, Any]) -> None:
        self.live = live
        self.requests: list[str] = []

    async def get_or_none(self, res: Any, name: str) -> dict[str, Any] | None:
        self.requests.append("GET")
        return copy.deepcopy(self.live)

    async def replace(self, res: Any, obj: dict[str, Any]) -> dict[str, Any]:
        self.requests.append("PUT")
        if obj["metadata"]["resourceVersion"] != self.live["metadata"]["resourceVersion"]:
            raise ConflictError(409, "Conflict", "the object has been modified")
        self.live = copy.deepcopy(obj)
        self.live["metadata"]["resourceVersion"] = str(int(obj["metadata"]["resourceVersion"]) + 1)
        return self.live


def keeper(kube: Kube, cached: dict[str, Any] | None) -> ConditionKeeper:
    box = {"c": cached}
    k = ConditionKeeper(kube, "mpod.kb.io", "mpod", mutating=True, cached=lambda: box["c"])  # type: ignore[arg-type]
    k.box = box  # type: ignore[attr-defined]
    return k


def test_conditions_differ() -> None:
    assert conditions_differ(config(A), "mpod.kb.io", A) is False
    assert conditions_differ(config(A), "mpod.kb.io", B) is True
    assert conditions_differ(config(()), "mpod.kb.io", ()) is False
    assert conditions_differ(config(A), "absent.kb.io", A) is None
    assert conditions_differ(None, "mpod.kb.io", A) is None


def test_cache_decides_unless_we_last_wrote_something_else() -> None:
    assert cache_decides(None, A)
    assert cache_decides(A, A)
    assert not cache_decides(B, A)


async def test_equal_cached_copy_costs_no_request() -> None:
    kube = Kube(config(A))
    k = keeper(kube, config(A))
    assert await k.ensure(A, reread=True) is False
    assert await k.ensure(A, reread=True) is False
    assert kube.requests == []


async def test_drift_in_the_cached_copy_is_rewritten_from_it() -> None:
    kube = Kube(config(B, rv="7"))
    k = keeper(kube, config(B, rv="7"))
    assert await k.ensure(A, reread=True) is True
    assert kube.requests == ["PUT"]  # no GET: the copy had the live resourceVersion
    assert conditions_differ(kube.live, "mpod.kb.io", A) is False
    assert kube.live["webhooks"][1] == {"name": "other"}  # the other webhook is left alone


async def test_a_stale_copy_conflicts_then_the_live_object_is_read() -> None:
    kube = Kube(config(A, rv="9"))  # someone already moved it on
    k = keeper(kube, config(B, rv="3"))
    assert await k.ensure(A, reread=True) is False
    assert kube.requests == ["PUT", "GET"]


async def test_after_writing_something_else_the_live_object_decides() -> None:
    kube = Kube(config(A, rv="1"))
    k = keeper(kube, config(A, rv="1"))
    assert await k.ensure(B, reread=True) is True  # live: B at rv 2; the cache still shows A
    kube.requests.clear()
    assert await k.ensure(A, reread=True) is True  # the stale copy's "A" is not believed
    assert kube.requests == ["GET", "PUT"]
    assert conditions_differ(kube.live, "mpod.kb.io", A) is False


async def test_absent_from_the_cache_is_left_to_its_creation_event() -> None:
    kube = Kube(config(B))
    k = keeper(kube, None)
    assert await k.ensure(A, reread=True) is False
    assert kube.requests == []


@pytest.mark.parametrize(("name", "woken"), [(MUTATING_NAME, ("mpod",)), (VALIDATING_NAME, ()), ("x", ())])
def test_only_our_configuration_wakes_the_key(name: str, woken: tuple[str, ...]) -> None:
    watch = keeper(Kube(config(A)), None).watch()
    assert watch.resource == MUTATING_WEBHOOKS
    obj = config(A, name=name)
    assert tuple(watch.keys(Delta(EventType.MODIFIED, obj, obj).obj)) == woken
