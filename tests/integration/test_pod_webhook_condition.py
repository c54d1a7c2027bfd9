"""The pod webhook's match condition never turns a pod's own mistake into a webhook error.

``mpod.kb.io`` is sent only pods a SidecarSet selects or that ask for a launch order (CEL). A pod
without ``containers`` (``kubectl apply`` of ``spec: {restartPolicy: Never}``, a job template
missing them) must get the API server's own ``spec.containers: Required value``: the condition
once iterated the missing list and every such pod, in any namespace, got ``expression ...
resulted in error: got 'types.Null', expected iterable type`` instead.
"""

from __future__ import annotations

import pytest

from kruise.core.errors import KruiseError
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import PODS

pytestmark = pytest.mark.usefixtures("manager")


async def test_a_pod_without_containers_gets_the_api_servers_own_error(
    kube: KubeClient, namespace: str
) -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "empty"},
        "spec": {"restartPolicy": "Never"},
    }
    with pytest.raises(KruiseError) as refused:
        await kube.create(PODS, pod, namespace)
    message = str(refused.value)
    assert "spec.containers: Required value" in message, message
    assert "expression" not in message, message
