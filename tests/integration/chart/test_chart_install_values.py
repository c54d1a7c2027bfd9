"""The values ``kruise cluster up --install`` gives the chart render what the real nodes need:
both workloads placed on them, the image from the cluster's registry, the daemon on the nodes'
own CRI sockets as their owner (uid 0, no capability), on the pod network."""

from __future__ import annotations

from pathlib import Path

from kruise.core.localcluster.install import chart_values
from kruise.core.localcluster.realnode.plan import NODE_SELECTOR, TOLERATION
from tests.integration.chart.support import find, render, values_file


def test_install_values_place_kruise_on_the_real_nodes(helm: str, tmp_path: Path) -> None:
    values = chart_values(tag="0.1.0", socket_dir=Path("/run/kruise/0123456789ab"))
    docs = render(helm, values=values_file(tmp_path, dict(values)))
    manager = find(docs, "Deployment", "kruise-controller-manager")["spec"]
    assert manager["replicas"] == 2
    pod = manager["template"]["spec"]
    assert pod["nodeSelector"] == NODE_SELECTOR and pod["tolerations"] == [TOLERATION]
    assert pod["containers"][0]["image"] == "kruise.local/kruise:0.1.0"
    assert "--enable-leader-election" in pod["containers"][0]["args"]
    assert "--partition-percent-limit=100" in pod["containers"][0]["args"]  # the demo's last step

    daemon = find(docs, "DaemonSet", "kruise-daemon")["spec"]["template"]["spec"]
    assert daemon["nodeSelector"] == NODE_SELECTOR and daemon["hostNetwork"] is False
    (container,) = daemon["containers"]
    assert container["image"] == "kruise.local/kruise:0.1.0"
    assert "--socket-file=$(NODE_NAME).sock" in container["args"]
    assert "--addr=:10221" in container["args"]  # its own pod IP: the real nodes' daemons never clash
    env = {e["name"]: e["valueFrom"]["fieldRef"]["fieldPath"] for e in container["env"] if "valueFrom" in e}
    assert env == {"NODE_NAME": "spec.nodeName"}
    security = container["securityContext"]
    assert security["runAsUser"] == 0 and security["runAsGroup"] == 0
    assert security["allowPrivilegeEscalation"] is False and security["capabilities"]["drop"] == ["ALL"]
    assert "privileged" not in security
    (volume,) = [v for v in daemon["volumes"] if "hostPath" in v]
    assert volume["hostPath"]["path"] == "/run/kruise/0123456789ab"
    socket = {"name": "runtime-socket", "mountPath": "/hostvarrun", "readOnly": True}
    assert socket in container["volumeMounts"]


def test_the_daemon_listens_on_every_interface_by_default_as_upstream(helm: str, tmp_path: Path) -> None:
    docs = render(helm, "--set", "daemon.enabled=true")
    (container,) = find(docs, "DaemonSet", "kruise-daemon")["spec"]["template"]["spec"]["containers"]
    assert "--addr=:10221" in container["args"]
    assert "HOST_IP" not in {e["name"] for e in container["env"]}


def test_upstreams_host_network_layout_is_one_value_away(helm: str, tmp_path: Path) -> None:
    """``daemon.hostNetwork=true`` is upstream's layout; ``bindHostIP`` then listens on the node's
    IP only, and without the host network it is refused (that IP is not the pod's)."""
    docs = render(helm, "--set", "daemon.hostNetwork=true", "--set", "daemon.bindHostIP=true")
    pod = find(docs, "DaemonSet", "kruise-daemon")["spec"]["template"]["spec"]
    assert pod["hostNetwork"] is True and pod["dnsPolicy"] == "ClusterFirstWithHostNet"
    assert "--addr=$(HOST_IP):10221" in pod["containers"][0]["args"]
    default = find(render(helm), "DaemonSet", "kruise-daemon")["spec"]["template"]["spec"]
    assert default["hostNetwork"] is False and "dnsPolicy" not in default
