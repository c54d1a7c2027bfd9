"""Traffic simulator for the demo: turns the HTTPRoute's live weights into request metrics.

Every tick it reads the HTTPRoute ``web``, each backend Service's selector and the Ready pods it
selects, splits ``--rps`` requests by backend weight and then by pods, and counts errors at the
error rate configured for each pod's image. It serves Prometheus counters
``demo_requests_total{revision}`` and ``demo_errors_total{revision}`` (``revision`` is the pod's
``pod-template-hash``), so shifting traffic really changes what Prometheus sees.

    python -m kruise.rollouts.demo.simulator --kubeconfig K --namespace shop --port 18000 \\
        --error-rate registry.example.com/shop/web:1.6.0=0.4
"""

from __future__ import annotations

import argparse
import asyncio
import random
from collections.abc import Mapping
from typing import Any

from prometheus_client import Counter, start_http_server

from kruise.core.kube import KubeClient, Resource
from kruise.core.kube.resources import PODS, SERVICES

HTTPROUTES = Resource("gateway.networking.k8s.io", "v1", "httproutes", "HTTPRoute")
REQUESTS = Counter("demo_requests", "Requests served, by pod-template-hash", ["revision"])
ERRORS = Counter("demo_errors", "Requests answered with an error, by pod-template-hash", ["revision"])


def _ready(pod: Mapping[str, Any]) -> bool:
    if pod["metadata"].get("deletionTimestamp"):
        return False
    return any(
        c["type"] == "Ready" and c["status"] == "True"
        for c in (pod.get("status") or {}).get("conditions") or []
    )


def _matches(labels: Mapping[str, str], selector: Mapping[str, str]) -> bool:
    return all(labels.get(k) == v for k, v in selector.items())


async def tick(
    kube: KubeClient, namespace: str, rps: float, dt: float, error_rates: Mapping[str, float]
) -> None:
    route = await kube.get_or_none(HTTPROUTES, "web", namespace)
    if route is None:
        return
    refs = [r for rule in route["spec"].get("rules") or [] for r in rule.get("backendRefs") or []]
    total_weight = sum(int(r.get("weight", 1)) for r in refs) or 1
    pods = [p for p in (await kube.list(PODS, namespace))["items"] if _ready(p)]
    for ref in refs:
        svc = await kube.get_or_none(SERVICES, ref["name"], namespace)
        if svc is None:
            continue
        selector = (svc.get("spec") or {}).get("selector") or {}
        backends = [p for p in pods if _matches(p["metadata"].get("labels") or {}, selector)]
        if not backends:
            continue
        share = rps * dt * int(ref.get("weight", 1)) / total_weight / len(backends)
        for pod in backends:
            revision = (pod["metadata"].get("labels") or {}).get("pod-template-hash", "unknown")
            image = pod["spec"]["containers"][0]["image"]
            requests = share
            errors = requests * error_rates.get(image, 0.0) * random.uniform(0.9, 1.1)
            REQUESTS.labels(revision).inc(requests)
            ERRORS.labels(revision).inc(errors)


async def run(
    kubeconfig: str, namespace: str, port: int, rps: float, error_rates: Mapping[str, float]
) -> None:
    start_http_server(port, addr="127.0.0.1")
    kube = await KubeClient.from_kubeconfig(kubeconfig)
    try:
        while True:
            await tick(kube, namespace, rps, 0.5, error_rates)
            await asyncio.sleep(0.5)
    finally:
        await kube.close()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--namespace", default="shop")
    parser.add_argument("--port", type=int, default=18000)
    parser.add_argument("--rps", type=float, default=200.0)
    parser.add_argument("--error-rate", action="append", default=[], help="IMAGE=RATE (0..1), repeatable")
    args = parser.parse_args()
    rates = {}
    for item in args.error_rate:
        image, _, rate = item.rpartition("=")
        rates[image] = float(rate)
    asyncio.run(run(args.kubeconfig, args.namespace, args.port, args.rps, rates))


if __name__ == "__main__":
    main()
