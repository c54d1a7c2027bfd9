"""What ``cluster up --install`` reads back from the cluster: the caBundles it waits for."""

from __future__ import annotations

import pytest

from kruise.core.localcluster.install import ca_bundles


@pytest.mark.parametrize(
    ("doc", "expected"),
    [
        ({"webhooks": [{"clientConfig": {"caBundle": "QQ=="}}, {"clientConfig": {}}]}, ["QQ==", ""]),
        (
            {
                "spec": {
                    "conversion": {"strategy": "Webhook", "webhook": {"clientConfig": {"caBundle": "Qg=="}}}
                }
            },
            ["Qg=="],
        ),
        ({"spec": {"conversion": {"strategy": "None"}}}, [""]),
        ({"webhooks": []}, []),
    ],
    ids=["webhook-configuration", "conversion-webhook", "crd-without-webhook", "no-webhooks-yet"],
)
def test_ca_bundles_of_webhook_configurations_and_crds(doc: dict[str, object], expected: list[str]) -> None:
    assert ca_bundles(doc) == expected
