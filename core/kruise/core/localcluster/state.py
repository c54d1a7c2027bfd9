"""What ``<cluster dir>/state.json`` records about a running local control plane, and where
that directory is by default."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

from kruise.core.localcluster.errors import ClusterError


def default_cluster_dir() -> Path:
    """``$KRUISE_CLUSTER_DIR`` or ``~/.local/state/kruise/cluster``."""
    env = os.environ.get("KRUISE_CLUSTER_DIR")
    if env:
        return Path(env)
    state_home = Path(os.environ.get("XDG_STATE_HOME", Path.home() / ".local" / "state"))
    return state_home / "kruise" / "cluster"


@dataclass
class ClusterState:
    """What ``state.json`` records about a running control plane."""

    directory: str
    kubeconfig: str
    api_port: int
    etcd_port: int
    nodes: int
    bin_dir: str
    etcd_data: str
    pids: dict[str, int] = field(default_factory=dict)
    startup_seconds: float = 0.0
    real_nodes: int = 0
    registry_port: int = 0
    real_node_timings: dict[str, float] = field(default_factory=dict)
    daemon_ports: dict[str, int] = field(default_factory=dict)
    #: the API server's address: 127.0.0.1, or the control-plane address when ``services``
    api_host: str = "127.0.0.1"
    #: started with real nodes: kube-proxy, Service endpoints, ServiceAccount tokens
    services: bool = False
    #: a ``kruise daemon`` process per real node (off when the chart's DaemonSet runs instead)
    node_daemons: bool = True

    @property
    def server(self) -> str:
        return f"https://{self.api_host}:{self.api_port}"

    def save(self) -> None:
        Path(self.directory, "state.json").write_text(json.dumps(asdict(self), indent=2))

    @classmethod
    def load(cls, directory: Path) -> ClusterState:
        path = directory / "state.json"
        if not path.exists():
            raise ClusterError(f"no local cluster in {directory} (run `kruise cluster up`)")
        return cls(**json.loads(path.read_text()))
