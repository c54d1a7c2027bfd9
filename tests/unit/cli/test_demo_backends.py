"""Where the demo's Prometheus listens: where the manager that queries it can reach it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import yaml

from kruise.rollouts.demo.backends import is_local_address, kubeconfig_server, prometheus_host


def _local(*hosts: str) -> Callable[[str], bool]:
    return lambda host: host in hosts


def test_a_local_control_plane_address_is_where_pods_reach_this_machine() -> None:
    assert prometheus_host("https://10.201.0.1:6443", _local("10.201.0.1")) == "10.201.0.1"


def test_loopback_remote_and_named_servers_keep_prometheus_on_loopback() -> None:
    local = _local("127.0.0.1", "10.201.0.1")
    assert prometheus_host("https://127.0.0.1:36443", local) == "127.0.0.1"  # manager on this host
    assert prometheus_host("https://192.0.2.7:6443", local) == "127.0.0.1"  # not this machine
    assert prometheus_host("https://api.example.com:6443", local) == "127.0.0.1"  # never resolved
    assert prometheus_host("https://[::1]:6443", local) == "127.0.0.1"


def test_is_local_address_binds() -> None:
    assert is_local_address("127.0.0.1") is True
    assert is_local_address("192.0.2.7") is False  # TEST-NET-1: no interface has it


def test_kubeconfig_server_follows_the_current_context(tmp_path: Path) -> None:
    doc = {
        "clusters": [
            {"name": "a", "cluster": {"server": "https://a:1"}},
            {"name": "b", "cluster": {"server": "https://b:2"}},
        ],
        "contexts": [{"name": "ctx", "context": {"cluster": "b", "user": "u"}}],
        "current-context": "ctx",
    }
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(doc))
    assert kubeconfig_server(str(path)) == "https://b:2"
    path.write_text(yaml.safe_dump({**doc, "current-context": ""}))
    assert kubeconfig_server(str(path)) == "https://a:1"
