"""Text kubectl-kruise prints (pure): revision history, pod templates, ``describe rollout``.

Layouts follow kubectl's: ``REVISION  CHANGE-CAUSE`` tables (``<none>`` for no cause), the
``Pod Template:`` block of ``kubectl describe``, and kruise-tools' ``describe rollout`` (a
``%-19s%v`` key/value table, the steps with the current one's state, the replica counts and
the pods of the current batch).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

CHANGE_CAUSE = "kubernetes.io/change-cause"


def table(rows: Sequence[Sequence[str]]) -> str:
    """Columns padded as a ``tabwriter`` with padding 2 (kubectl's tables)."""
    if not rows:
        return ""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for row in rows:
        cells = [cell.ljust(widths[i]) if i < len(row) - 1 else cell for i, cell in enumerate(row)]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines) + "\n"


def history_table(causes: Mapping[int, str]) -> str:
    """``REVISION  CHANGE-CAUSE`` rows in revision order; "No rollout history found." when empty."""
    if not causes:
        return "No rollout history found.\n"
    rows = [["REVISION", "CHANGE-CAUSE"], *([str(r), causes[r] or "<none>"] for r in sorted(causes))]
    return table(rows)


def _kv(indent: str, title: str, items: Mapping[str, Any] | None) -> list[str]:
    if not items:
        return [f"{indent}{title}:\t<none>"]
    pairs = [f"{k}={v}" for k, v in sorted(items.items())]
    return [f"{indent}{title}:\t{pairs[0]}", *(f"{indent}{' ' * (len(title) + 1)}\t{p}" for p in pairs[1:])]


def _env_line(env: Mapping[str, Any]) -> str:
    if "value" in env:
        return f"{env.get('name')}:\t{env.get('value')}"
    source = env.get("valueFrom") or {}
    kind = next(iter(source), "valueFrom")
    return f"{env.get('name')}:\t<set to the key of {kind}>"


def _container(container: Mapping[str, Any]) -> list[str]:
    lines = [f"   {container.get('name')}:", f"    Image:\t{container.get('image', '')}"]
    ports = container.get("ports") or []
    lines.append(
        "    Port:\t"
        + (", ".join(f"{p.get('containerPort')}/{p.get('protocol', 'TCP')}" for p in ports) or "<none>")
    )
    resources = container.get("resources") or {}
    for section in ("limits", "requests"):
        if resources.get(section):
            lines.append(f"    {section.capitalize()}:")
            lines += [f"      {k}:\t{v}" for k, v in sorted(resources[section].items())]
    env = container.get("env") or []
    lines.append("    Environment:" + ("" if env else "\t<none>"))
    lines += [f"      {_env_line(e)}" for e in env]
    mounts = container.get("volumeMounts") or []
    lines.append("    Mounts:" + ("" if mounts else "\t<none>"))
    lines += [f"      {m.get('mountPath')} from {m.get('name')}" for m in mounts]
    return lines


def pod_template(template: Mapping[str, Any]) -> str:
    """``kubectl describe``'s ``Pod Template:`` block (labels, annotations, containers, volumes)."""
    meta = template.get("metadata") or {}
    spec = template.get("spec") or {}
    lines = ["Pod Template:", *_kv("  ", "Labels", meta.get("labels"))]
    lines += _kv("  ", "Annotations", meta.get("annotations"))
    if spec.get("initContainers"):
        lines.append("  Init Containers:")
        for container in spec["initContainers"]:
            lines += _container(container)
    lines.append("  Containers:")
    for container in spec.get("containers") or []:
        lines += _container(container)
    volumes = spec.get("volumes") or []
    lines.append("  Volumes:" + ("" if volumes else "\t<none>"))
    lines += [f"   {v.get('name')}" for v in volumes]
    return "\n".join(lines) + "\n"


_ROW = "{:<19}{}"
_ICONS = {
    "Healthy": "\033[32m✔\033[0m",
    "Running": "\033[32m✔\033[0m",
    "Progressing": "\033[33m⚠\033[0m",
    "Pending": "\033[33m⚠\033[0m",
    "Initial": "\033[33m⚠\033[0m",
}
_FAILED = {"Disabled", "Unknown", "Terminating", "Disabling", "Failed"}


def icon(phase: str, color: bool) -> str:
    """kruise-tools' status marks (✔ ⚠ ✘), or nothing with ``--no-color``."""
    if not color or not phase:
        return ""
    return _ICONS.get(phase, "\033[31m✘\033[0m" if phase in _FAILED else "")


def _steps(strategy: Mapping[str, Any], current: int, state: str, color: bool) -> list[str]:
    lines = []
    for i, step in enumerate(strategy.get("steps") or [], start=1):
        mark = i == current
        block = []
        if step.get("replicas") is not None:
            block.append(_ROW.format("  -  Replicas: ", step["replicas"]))
        if step.get("traffic") is not None:
            block.append(_ROW.format("     Traffic: ", step["traffic"]))
        for match in step.get("matches") or []:
            block.append("     Matches: ")
            block.append("      - Headers: ")
            for header in match.get("headers") or []:
                block.append(_ROW.format("       - Name:", header.get("name")))
                block.append(_ROW.format("         Value:", header.get("value")))
                block.append(_ROW.format("         Type:", header.get("type", "Exact")))
        if mark:
            block.append(_ROW.format("     State:", state))
            if color:
                block[0], block[-1] = "\033[32m" + block[0], block[-1] + "\033[0m"
        lines += block
    return lines


def _routings(routings: Sequence[Mapping[str, Any]]) -> list[str]:
    if not routings:
        return []
    lines = ["Traffic Routings:"]
    for r in routings:
        lines.append(_ROW.format("  -  Service: ", r.get("service", "")))
        if r.get("ingress"):
            lines += [
                "     Ingress: ",
                _ROW.format("      classType: ", r["ingress"].get("classType", "nginx")),
            ]
            lines.append(_ROW.format("      name: ", r["ingress"].get("name", "")))
        if r.get("gateway"):
            lines += [
                "     Gateway: ",
                _ROW.format("      HttpRouteName: ", r["gateway"].get("httpRouteName", "")),
            ]
        if r.get("customNetworkRefs"):
            lines.append("     CustomNetworkRefs: ")
            for ref in r["customNetworkRefs"]:
                lines += [
                    _ROW.format("      name: ", ref.get("name", "")),
                    _ROW.format("      kind: ", ref.get("kind", "")),
                ]
                lines.append(_ROW.format("      apiVersion: ", ref.get("apiVersion", "")))
    return lines


def describe_rollout(
    rollout: Mapping[str, Any],
    workload: Mapping[str, Any] | None,
    pods: Sequence[Sequence[str]],
    *,
    color: bool = True,
) -> str:
    """kruise-tools' ``describe rollout`` text; ``pods`` rows are NAME, READY, BATCH ID, REVISION,
    AGE, RESTARTS, STATUS."""
    meta, spec, status = rollout["metadata"], rollout.get("spec") or {}, rollout.get("status") or {}
    blue_green = bool((spec.get("strategy") or {}).get("blueGreen"))
    strategy = (spec.get("strategy") or {}).get("blueGreen" if blue_green else "canary") or {}
    sub = status.get("blueGreenStatus" if blue_green else "canaryStatus") or {}
    observed = status.get("observedGeneration") == meta.get("generation")
    lines = [_ROW.format("Name:", meta["name"]), _ROW.format("Namespace:", meta.get("namespace", ""))]
    if observed:
        phase = str(status.get("phase") or "")
        lines.append(_ROW.format("Status:", f"{icon(phase, color)} {phase}"))
        if status.get("message"):
            lines.append(_ROW.format("Message:", status["message"]))
    current, steps = int(sub.get("currentStepIndex") or 0), len(strategy.get("steps") or [])
    lines += [
        _ROW.format("Strategy:", "BlueGreen" if blue_green else "Canary"),
        _ROW.format(" Step:", f"{current}/{steps}"),
    ]
    lines += [" Steps:", *_steps(strategy, current, str(sub.get("currentStepState") or ""), color)]
    lines += _routings(strategy.get("trafficRoutings") or [])
    if workload is not None:
        images = [
            c.get("image", "")
            for c in ((workload.get("spec") or {}).get("template") or {})
            .get("spec", {})
            .get("containers", [])
        ]
        for i, image in enumerate(images):
            lines.append(_ROW.format("Images:" if i == 0 else "", image))
        updated = sub.get("updatedRevision") or sub.get("canaryRevision") or ""
        lines += [
            _ROW.format("Current Revision:", sub.get("stableRevision", "")),
            _ROW.format("Update Revision:", updated),
        ]
        if observed:
            wstatus = workload.get("status") or {}
            lines.append("Replicas:")
            lines.append(_ROW.format(" Desired:", (workload.get("spec") or {}).get("replicas", 1)))
            for title, key in (
                ("Updated", "updatedReplicas"),
                ("Current", "replicas"),
                ("Ready", "readyReplicas"),
                ("Available", "availableReplicas"),
            ):
                lines.append(_ROW.format(f" {title}:", wstatus.get(key, 0)))
    text = "\n".join(lines) + "\n"
    if pods:
        text += table([["NAME", "READY", "BATCH ID", "REVISION", "AGE", "RESTARTS", "STATUS"], *pods])
    return text


def human_age(seconds: float) -> str:
    """``kubectl get``'s AGE: 45s, 3m, 2h, 5d."""
    seconds = max(int(seconds), 0)
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size * (2 if unit != "m" else 1):
            return f"{seconds // size}{unit}"
    return f"{seconds}s"
