"""A seeded generator of malformed CloneSets and Rollouts, each with the outcome upstream gives it.

A case is one field of a valid object set to a generated bad value. :data:`CLONESET_FIELDS` and
:data:`ROLLOUT_FIELDS` list, per field, generators of values and what must happen to them:
``refused(*fragments)`` (the answer names the field: every fragment appears, case-insensitively,
in the error) or ``accepted(reason)`` (upstream accepts the value too; the reason says why).

Accepted on purpose, as upstream (OpenKruise v1.8, Kruise Rollouts):
- a fractional ``partition`` percentage (kruise's float helper, since v1.4);
- a negative ``minReadySeconds`` or ``revisionHistoryLimit`` (upstream's webhook checks neither);
- an image with a space inside (Kubernetes only refuses leading or trailing whitespace);
- a negative ``pause.duration`` of a Rollout step (not validated upstream).
Refused where upstream v1.8 accepts: ``maxUnavailable``/``maxSurge`` given as ``"5%%"`` or a bare
number string (upstream v1.9 refuses them too) or a fraction (its controller would read 0), and
malformed ``scaleStrategy.maxUnavailable`` (upstream never validates it; its controller reads 0).
"""

from __future__ import annotations

import copy
import random
import string
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

JSON = dict[str, Any]


@dataclass(frozen=True)
class Outcome:
    accepted: bool
    fragments: tuple[str, ...] = ()
    reason: str = ""


def refused(*fragments: str) -> Outcome:
    return Outcome(False, tuple(f.lower() for f in fragments))


def accepted(reason: str) -> Outcome:
    return Outcome(True, reason=reason)


Generator = Callable[[random.Random], tuple[Any, Outcome]]


@dataclass(frozen=True)
class Case:
    kind: str  # CloneSet | Rollout
    path: str
    value: Any
    outcome: Outcome

    @property
    def key(self) -> tuple[str, str, str]:
        return self.kind, self.path, repr(self.value)

    def apply(self, base: JSON) -> JSON:
        """``base`` with ``path`` (dots, ``[i]`` indices) set to the value."""
        out = copy.deepcopy(base)
        target: Any = out
        parts = _parts(self.path)
        for part in parts[:-1]:
            target = target[part] if isinstance(part, int) else target.setdefault(part, {})
        target[parts[-1]] = self.value
        return out


def _parts(path: str) -> list[str | int]:
    parts: list[str | int] = []
    for piece in path.split("."):
        name, *indices = piece.split("[")
        parts.append(name)
        parts.extend(int(i.rstrip("]")) for i in indices)
    return parts


# ------------------------------------------------------------------------------ random values
def word(rng: random.Random) -> str:
    return "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(3, 8)))


def bad_percent(rng: random.Random) -> str:
    n, m, k = rng.randint(1, 99), rng.randint(0, 9), rng.randint(0, 9)
    return rng.choice(
        [f"{n}%%", f"%{n}", f"{n}.{m}.{k}%", f"{word(rng)}%", f"{n} %", "%", f"{n}percent", f"{n}%{m}"]
    )


def big(rng: random.Random) -> int:
    return rng.choice([1, -1]) * rng.randint(2**31 + 1, 2**40)


def not_a(kind: type, rng: random.Random) -> Any:
    """A JSON value of another type than ``kind`` (str, int, bool, list, dict)."""
    candidates: list[Any] = [word(rng), rng.randint(1, 500), True, [rng.randint(1, 9)], {"x": word(rng)}]
    if kind is int:
        candidates.append(rng.randint(1, 99) + 0.5)
    return rng.choice([c for c in candidates if type(c) is not kind])


def int_or_string_wrong_type(rng: random.Random) -> Any:
    return rng.choice([True, [rng.randint(1, 9)], {"x": 1}, rng.randint(1, 99) + 0.5])


# ------------------------------------------------------------------------------ the catalogue
def field(
    outcome: Callable[[str], Outcome], *values: Callable[[random.Random], Any]
) -> Callable[[str], Generator]:
    """Generators for one field: a value from one of ``values``, judged by ``outcome(path)``."""

    def at(path: str) -> Generator:
        return lambda rng: (rng.choice(values)(rng), outcome(path))

    return at


def named(path: str) -> Outcome:
    return refused(path)


def fraction(rng: random.Random) -> str:
    return f"{rng.randint(1, 98)}.{rng.randint(1, 9)}%"


def integer_percent(path: str) -> Generator:
    """An int-or-integer-percentage field: malformed, wrongly typed, beyond int32, a bare number
    string or a fraction."""
    return field(
        named, bad_percent, int_or_string_wrong_type, big, lambda r: str(r.randint(1, 99)), fraction
    )(path)


CONTAINER = "spec.template.spec.containers[0]"

CLONESET_FIELDS: dict[str, list[Generator]] = {
    "spec.replicas": [
        field(named, lambda r: not_a(int, r), big)("spec.replicas"),
        field(named, lambda r: -r.randint(1, 100))("spec.replicas"),
    ],
    "spec.minReadySeconds": [
        field(named, lambda r: not_a(int, r), big)("spec.minReadySeconds"),
        lambda r: (-r.randint(1, 100), accepted("upstream does not validate minReadySeconds")),
    ],
    "spec.revisionHistoryLimit": [
        field(named, lambda r: not_a(int, r), big)("spec.revisionHistoryLimit"),
        lambda r: (-r.randint(1, 100), accepted("upstream does not validate revisionHistoryLimit")),
    ],
    "spec.updateStrategy.partition": [
        field(named, bad_percent, int_or_string_wrong_type, big, lambda r: -r.randint(1, 50))(
            "spec.updateStrategy.partition"
        ),
        lambda r: (fraction(r), accepted("kruise parses partitions as floats")),
    ],
    "spec.updateStrategy.maxUnavailable": [integer_percent("spec.updateStrategy.maxUnavailable")],
    "spec.updateStrategy.maxSurge": [integer_percent("spec.updateStrategy.maxSurge")],
    "spec.updateStrategy": [field(named, word, lambda r: [word(r)])("spec.updateStrategy")],
    "spec.scaleStrategy": [field(named, word, lambda r: r.randint(1, 9))("spec.scaleStrategy")],
    "spec.template": [field(named, word, lambda r: [word(r)])("spec.template")],
    "spec.template.spec": [field(named, word, lambda r: r.randint(1, 9))("spec.template.spec")],
    "spec.template.spec.containers": [
        field(named, word, lambda r: {"x": 1})("spec.template.spec.containers")
    ],
    "spec.lifecycle": [field(named, word, lambda r: [1])("spec.lifecycle")],
    "spec.updateStrategy.type": [
        field(named, lambda r: word(r).capitalize(), lambda r: r.randint(1, 9), lambda r: {"x": 1})(
            "spec.updateStrategy.type"
        )
    ],
    "spec.updateStrategy.paused": [field(named, lambda r: not_a(bool, r))("spec.updateStrategy.paused")],
    "spec.updateStrategy.priorityStrategy": [
        field(
            named,
            lambda r: {
                "weightPriority": [
                    {"weight": r.randint(101, 999), "matchSelector": {"matchLabels": {"a": "b"}}}
                ]
            },
            lambda r: {"orderPriority": [{"orderedKey": ""}]},
        )("spec.updateStrategy.priorityStrategy")
    ],
    "spec.updateStrategy.scatterStrategy": [
        field(
            named,
            lambda r: [{"key": "", "value": word(r)}],
            lambda r: [{"key": "zone", "value": "a"}, {"key": "zone", "value": "a"}],
            lambda r: word(r),
        )("spec.updateStrategy.scatterStrategy")
    ],
    "spec.scaleStrategy.maxUnavailable": [
        field(named, bad_percent, big)("spec.scaleStrategy.maxUnavailable")
    ],
    "spec.scaleStrategy.podsToDelete": [
        field(named, lambda r: [word(r)], lambda r: ["web-a", "web-a"], lambda r: word(r))(
            "spec.scaleStrategy.podsToDelete"
        )
    ],
    "spec.selector": [
        field(named, lambda r: {}, lambda r: word(r), lambda r: {"matchLabels": {"app": r.randint(1, 9)}})(
            "spec.selector"
        ),
        field(named, lambda r: {"matchExpressions": [{"key": "app", "operator": word(r)}]})(
            "spec.selector.matchExpressions[0].operator"
        ),
        field(named, lambda r: {"matchLabels": {"app": word(r)}})("spec.template.metadata.labels"),
    ],
    "spec.template.metadata.labels": [
        field(named, lambda r: {"app": "web", f"{word(r)}!": "x"})("spec.template.labels"),
        field(named, lambda r: {"app": "web", "k": r.randint(1, 9)})("spec.template.metadata.labels.k"),
    ],
    "spec.template.metadata.annotations": [
        field(named, lambda r: {"a": r.randint(1, 9)}, lambda r: {"a": {"b": word(r)}})(
            "spec.template.metadata.annotations.a"
        )
    ],
    f"{CONTAINER}.image": [
        field(named, lambda r: not_a(str, r), lambda r: f" {word(r)}", lambda r: f"{word(r)} ", lambda r: "")(
            f"{CONTAINER}.image"
        ),
        lambda r: (f"registry.example.com/{word(r)} {word(r)}", accepted("Kubernetes trims no inner space")),
    ],
    f"{CONTAINER}.name": [
        field(named, lambda r: word(r).upper(), lambda r: r.randint(1, 9), lambda r: f"{word(r)}_x")(
            f"{CONTAINER}.name"
        )
    ],
    f"{CONTAINER}.ports": [
        field(
            named, lambda r: [{"containerPort": r.randint(65536, 10**6)}], lambda r: [{"containerPort": "80"}]
        )(f"{CONTAINER}.ports[0].containerPort"),
        field(named, lambda r: [{"containerPort": 80, "protocol": word(r).upper()}])(
            f"{CONTAINER}.ports[0].protocol"
        ),
    ],
    f"{CONTAINER}.resources": [
        field(named, lambda r: {"limits": {"cpu": word(r)}})(f"{CONTAINER}.resources.limits.cpu"),
        field(named, lambda r: {"limits": {"memory": f"-{r.randint(1, 9)}Gi"}})(
            f"{CONTAINER}.resources.limits"
        ),
        field(named, lambda r: {"limits": {"cpu": "1"}, "requests": {"cpu": f"{r.randint(2, 9)}"}})(
            f"{CONTAINER}.resources.requests"
        ),
    ],
    f"{CONTAINER}.env": [
        field(named, lambda r: [{"name": "A", "value": r.randint(1, 9)}])(f"{CONTAINER}.env[0].value"),
        field(
            named,
            lambda r: [
                {"name": "A", "value": word(r), "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}
            ],
        )(f"{CONTAINER}.env[0].valueFrom"),
        field(named, lambda r: [{"value": word(r)}])(f"{CONTAINER}.env[0].name"),
    ],
    f"{CONTAINER}.readinessProbe": [
        field(named, lambda r: {"periodSeconds": -r.randint(1, 60), "tcpSocket": {"port": 80}})(
            f"{CONTAINER}.readinessProbe.periodSeconds"
        ),
        field(named, lambda r: {"periodSeconds": r.randint(1, 60)})(f"{CONTAINER}.readinessProbe"),
        field(
            named,
            lambda r: {"httpGet": {"port": True}},
            lambda r: {"httpGet": {"port": r.randint(65536, 10**6)}},
        )(f"{CONTAINER}.readinessProbe.httpGet.port"),
    ],
    "spec.template.spec.restartPolicy": [
        field(named, lambda r: "Never", lambda r: "OnFailure", lambda r: word(r))(
            "spec.template.spec.restartPolicy"
        )
    ],
    "spec.template.spec.activeDeadlineSeconds": [
        field(named, lambda r: r.randint(1, 999))("spec.template.spec.activeDeadlineSeconds")
    ],
    "spec.template.spec.terminationGracePeriodSeconds": [
        field(named, lambda r: not_a(int, r))("spec.template.spec.terminationGracePeriodSeconds")
    ],
    "spec.template.spec.volumes": [
        field(named, lambda r: [{"name": f"{word(r).upper()}_x", "emptyDir": {}}])(
            "spec.template.spec.volumes[0].name"
        ),
        field(named, lambda r: word(r))("spec.template.spec.volumes"),
    ],
    "spec.template.spec.nodeSelector": [
        field(named, lambda r: {"zone": r.randint(1, 9)})("spec.template.spec.nodeSelector.zone")
    ],
    "spec.template.spec.tolerations": [
        field(named, lambda r: [{"key": "k", "operator": word(r)}])(
            "spec.template.spec.tolerations[0].operator"
        )
    ],
    "spec.volumeClaimTemplates": [
        field(named, lambda r: word(r), lambda r: {"x": 1})("spec.volumeClaimTemplates"),
        field(named, lambda r: [{"metadata": {"name": r.randint(1, 9)}}])(
            "spec.volumeClaimTemplates[0].metadata.name"
        ),
        field(named, lambda r: [{"metadata": {"name": "data"}, "spec": {"accessModes": word(r)}}])(
            "spec.volumeClaimTemplates[0].spec.accessModes"
        ),
    ],
    "spec.lifecycle.preDelete": [
        field(named, lambda r: {"labelsHandler": word(r)})("spec.lifecycle.preDelete.labelsHandler"),
        field(named, lambda r: {"labelsHandler": {"a": r.randint(1, 9)}})(
            "spec.lifecycle.preDelete.labelsHandler.a"
        ),
    ],
}

STEPS = "spec.strategy.canary.steps"

ROLLOUT_FIELDS: dict[str, list[Generator]] = {
    "spec.workloadRef": [
        field(named, lambda r: word(r))("spec.workloadRef"),
        field(named, lambda r: {"apiVersion": "v1", "kind": "Pod", "name": "web"})("workloadRef"),
        field(named, lambda r: {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet"})(
            "spec.workloadRef.name"
        ),
    ],
    f"{STEPS}[0].replicas": [
        field(
            named,
            bad_percent,
            int_or_string_wrong_type,
            big,
            lambda r: -r.randint(0, 50),
            lambda r: f"{r.randint(101, 500)}%",
            fraction,
        )(f"{STEPS}[0].replicas")
    ],
    f"{STEPS}[0].traffic": [
        field(lambda p: refused(f"{STEPS}[0]", "traffic"), bad_percent, lambda r: f"{r.randint(101, 500)}%")(
            f"{STEPS}[0].traffic"
        ),
        field(named, int_or_string_wrong_type, lambda r: r.randint(1, 100))(f"{STEPS}[0].traffic"),
    ],
    f"{STEPS}[0].pause": [
        field(named, lambda r: {"duration": word(r)}, lambda r: {"duration": big(r)})(
            f"{STEPS}[0].pause.duration"
        ),
        lambda r: ({"duration": -r.randint(1, 60)}, accepted("upstream does not validate pause durations")),
    ],
    STEPS: [
        field(named, lambda r: [], lambda r: word(r))(STEPS),
        field(
            lambda p: refused("steps.canaryreplicas", "non decreasing"),
            lambda r: [{"replicas": r.randint(5, 9)}, {"replicas": r.randint(1, 4)}],
        )(STEPS),
    ],
    "spec.strategy": [field(named, lambda r: {})("spec.strategy")],
    "spec.strategy.canary.trafficRoutings": [
        field(
            lambda p: refused("trafficrouting.service"),
            lambda r: [{"service": "", "ingress": {"name": "web"}}],
        )("spec.strategy.canary.trafficRoutings"),
        field(
            lambda p: refused("trafficrouting.graceperiodseconds"),
            lambda r: [
                {"service": "web", "gracePeriodSeconds": -r.randint(1, 60), "ingress": {"name": "web"}}
            ],
        )("spec.strategy.canary.trafficRoutings"),
        field(named, lambda r: word(r))("spec.strategy.canary.trafficRoutings"),
    ],
    "spec.disabled": [field(named, lambda r: not_a(bool, r))("spec.disabled")],
}


def generate(seed: int, count: int, rollout_share: float = 0.35) -> Iterator[Case]:
    """``count`` distinct cases from ``seed`` (about ``rollout_share`` of them Rollouts)."""
    rng = random.Random(seed)
    seen: set[tuple[str, str, str]] = set()
    produced = 0
    while produced < count:
        kind, fields = (
            ("Rollout", ROLLOUT_FIELDS) if rng.random() < rollout_share else ("CloneSet", CLONESET_FIELDS)
        )
        path = rng.choice(sorted(fields))
        value, outcome = rng.choice(fields[path])(rng)
        case = Case(kind, path, value, outcome)
        if case.key in seen:
            continue
        seen.add(case.key)
        produced += 1
        yield case
