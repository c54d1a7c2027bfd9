"""CRI socket discovery, pull-secret credentials and grpc error translation (pure parts)."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import grpc
import pytest

from kruise.daemon.cri.auth import pull_auths, registry_host
from kruise.daemon.cri.endpoint import PROBE_ORDER, resolve_endpoint
from kruise.daemon.cri.grpcclient import translate
from kruise.daemon.cri.port import (
    CriError,
    CriNotFoundError,
    CriPullError,
    CriTimeoutError,
    CriUnavailableError,
    PullAuth,
)


def present(*paths: str) -> Any:
    return lambda p: str(p) in paths


@pytest.mark.parametrize(
    ("socket_file", "existing", "expected"),
    [
        pytest.param("", ("/hostvarrun/containerd/containerd.sock", "/hostvarrun/crio.sock"),
                     "unix:///hostvarrun/containerd/containerd.sock", id="containerd before crio"),
        pytest.param("", ("/hostvarrun/cri-dockerd.sock",), "unix:///hostvarrun/cri-dockerd.sock",
                     id="cri-dockerd"),
        pytest.param("k3s/containerd.sock", ("/hostvarrun/k3s/containerd.sock",),
                     "unix:///hostvarrun/k3s/containerd.sock", id="--socket-file under the var-run dir"),
        pytest.param("/run/kruise/x/node.sock", ("/run/kruise/x/node.sock",), "unix:///run/kruise/x/node.sock",
                     id="an absolute --socket-file as it is"),
    ],
)  # fmt: skip
def test_resolve_endpoint(socket_file: str, existing: tuple[str, ...], expected: str) -> None:
    assert resolve_endpoint(socket_file, "/hostvarrun", present(*existing)) == expected


def test_no_socket_names_every_path_tried() -> None:
    with pytest.raises(CriUnavailableError) as caught:
        resolve_endpoint("", "/hostvarrun", present())
    for name in PROBE_ORDER:
        assert str(Path("/hostvarrun") / name) in str(caught.value)
    with pytest.raises(CriUnavailableError, match="--socket-file"):
        resolve_endpoint("missing.sock", "/hostvarrun", present())


def secret(auths: dict[str, Any], kind: str = "kubernetes.io/dockerconfigjson") -> dict[str, Any]:
    if kind == "kubernetes.io/dockercfg":
        return {"type": kind, "data": {".dockercfg": base64.b64encode(json.dumps(auths).encode()).decode()}}
    body = json.dumps({"auths": auths}).encode()
    return {"type": kind, "data": {".dockerconfigjson": base64.b64encode(body).decode()}}


@pytest.mark.parametrize(
    ("image", "host"),
    [("nginx:1", "docker.io"), ("library/nginx", "docker.io"), ("kruise.local/busybox:v1", "kruise.local"),
     ("127.0.0.1:5000/a/b:c", "127.0.0.1:5000"), ("localhost/x", "localhost"),
     ("index.docker.io/a/b", "docker.io")],
)  # fmt: skip
def test_registry_host(image: str, host: str) -> None:
    assert registry_host(image) == host


def test_pull_auths_match_the_images_registry_in_secret_order() -> None:
    user_pass = base64.b64encode(b"alice:s3cret").decode()
    first = secret(
        {
            "https://index.docker.io/v1/": {"auth": user_pass},
            "kruise.local": {"username": "bob", "password": "p"},
        }
    )
    second = secret({"kruise.local": {"username": "carol", "password": "q"}}, kind="kubernetes.io/dockercfg")
    broken = {"type": "kubernetes.io/dockerconfigjson", "data": {".dockerconfigjson": "!!!"}}
    hub = pull_auths([first, second, broken], "nginx:1")
    assert hub == [
        PullAuth(
            username="alice", password="s3cret", auth=user_pass, server_address="https://index.docker.io/v1/"
        )
    ]
    local = pull_auths([first, second, broken], "kruise.local/busybox:v1")
    assert [a.username for a in local] == ["bob", "carol"]
    assert pull_auths([first], "quay.io/x:1") == []


class FakeRpcError(grpc.RpcError):
    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        self._code, self._details = code, details

    def code(self) -> grpc.StatusCode:
        return self._code

    def details(self) -> str:
        return self._details


@pytest.mark.parametrize(
    ("code", "pulling", "kind"),
    [
        (grpc.StatusCode.UNAVAILABLE, False, CriUnavailableError),
        (grpc.StatusCode.DEADLINE_EXCEEDED, True, CriTimeoutError),
        (grpc.StatusCode.NOT_FOUND, False, CriNotFoundError),
        (grpc.StatusCode.NOT_FOUND, True, CriPullError),
        (grpc.StatusCode.UNKNOWN, True, CriPullError),
        (grpc.StatusCode.UNKNOWN, False, CriError),
    ],
)
def test_grpc_errors_become_the_ports_errors(
    code: grpc.StatusCode, pulling: bool, kind: type[CriError]
) -> None:
    error = translate(FakeRpcError(code, "boom"), "call", pulling=pulling)
    assert type(error) is kind
    assert (str(error), error.code) == ("call: boom", code.name)
