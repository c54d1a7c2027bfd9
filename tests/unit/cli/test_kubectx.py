"""kubectl's flag placement, kubeconfig namespace rules, resource words and durations."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from kruise.core.kube.resources import CLONESETS, DEPLOYMENTS
from kruise.rollouts.cli.durations import parse_duration
from kruise.rollouts.cli.kubectx import KubeTarget, hoist_global_flags
from kruise.rollouts.cli.refs import Ref, RefError, parse_refs, qualified
from kruise.rollouts.resources import ROLLOUTS


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        pytest.param(
            ["rollout", "status", "rollout/web", "-n", "shop"],
            ["--namespace=shop", "rollout", "status", "rollout/web"],
            id="-n after the command",
        ),
        pytest.param(
            ["-n", "shop", "rollout", "approve", "rollout/web"],
            ["--namespace=shop", "rollout", "approve", "rollout/web"],
            id="-n before the command",
        ),
        pytest.param(
            ["rollout", "pause", "clone", "web", "--context=prod", "-nshop", "--kubeconfig", "/k"],
            ["--context=prod", "--namespace=shop", "--kubeconfig=/k", "rollout", "pause", "clone", "web"],
            id="context, glued -n and kubeconfig",
        ),
        pytest.param(
            ["rollout", "undo", "rollout/web", "--to-revision", "1", "--dry-run"],
            ["rollout", "undo", "rollout/web", "--to-revision", "1", "--dry-run=client"],
            id="a bare --dry-run is client, as in kubectl",
        ),
        pytest.param(
            ["rollout", "undo", "rollout/web", "--dry-run", "--fast"],
            ["rollout", "undo", "rollout/web", "--dry-run=client", "--fast"],
            id="a bare --dry-run before another flag",
        ),
        pytest.param(
            ["rollout", "undo", "rollout/web", "--dry-run", "server"],
            ["rollout", "undo", "rollout/web", "--dry-run", "server"],
            id="--dry-run with its value",
        ),
        pytest.param(
            ["create", "job", "j", "--image=busybox", "--", "sh", "-n", "x"],
            ["create", "job", "j", "--image=busybox", "--", "sh", "-n", "x"],
            id="nothing after -- moves",
        ),
        pytest.param(
            ["manager", "--kubeconfig", "/k"],
            ["manager", "--kubeconfig", "/k"],
            id="kruise's own commands keep their flags",
        ),
    ],
)
def test_global_flags_are_hoisted_for_kubectl_commands(argv: list[str], expected: list[str]) -> None:
    assert hoist_global_flags(argv) == expected


def kubeconfig(path: Path, current: str, contexts: dict[str, str | None]) -> Path:
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": current,
        "contexts": [
            {"name": name, "context": {"cluster": "c", "user": "u", **({"namespace": ns} if ns else {})}}
            for name, ns in contexts.items()
        ],
    }
    path.write_text(yaml.safe_dump(doc))
    return path


def test_the_namespace_comes_from_the_flag_then_the_context(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = kubeconfig(tmp_path / "config", "dev", {"dev": "shop", "prod": "payments", "bare": None})
    assert KubeTarget(kubeconfig=str(config)).namespace() == "shop"
    assert KubeTarget(kubeconfig=str(config), context="prod").namespace() == "payments"
    assert KubeTarget(kubeconfig=str(config), context="bare").namespace() == "default"
    assert KubeTarget(kubeconfig=str(config), namespace_flag="other").namespace() == "other"
    monkeypatch.setenv("KUBECONFIG", str(config))
    assert KubeTarget().namespace() == "shop"


def test_kubeconfig_lists_merge_first_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = kubeconfig(tmp_path / "a", "dev", {"dev": "shop"})
    second = kubeconfig(tmp_path / "b", "prod", {"dev": "ignored", "prod": "payments"})
    monkeypatch.setenv("KUBECONFIG", f"{first}:{tmp_path / 'missing'}:{second}")
    assert KubeTarget().namespace() == "shop"
    assert KubeTarget(context="prod").namespace() == "payments"


def test_in_a_pod_without_kubeconfig_the_pod_namespace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "none"))
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
    monkeypatch.setenv("POD_NAMESPACE", "kruise-system")
    assert KubeTarget().namespace() == "kruise-system"


@pytest.mark.parametrize(
    ("args", "refs"),
    [
        (["rollout/web"], [Ref(ROLLOUTS, "web", "ns")]),
        (["clone", "a", "b"], [Ref(CLONESETS, "a", "ns"), Ref(CLONESETS, "b", "ns")]),
        (["deployments.apps/web", "ro/x"], [Ref(DEPLOYMENTS, "web", "ns"), Ref(ROLLOUTS, "x", "ns")]),
        (["CloneSet/web"], [Ref(CLONESETS, "web", "ns")]),
        (["rollouts.rollouts.kruise.io", "web"], [Ref(ROLLOUTS, "web", "ns")]),
    ],
)
def test_resource_words(args: list[str], refs: list[Ref]) -> None:
    assert parse_refs(args, "ns") == refs


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["cloneset", "cloneset/web"], "there is no need to specify a resource type"),
        (["cloneset"], "no name was specified"),
        (["widget/web"], 'the server doesn\'t have a resource type "widget"'),
        ([], "required resource not specified"),
    ],
)
def test_bad_resource_words(args: list[str], message: str) -> None:
    with pytest.raises(RefError, match=message):
        parse_refs(args, "ns")


def test_objects_from_files_keep_their_namespace(tmp_path: Path) -> None:
    (tmp_path / "ro.yaml").write_text(
        "apiVersion: rollouts.kruise.io/v1beta1\nkind: Rollout\nmetadata: {name: a}\n---\n"
        "apiVersion: rollouts.kruise.io/v1beta1\nkind: Rollout\nmetadata: {name: b, namespace: other}\n"
    )
    assert parse_refs([], "ns", [str(tmp_path)]) == [Ref(ROLLOUTS, "a", "ns"), Ref(ROLLOUTS, "b", "other")]


def test_names_print_as_kubectl() -> None:
    assert str(Ref(CLONESETS, "web", "ns")) == "cloneset.apps.kruise.io/web"
    assert qualified(DEPLOYMENTS) == "deployment.apps"


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("5m", 300), ("1h30m", 5400), ("300ms", 0.3), ("1.5h", 5400), ("0", 0), ("45", 45), ("2m3.5s", 123.5)],
)
def test_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["5x", "m", "", "1h-"])
def test_bad_durations(text: str) -> None:
    with pytest.raises(ValueError, match="invalid duration"):
        parse_duration(text)
