"""What the manager's code asks of the API server, read from the source, for the RBAC tests.

Every ``<...>kube.<verb>(RESOURCE, ...)`` call (``KubeClient``) under the six source roots becomes
a :class:`Request` ``(group, resource[/subresource], verb)``, and so does every kind the manager's
controllers watch or read (the informers their specs create, found by composing the manager's
runtime exactly as ``kruise manager`` does: list and watch). Calls whose resource is a variable
(``res``) are resolved through :data:`DYNAMIC`, which names, per call site, the expression listing
what that variable can be; a new variable call site fails the audit until it is listed there.
The CLI and the demo (``kruise rollout ...``, ``kruise demo`` run as the user) and the local control
plane are left out.
"""

from __future__ import annotations

import ast
import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from kruise.core.kube.resources import Resource
from tests.integration.chart.support import REPO

ROOTS = ("core", "workloads", "traffic", "analysis", "rollouts", "daemon")
SKIP = ("/cli/", "/localcluster/", "/demo/")  # run by the user, not the manager
DAEMON_PROCESS = (
    "daemon/kruise/daemon/app.py",
    "daemon/kruise/daemon/imagepuller/",
    "daemon/kruise/daemon/containermeta/",
    "daemon/kruise/daemon/containerrecreate/",
    "daemon/kruise/daemon/podprobe/",
)
"""Source run by ``kruise daemon`` (the chart's kruise-daemon-role), not by the manager."""
EVENTS_BY_RECORDER = {("", "events", "create"), ("", "events", "patch")}
"""What :class:`kruise.core.events.EventRecorder` asks, in either process."""
VERBS = {
    "get": "get",
    "get_or_none": "get",
    "list": "list",
    "watch": "watch",
    "create": "create",
    "replace": "update",
    "patch": "patch",
    "delete": "delete",
}

# Call sites whose resource argument is a variable, by (path, enclosing function, variable):
# {verb: names in that module whose values (a Resource, or a dict or list of them) are what the
# variable can be for that verb}. None: nothing the chart can know (custom router kinds come from
# Rollouts' customNetworkRefs: manager.extraRules).
DYNAMIC: dict[tuple[str, str, str], dict[str, tuple[str, ...]] | None] = {
    ("core/kruise/core/webhook/configuration.py", "ensure_configurations", "res"): {
        verb: ("MUTATING_WEBHOOKS", "VALIDATING_WEBHOOKS") for verb in ("get", "create", "update")
    },
    ("core/kruise/core/webhook/configuration.py", "set_match_conditions", "res"): {
        verb: ("MUTATING_WEBHOOKS", "VALIDATING_WEBHOOKS") for verb in ("get", "update")
    },
    ("rollouts/kruise/rollouts/batchrelease/executor.py", "_run", "res"): {
        "patch": ("RESOURCES",),  # every Op target
        "create": ("CANARY_TARGETS",),  # OpKind.CREATE: the canary Deployment only
        "get": ("FINALIZER_TARGETS",),  # finalizer Ops: canary Deployments, the BatchRelease
    },
    ("rollouts/kruise/rollouts/batchrelease/executor.py", "hpas", "res"): {"list": ("HPAS_V2", "HPAS_V1")},
    ("rollouts/kruise/rollouts/rollout/effects.py", "_release_workload", "resource"): {
        "patch": ("WORKLOAD_RESOURCES",)
    },
    ("rollouts/kruise/rollouts/rollout/effects.py", "_resume_workload", "resource"): {
        "patch": ("WORKLOAD_RESOURCES",)
    },
    ("rollouts/kruise/rollouts/rollout/effects.py", "_hold_stable_deployment", "op.target"): {
        "patch": ("STABLE_HOLD_TARGETS",)
    },
    ("rollouts/kruise/rollouts/rollout/analysis_effects.py", "revert_workload", "resource"): {
        "patch": ("WORKLOAD_RESOURCES",)
    },
    ("rollouts/kruise/rollouts/rollout/controller.py", "_patch_workload", "resource"): {
        "patch": ("WORKLOAD_RESOURCES",)
    },
    ("rollouts/kruise/rollouts/batchrelease/fights.py", "_fresh", "resource"): {
        "get": ("WORKLOAD_RESOURCES",)  # the workload with managedFields, to name who reverted it
    },
    ("rollouts/kruise/rollouts/rollout/trafficfights.py", "_read", "target.resource"): {
        "get": ("READS",)  # a routed object with managedFields, to name who reverted it
    },
    ("rollouts/kruise/rollouts/workloads/holdwebhook.py", "__call__", "resource"): {
        "list": ("RELATED_RESOURCES",)
    },
    ("rollouts/kruise/rollouts/rollout/analysis_effects.py", "ensure_run", "res"): {
        "get": ("ANALYSIS_TEMPLATES", "CLUSTER_ANALYSIS_TEMPLATES")
    },
    ("rollouts/kruise/rollouts/rollouthistory/controller.py", "_snapshot", "res"): {
        "get": ("SERVICES", "INGRESSES", "HTTPROUTES")  # a release's snapshots
    },
    ("workloads/kruise/workloads/controllerbase.py", "merge_status", "resource"): {
        "patch": ("STATUS_WRITERS",)  # the workload controllers' status subresource
    },
    ("workloads/kruise/workloads/uniteddeployment/controller.py", "_reown", "resource"): {
        "patch": ("SUBSET_RESOURCES",)  # adopting and releasing subset workloads
    },
    ("workloads/kruise/workloads/uniteddeployment/controller.py", "_provision", "kind.resource"): {
        "create": ("SUBSET_RESOURCES",)
    },
    ("workloads/kruise/workloads/uniteddeployment/controller.py", "_provision", "resource"): {
        "delete": ("SUBSET_RESOURCES",)
    },
    ("workloads/kruise/workloads/uniteddeployment/controller.py", "_update", "kind.resource"): {
        "update": ("SUBSET_RESOURCES",)
    },
    ("workloads/kruise/workloads/resourcedistribution/controller.py", "reconcile", "res"): {
        "update": ("KINDS",),  # a distributor's copies: Secrets and ConfigMaps
        "delete": ("KINDS",),
    },
    ("workloads/kruise/workloads/resourcedistribution/controller.py", "_create", "res"): {
        "create": ("KINDS",),
        "get": ("KINDS",),
    },
    ("workloads/kruise/workloads/resourcedistribution/webhooks.py", "_dry_run", "res"): {
        "create": ("KINDS",)
    },
    # a Cascading namespace's pods and PVCs (granted above for the workloads), a Cascading CRD's
    # objects (DeletionProtectionForCRDCascadingGate): any kind, manager.extraRules
    ("workloads/kruise/workloads/deletionprotection/webhooks.py", "_listing", "res"): None,
    ("workloads/kruise/workloads/advancedcronjob/controller.py", "reconcile", "res"): {
        "create": ("CHILD_RESOURCES",),  # the run's Job, BroadcastJob or ImageListPullJob
        "delete": ("CHILD_RESOURCES",),  # history and Replace
    },
    ("rollouts/kruise/rollouts/trafficrouting/routes.py", "check", "res"): None,  # Service, routed kinds
    # a WorkloadSpread's target read by the pod webhook (percent caps of a new revision)
    ("workloads/kruise/workloads/workloadspread/target.py", "read_workload", "res"): {"get": ("WORKLOADS",)},
    # WorkloadSpread's custom white-listed kinds and their owners (kruise-configuration): any kind,
    # granted by the user (upstream's e2e adds a ClusterRole for them), manager.extraRules
    ("workloads/kruise/workloads/workloadspread/customtargets.py", "get", "res"): None,
    ("traffic/kruise/traffic/custom_router.py", "_ensure", "res"): None,
    ("traffic/kruise/traffic/custom_router.py", "_restore", "res"): None,
}
# Functions the manager never runs: (path, function) -> who does.
NOT_THE_MANAGERS = {
    ("core/kruise/core/webhook/configuration.py", "delete_configurations"): "the chart's pre-delete hook",
}


@dataclass(frozen=True)
class Request:
    group: str
    resource: str  # plural, or plural/subresource
    verb: str
    where: str  # path:line of the first call site


def _module(path: Path) -> Any:
    rel = path.relative_to(REPO)
    parts = rel.with_suffix("").parts[1:]  # drop the source root
    return importlib.import_module(".".join(parts))


def _resources(value: Any) -> list[Resource]:
    if isinstance(value, Resource):
        return [value]
    items = value.values() if isinstance(value, dict) else value
    return [r for r in items if isinstance(r, Resource)]


def _enclosing(tree: ast.AST) -> dict[ast.AST, str]:
    """Each node -> the name of the innermost function around it ("" at module level)."""
    owner: dict[ast.AST, str] = {}

    def visit(node: ast.AST, name: str) -> None:
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef) else name
            owner[child] = inner
            visit(child, inner)

    visit(tree, "")
    return owner


def code_requests(process: str = "manager") -> tuple[dict[tuple[str, str, str], str], list[str]]:
    """``{(group, resource, verb): first call site}`` and the call sites this audit cannot resolve,
    of ``process``: ``manager`` (everything but :data:`DAEMON_PROCESS`) or ``daemon``."""
    found: dict[tuple[str, str, str], str] = {}
    unknown: list[str] = []

    def add(group: str, resource: str, verb: str, where: str) -> None:
        found.setdefault((group, resource, verb), where)

    for root in ROOTS:
        for path in sorted((REPO / root / "kruise").rglob("*.py")):
            rel = str(path.relative_to(REPO))
            if any(s in f"/{rel}" for s in SKIP):
                continue
            if rel.startswith(DAEMON_PROCESS) != (process == "daemon"):
                continue
            tree = ast.parse(path.read_text())
            owner = _enclosing(tree)
            module = None
            for node in ast.walk(tree):
                if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
                    continue
                where = f"{rel}:{node.lineno}"
                func = node.func
                function = owner.get(node, "")
                if (rel, function) in NOT_THE_MANAGERS:
                    continue
                if func.attr not in VERBS or not ast.unparse(func.value).endswith("kube") or not node.args:
                    continue
                module = module or _module(path)
                arg = ast.unparse(node.args[0])
                verb = VERBS[func.attr]
                value = vars(module).get(arg)
                if isinstance(value, Resource):
                    targets = [value]
                elif (rel, function, arg) in DYNAMIC:
                    by_verb = DYNAMIC[(rel, function, arg)]
                    if by_verb is None:
                        continue
                    if verb not in by_verb:
                        unknown.append(f"{where}: kube.{func.attr}({arg}, ...) in {function}()")
                        continue
                    targets = [r for n in by_verb[verb] for r in _resources(vars(module)[n])]
                else:
                    unknown.append(f"{where}: kube.{func.attr}({arg}, ...) in {function}()")
                    continue
                sub = next((k.value for k in node.keywords if k.arg == "subresource"), None)
                suffix = f"/{sub.value}" if isinstance(sub, ast.Constant) and sub.value else ""
                for res in targets:
                    add(res.group, res.plural + suffix, verb, where)
    composer = "kruise.rollouts.manager.controllers" if process == "manager" else "kruise.daemon.app"
    for res in informed_resources() if process == "manager" else daemon_informed_resources():
        add(res.group, res.plural, "list", f"an informer ({composer})")
        add(res.group, res.plural, "watch", f"an informer ({composer})")
    if process == "daemon":
        for request in EVENTS_BY_RECORDER:
            add(*request, "kruise.core.events.EventRecorder")
    return found, unknown


def informed_resources() -> list[Resource]:
    """The kinds the manager's informers list and watch (every feature gate on): the controllers'
    and the webhooks' (:func:`~kruise.rollouts.manager.webhooks.webhook_reads_all`)."""
    from kruise.core.kube import KubeClient
    from kruise.core.kube.config import KubeConfig
    from kruise.rollouts.manager.controllers import build_runtime
    from kruise.rollouts.manager.options import FEATURE_GATES, ManagerOptions
    from kruise.rollouts.manager.webhooks import webhook_reads_all

    opts = ManagerOptions(feature_gates={gate: True for gate in FEATURE_GATES})
    runtime = build_runtime(KubeClient(KubeConfig(server="https://127.0.0.1:1", ssl_context=False)), opts)
    return [*runtime.informers.resources(), *(read.resource for read in webhook_reads_all())]


def daemon_informed_resources() -> list[Resource]:
    """The kinds ``kruise daemon``'s informers list and watch."""
    from kruise.core.kube import KubeClient
    from kruise.core.kube.config import KubeConfig
    from kruise.daemon.app import compose
    from kruise.daemon.options import DaemonOptions

    kube = KubeClient(KubeConfig(server="https://127.0.0.1:1", ssl_context=False))
    runtime, _ = compose(kube, cast(Any, None), DaemonOptions(node_name="audit"))  # no CRI call is made
    return runtime.informers.resources()


def allowed(rules: list[dict[str, Any]], group: str, resource: str, verb: str) -> bool:
    """Whether any rule grants ``verb`` on ``group``/``resource`` (by name counts)."""
    for rule in rules:
        if (
            (group in rule.get("apiGroups", []) or "*" in rule.get("apiGroups", []))
            and (resource in rule.get("resources", []) or "*" in rule.get("resources", []))
            and (verb in rule.get("verbs", []) or "*" in rule.get("verbs", []))
        ):
            return True
    return False


def granted(rules: list[dict[str, Any]]) -> set[tuple[str, str, str]]:
    return {
        (g, r, v)
        for rule in rules
        for g in rule.get("apiGroups", [])
        for r in rule.get("resources", [])
        for v in rule.get("verbs", [])
    }
