"""kruise-daemon's options: upstream's flags (``K:cmd/daemon/main.go``) and what they mean here."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["DEFAULT_ADDR", "DEFAULT_VAR_RUN", "DaemonOptions"]

DEFAULT_ADDR = ":10221"
DEFAULT_VAR_RUN = "/hostvarrun"
"""Where upstream's chart mounts the host's ``/var/run`` (read-only) and the daemon looks for
the CRI socket."""


@dataclass
class DaemonOptions:
    """One daemon process.

    - ``node_name``: the node it serves (upstream reads ``NODE_NAME``, set from ``spec.nodeName``);
    - ``addr``: ``host:port`` of ``/healthz`` and ``/metrics`` (``--addr``, default ``:10221``);
    - ``socket_file``: the CRI socket (``--socket-file``; relative to ``var_run``, or absolute);
      empty: upstream's probe list under ``var_run``;
    - ``var_run``: the directory probed (``--var-run-dir``, ours; upstream fixes ``/hostvarrun``);
    - ``max_workers_for_pull_image``: pulls at once (``-1``/``0``: no limit, as upstream);
    - ``qps``/``burst``: the API client's rate limit (``--rest-config-qps``/``--rest-config-burst``;
      0 means client-go's defaults, 5 and 10);
    - ``feature_gates``: the parsed ``--feature-gates`` (the manager's gate names).
    """

    node_name: str
    kubeconfig: str | None = None
    addr: str = DEFAULT_ADDR
    socket_file: str = ""
    var_run: str = DEFAULT_VAR_RUN
    max_workers_for_pull_image: int = -1
    qps: float = 0.0
    burst: int = 0
    feature_gates: dict[str, bool] = field(default_factory=dict)

    @property
    def client_qps(self) -> float:
        return self.qps if self.qps > 0 else 5.0

    @property
    def client_burst(self) -> int:
        return self.burst if self.burst > 0 else 10
