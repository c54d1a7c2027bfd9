"""The Authorization header follows the loader's token refresh, in a pod and from a kubeconfig."""

from __future__ import annotations

from kubernetes_asyncio.client import Configuration

from kruise.core.kube.config import KubeConfig


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
