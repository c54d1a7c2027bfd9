"""The Authorization header follows the loader's token refresh, in a pod and from a kubeconfig;
what a user reads when there is no kubeconfig or no server."""

from __future__ import annotations

import base64
import os
import socket
import ssl
import tempfile
from pathlib import Path

import pytest
import yaml
from kubernetes_asyncio.client import Configuration
from kubernetes_asyncio.config import ConfigException

from kruise.core.certs import CertificateAuthority, cert_pem, key_pem
from kruise.core.errors import NotFoundError, TransientError
from kruise.core.kube import KubeClient
from kruise.core.kube.answers import error_of
from kruise.core.kube.client import transport_error
from kruise.core.kube.config import KubeConfig, load_kube_config
from kruise.core.kube.resources import NAMESPACES, resource_of_path


async def test_an_in_cluster_token_is_reread_by_the_loaders_plain_function_hook() -> None:
    """``load_incluster_config`` installs a plain function (it rereads the projected token file);
    awaiting its result broke every request of a manager running in a pod."""
    cfg = Configuration()
    tokens = iter(["Bearer first", "Bearer second"])

    def reread(configuration: Configuration) -> None:
        configuration.api_key["BearerToken"] = next(tokens)

    cfg.refresh_api_key_hook = reread
    kube = KubeConfig(server="https://10.96.0.1:443", ssl_context=False, source=cfg)
    assert (await kube.refresh_headers())["Authorization"] == "Bearer first"
    assert (await kube.refresh_headers())["Authorization"] == "Bearer second"


async def test_an_exec_plugins_coroutine_hook_is_awaited() -> None:
    cfg = Configuration()
    cfg.api_key_prefix["authorization"] = "Bearer"

    async def exec_plugin(configuration: Configuration) -> None:
        configuration.api_key["authorization"] = "from-plugin"

    cfg.refresh_api_key_hook = exec_plugin
    kube = KubeConfig(server="https://127.0.0.1:6443", ssl_context=False, source=cfg)
    assert (await kube.refresh_headers())["Authorization"] == "Bearer from-plugin"


async def test_a_missing_kubeconfig_is_named_not_called_invalid(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No file at $KUBECONFIG (a cluster taken down): one error naming the path, not the
    loader's "Invalid kube-config file. Expected key current-context"."""
    gone = tmp_path / "gone" / "kubeconfig"
    monkeypatch.setenv("KUBECONFIG", f"{gone}{os.pathsep}{tmp_path / 'also-gone'}")
    with pytest.raises(ConfigException) as err:
        await load_kube_config()
    message = str(err.value)
    assert str(gone) in message and "does not exist" in message and "kruise cluster up" in message
    assert "current-context" not in message


async def test_an_unreachable_server_reads_as_aiohttp_says_not_as_a_repr() -> None:
    """`kruise rollout status` against a refused port: "Cannot connect to host ...", not
    ``ClientConnectorError(ConnectionKey(...))``."""
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    kube = KubeClient(KubeConfig(server=f"https://127.0.0.1:{port}", ssl_context=False))
    try:
        with pytest.raises(TransientError) as err:
            await kube.get(NAMESPACES, "default")
    finally:
        await kube.close()
    message = str(err.value)
    assert message.startswith("GET /api/v1/namespaces/default: Cannot connect to host 127.0.0.1"), message
    assert "ConnectionKey" not in message
    assert transport_error(TimeoutError()) == "TimeoutError"


async def test_inline_certificates_leave_no_file_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A kubeconfig with ``*-data`` fields: the loader writes the CA, client certificate and key
    to temp files and removes them only at a normal interpreter exit, so a process ended by a
    signal left its client key in the temp directory (hundreds in /tmp after a day of runs). Once
    the SSL context has read them they are gone, and a second load of the same kubeconfig in the
    process (the loader caches the files by content) still works."""
    ca = CertificateAuthority.create()
    key, cert = ca.issue("admin", organization="system:masters", client=True)

    def b64(data: bytes) -> str:
        return base64.b64encode(data).decode()

    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [
                    {
                        "name": "c",
                        "cluster": {
                            "server": "https://127.0.0.1:1",
                            "certificate-authority-data": b64(cert_pem(ca.cert)),
                        },
                    }
                ],
                "users": [
                    {
                        "name": "u",
                        "user": {
                            "client-certificate-data": b64(cert_pem(cert)),
                            "client-key-data": b64(key_pem(key)),
                        },
                    }
                ],
                "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "x",
            }
        )
    )
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    for _ in range(2):
        config = await load_kube_config(kubeconfig)
        assert config.server == "https://127.0.0.1:1"
        assert isinstance(config.ssl_context, ssl.SSLContext)
        assert config.ssl_context.get_ca_certs()  # the CA was read from the file before it went
        assert list(temp.iterdir()) == []


@pytest.mark.parametrize(
    ("path", "named"),
    [
        (
            "/apis/rollouts.kruise.io/v1beta1/namespaces/shop/rollouts/web",
            ("rollouts.rollouts.kruise.io", "web"),
        ),
        ("/apis/rollouts.kruise.io/v1beta1/namespaces/shop/rollouts", ("rollouts.rollouts.kruise.io",)),
        ("/api/v1/namespaces/shop/pods/web/status", ("pods", "web")),
        ("/api/v1/namespaces/shop", ("namespaces", "shop")),
        ("/api/v1/nodes?labelSelector=a", ("nodes",)),
        ("/healthz", ()),
    ],
)
def test_an_api_path_names_its_resource_as_kubectl_does(path: str, named: tuple[str, ...]) -> None:
    assert resource_of_path(path) == named


def test_a_path_the_server_does_not_serve_reads_as_client_gos_not_found() -> None:
    """A kind whose CRD is not installed: the API server answers ``404 page not found`` as text;
    the CLI printed ``Error from server (404): 404 page not found``. client-go reads it as
    NotFound, "the server could not find the requested resource", with what was asked."""
    path = "/apis/rollouts.kruise.io/v1beta1/namespaces/shop/rollouts/web"
    err = error_of(404, b"404 page not found\n", "GET", path)
    assert isinstance(err, NotFoundError)
    assert (err.reason, err.message) == (
        "NotFound",
        "the server could not find the requested resource (get rollouts.rollouts.kruise.io web)",
    )
    status = (
        b'{"kind":"Status","reason":"NotFound","message":"rollouts.rollouts.kruise.io \\"web\\" not found"}'
    )
    named = error_of(404, status, "GET", path)  # a served kind, the object missing: its Status
    assert named.message == 'rollouts.rollouts.kruise.io "web" not found'
