"""Registration rows: :func:`kruise.core.runtime.wire` adds exactly the enabled rows, in order,
each over its own cache view, binds controllers that take an enqueue, kicks the rows that ask,
and refuses two rows of one name; the manager's and the daemon's tables obey the same rules."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

import pytest

from kruise.core.kube.resources import PODS
from kruise.core.runtime import ControllerRow, ControllerSpec, Runtime, ScopedCache, primary, wire
from kruise.core.workqueue import Result


@dataclass
class Ctx:
    gates: dict[str, bool]
    seen: list[str] = field(default_factory=list)


class Plain:
    def __init__(self, name: str, view: ScopedCache) -> None:
        self.name, self.view = name, view

    def spec(self) -> ControllerSpec:
        return ControllerSpec(name=self.name, watches=(primary(PODS),))

    async def reconcile(self, key: str) -> Result | None:
        return None


class Bound(Plain):
    enqueue: Callable[[str], None] | None = None

    def bind(self, enqueue: Callable[[str], None]) -> None:
        self.enqueue = enqueue


def build(kind: type[Plain]) -> Callable[[Ctx, ScopedCache], Plain]:
    def make(ctx: Ctx, view: ScopedCache) -> Plain:
        ctx.seen.append(view.name)
        return kind(view.name, view)

    return make


def runtime() -> Runtime:
    return Runtime(cast(Any, object()))  # wiring does no I/O


def test_only_enabled_rows_are_wired_in_order_each_over_its_own_view() -> None:
    rt, ctx = runtime(), Ctx({"B": False})
    rows = [
        ControllerRow[Ctx]("a", build(Plain)),
        ControllerRow[Ctx]("b", build(Plain), lambda c: c.gates.get("B", True)),
        ControllerRow[Ctx]("c", build(Plain)),
    ]
    built = wire(rt, rows, ctx)
    assert list(built) == ["a", "c"]
    assert ctx.seen == ["a", "c"]
    assert [c.name for c in rt.controllers] == ["a", "c"]
    assert cast(Plain, built["c"]).view.name == "c"


def test_bind_gets_the_queue_and_kick_enqueues_once() -> None:
    rt, ctx = runtime(), Ctx({})
    built = wire(rt, [ControllerRow[Ctx]("b", build(Bound), kick="start")], ctx)
    bound = cast(Bound, built["b"])
    assert bound.enqueue is not None
    queue = rt.controller("b").queue
    assert len(queue) == 1
    bound.enqueue("later")
    assert len(queue) == 2


def test_a_later_row_sees_earlier_ones_through_the_shared_dict() -> None:
    rt, got = runtime(), {}
    shared: dict[str, Any] = {}

    def second(ctx: Ctx, view: ScopedCache) -> Plain:
        got["first"] = shared.get("first")
        return Plain("second", view)

    wire(
        rt, [ControllerRow[Ctx]("first", build(Plain)), ControllerRow[Ctx]("second", second)], Ctx({}), shared
    )
    assert isinstance(got["first"], Plain)
    assert set(shared) == {"first", "second"}


def test_two_rows_of_one_name_are_refused() -> None:
    with pytest.raises(ValueError, match="'a' is added twice"):
        wire(
            runtime(), [ControllerRow[Ctx]("a", build(Plain)), ControllerRow[Ctx]("a", build(Plain))], Ctx({})
        )


def test_the_manager_rows_in_order_and_under_upstream_gates() -> None:
    from kruise.rollouts.manager.controllers import build_runtime
    from kruise.rollouts.manager.options import ManagerOptions

    def names(opts: ManagerOptions) -> list[str]:
        return [c.name for c in build_runtime(cast(Any, object()), opts).controllers]

    assert names(ManagerOptions()) == [
        "cloneset-controller", "pod-webhook-scope", "sidecarset-controller", "statefulset-controller",
        "daemonset-controller", "broadcastjob-controller", "advancedcronjob-controller",
        "ephemeraljob-controller", "uniteddeployment-controller", "container-launch-priority",
        "pub-webhook-scope",
        "podunavailablebudget-controller", "persistentpodstate-controller",
        "workloadspread-controller", "containerrecreaterequest-controller",
        "podprobemarker-controller", "nodepodprobe-controller", "nodeimage-controller",
        "imagepulljob-controller", "imagelistpulljob-controller", "rollout-controller",
        "batchrelease-controller", "advanced-deployment-controller", "native-daemonset-controller",
        "trafficrouting-controller", "analysisrun-controller",
    ]  # fmt: skip
    gates = {"KruiseDaemon": False, "RolloutHistory": True, "PodWebhook": False, "ImagePullJobGate": False}
    gated = set(names(ManagerOptions(feature_gates={**ManagerOptions().feature_gates, **gates})))
    assert not gated & {
        "containerrecreaterequest-controller", "podprobemarker-controller", "nodepodprobe-controller",
        "pod-webhook-scope", "imagepulljob-controller", "imagelistpulljob-controller",
        "pub-webhook-scope", "podunavailablebudget-controller", "workloadspread-controller",
    }  # fmt: skip
    assert {"rollouthistory-controller", "nodeimage-controller", "sidecarset-controller"} <= gated


def test_the_daemon_rows_under_its_gates() -> None:
    from kruise.daemon.app import compose
    from kruise.daemon.options import DaemonOptions

    def names(gates: dict[str, bool]) -> list[str]:
        runtime, _ = compose(
            cast(Any, object()), cast(Any, object()), DaemonOptions(node_name="n", feature_gates=gates)
        )
        return [c.name for c in runtime.controllers]

    assert names({}) == [
        "imagepuller",
        "containerrecreaterequest-daemon",
        "kruise-daemon-podprobe",
        "containermeta",
    ]
    assert names({"PodProbeMarkerGate": False, "DaemonWatchingPod": False}) == [
        "imagepuller", "containerrecreaterequest-daemon",
    ]  # fmt: skip
