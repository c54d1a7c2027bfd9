"""The kruise image, built without a Docker daemon and run on the real kubelet as the chart runs it.

``hack/build-image.sh`` (``make image``) builds the Dockerfile with buildah on a Debian base made
by mmdebstrap and pushes it to the cluster's registry; a pod on the real node then runs its
``kruise manager --help`` and ``kruise daemon --help`` with the chart's security context (non-root
65534, read-only root filesystem, every capability dropped, ``seccompProfile: RuntimeDefault``),
and a third container proves those constraints hold inside (uid, no writable root).
"""

from __future__ import annotations

import asyncio
import subprocess
import tomllib
from pathlib import Path

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import PODS
from kruise.core.localcluster.realnode import pod_placement
from kruise.core.localcluster.realnode.images import image_ref
from tests.integration.realnode.conftest import RealNode, container_status
from tests.support.cluster import TestCluster
from tests.support.wait import eventually

REPO = Path(__file__).resolve().parents[3]
RESTRICTED = {
    "runAsNonRoot": True,
    "readOnlyRootFilesystem": True,
    "allowPrivilegeEscalation": False,
    "capabilities": {"drop": ["ALL"]},
    "seccompProfile": {"type": "RuntimeDefault"},
}
PROBE = (
    "import os, pathlib\n"
    "print('uid', os.getuid(), 'gid', os.getgid())\n"
    "try:\n"
    "    pathlib.Path('/opt/kruise/x').write_text('x')\n"
    "    print('root filesystem writable')\n"
    "except OSError as err:\n"
    "    print('root filesystem read-only:', err.strerror)\n"
)


def version() -> str:
    return str(tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"])


async def test_the_image_built_without_docker_runs_manager_and_daemon_as_the_chart_runs_them(
    kube: KubeClient, namespace: str, real_node: RealNode, cluster: TestCluster
) -> None:
    registry = real_node.local.registry_addr()
    built = await asyncio.to_thread(
        subprocess.run,
        ["hack/build-image.sh", "--push", f"{registry}/kruise"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert built.returncode == 0, built.stderr[-3000:]
    assert f"pushed {registry}/kruise:{version()}" in built.stdout
    image = image_ref("kruise", version())

    def container(name: str, args: list[str], command: list[str] | None = None) -> dict[str, object]:
        return {
            "name": name,
            "image": image,
            "args": args,
            **({"command": command} if command else {}),
            "env": [{"name": "COLUMNS", "value": "200"}],
            "securityContext": RESTRICTED,
        }

    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "kruise-image"},
        "spec": {
            **pod_placement(),
            "restartPolicy": "Never",
            "containers": [
                container("manager", ["manager", "--help"]),
                container("daemon", ["daemon", "--help"]),
                container("probe", ["-c", PROBE], command=["/opt/kruise/bin/python"]),
            ],
        },
    }
    await kube.create(PODS, pod, namespace)

    async def finished() -> dict[str, object] | None:
        got = await kube.get(PODS, "kruise-image", namespace)
        return got if got.get("status", {}).get("phase") in ("Succeeded", "Failed") else None

    done = await eventually(finished, timeout=300, what="the image's pod finished")
    for name in ("manager", "daemon", "probe"):
        terminated = container_status(done, name)["state"]["terminated"]
        assert terminated["exitCode"] == 0, (name, terminated)

    def logs(name: str) -> str:
        return cluster.kubectl("logs", "-n", namespace, "kruise-image", "-c", name).stdout

    manager, daemon, probe = logs("manager"), logs("daemon"), logs("probe")
    for flag in ("--webhook-port", "--feature-gates", "--leader-election-namespace"):
        assert flag in manager
    for flag in ("--socket-file", "--max-workers-for-pull-image", "--addr"):
        assert flag in daemon
    assert "uid 65534 gid 65534" in probe
    assert "root filesystem read-only: Read-only file system" in probe
