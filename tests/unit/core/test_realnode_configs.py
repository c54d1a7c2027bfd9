"""Configuration of a local real node: nothing shared with the machine's defaults, nothing
that sends traffic off the machine, and the settings the recipe found necessary."""

from __future__ import annotations

import ipaddress
import tomllib
from pathlib import Path

import pytest

from kruise.core.localcluster.realnode.configs import (
    cni_config,
    containerd_config,
    kubelet_config,
    registry_config,
    registry_hosts_toml,
    toml_str,
    write_runtime_files,
)
from kruise.core.localcluster.realnode.plan import (
    MAX_NODES,
    TAINT,
    plan_nodes,
    pod_placement,
    run_dir_for,
)


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


CLUSTER = Path('/tmp/some cluster/with "quotes"')


def test_nodes_get_distinct_names_bridges_subnets_and_cgroup_roots() -> None:
    plans = plan_nodes(CLUSTER, 3)
    assert [p.name for p in plans] == ["real-node-1", "real-node-2", "real-node-3"]
    for attr in ("bridge", "subnet", "node_ip", "cgroup_root", "containerd_socket", "dir"):
        assert len({str(getattr(p, attr)) for p in plans}) == 3, attr
    assert all(len(p.bridge) <= 15 for p in plan_nodes(CLUSTER, MAX_NODES))  # IFNAMSIZ
    plan = plans[0]
    assert ipaddress.ip_address(plan.node_ip) in plan.subnet
    assert not ipaddress.ip_address(plan.node_ip).is_loopback  # the kubelet refuses loopback node IPs
    assert ipaddress.ip_address(plan.node_ip).is_private


def test_socket_paths_stay_short_whatever_the_cluster_dir() -> None:
    deep = Path("/" + "/".join(["a-very-long-directory-name"] * 12))
    (plan,) = plan_nodes(deep, 1)
    assert len(str(plan.containerd_socket)) + len(".ttrpc") < 108
    assert len(str(plan.kubelet_dir / "pod-resources" / "kubelet.sock")) < 100
    assert run_dir_for(deep) != run_dir_for(CLUSTER)


def test_more_nodes_continue_the_numbering_and_the_limit_is_explicit() -> None:
    assert [p.index for p in plan_nodes(CLUSTER, 2, start=3)] == [3, 4]
    with pytest.raises(ValueError, match=f"1..{MAX_NODES}"):
        plan_nodes(CLUSTER, 2, start=MAX_NODES)


def test_containerd_uses_only_the_node_dir_and_the_recipe_settings() -> None:
    (plan,) = plan_nodes(CLUSTER, 1)
    config = tomllib.loads(containerd_config(plan))
    assert config["version"] == 2
    assert config["root"].startswith(str(plan.dir)) and config["state"].startswith(str(plan.dir))
    assert config["grpc"]["address"] == str(plan.containerd_socket)
    cri = config["plugins"]["io.containerd.grpc.v1.cri"]
    assert cri["sandbox_image"] == "kruise.local/pause:3.10"
    assert cri["restrict_oom_score_adj"] is True
    assert cri["cni"]["conf_dir"] == str(plan.cni_conf_dir)
    assert cri["registry"]["config_path"] == str(plan.dir / "certs.d")
    runc = cri["containerd"]["runtimes"]["runc"]
    assert runc["options"]["SystemdCgroup"] is False
    assert runc["options"]["Root"].startswith(str(plan.dir))
    paths = [v for v in _strings(config) if v.startswith("/")]
    assert paths and all(v.startswith((str(plan.dir), str(plan.run_dir), "/usr/lib/cni")) for v in paths)


def test_pod_network_keeps_traffic_on_the_machine() -> None:
    (plan,) = plan_nodes(CLUSTER, 1)
    (bridge,) = cni_config(plan)["plugins"]
    assert bridge["bridge"] == plan.bridge
    assert bridge["isGateway"] is False and bridge["isDefaultGateway"] is False
    assert bridge["ipMasq"] is False
    # no default route: only the real nodes' network and the Service range, through the bridge
    routes = [ipaddress.ip_network(r["dst"]) for r in bridge["ipam"]["routes"]]
    assert routes == [ipaddress.ip_network("10.201.0.0/16"), ipaddress.ip_network("10.96.0.0/16")]
    assert all(r.is_private and r.prefixlen >= 12 for r in routes)
    assert all("gw" not in r for r in bridge["ipam"]["routes"])  # the range's gateway: the bridge
    assert plan.subnet.subnet_of(routes[0])  # type: ignore[arg-type]
    assert bridge["ipam"]["ranges"] == [[{"subnet": str(plan.subnet), "gateway": plan.node_ip}]]
    assert bridge["ipam"]["dataDir"].startswith(str(plan.dir))


def test_registry_mirror_points_kruise_local_at_loopback(tmp_path: Path) -> None:
    hosts = tomllib.loads(registry_hosts_toml("127.0.0.1:5123"))
    assert hosts["server"] == "http://127.0.0.1:5123"
    assert hosts["host"]["http://127.0.0.1:5123"]["capabilities"] == ["pull", "resolve"]
    (plan,) = plan_nodes(tmp_path, 1)
    write_runtime_files(plan, "127.0.0.1:5123")
    assert (plan.dir / "certs.d" / "kruise.local" / "hosts.toml").exists()
    assert (plan.cni_conf_dir / "10-kruise.conflist").exists()


def test_registry_listens_on_loopback_without_auth() -> None:
    config = registry_config(Path("/x/registry"), 5123)
    assert config["http"]["addr"] == "127.0.0.1:5123"
    assert "auth" not in config


def test_kubelet_changes_no_iptables_and_keeps_its_pods_apart() -> None:
    (plan,) = plan_nodes(CLUSTER, 1)
    config = kubelet_config(plan, ca_file=Path("/ca"), cert_file=Path("/c"), key_file=Path("/k"))
    assert config["makeIPTablesUtilChains"] is False
    assert config["cgroupRoot"] == f"/{plan.cgroup_root}"
    assert config["cgroupDriver"] == "cgroupfs" and config["failCgroupV1"] is False
    assert config["address"] == plan.node_ip and config["readOnlyPort"] == 0 and config["healthzPort"] == 0
    assert config["authentication"]["anonymous"]["enabled"] is False
    assert config["authentication"]["x509"]["clientCAFile"] == "/ca"
    assert config["containerRuntimeEndpoint"] == f"unix://{plan.containerd_socket}"
    assert config["registerWithTaints"] == [TAINT]
    assert config["podLogsDir"].startswith(str(plan.dir))


def test_pod_placement_selects_and_tolerates_the_real_node() -> None:
    placement = pod_placement()
    assert placement["nodeSelector"] == {"type": "real"}
    (toleration,) = placement["tolerations"]  # type: ignore[misc]
    assert (toleration["key"], toleration["effect"]) == (TAINT["key"], TAINT["effect"])


def test_toml_strings_escape_quotes_and_backslashes() -> None:
    value = 'a "b" c:\\d'
    assert tomllib.loads("x = " + toml_str(value))["x"] == value
