"""SidecarSet admission webhooks and the SidecarSet mutator of the shared pod webhook (shells).

- ``msidecarset.kb.io`` (``/mutate-apps-kruise-io-v1alpha1-sidecarset``): defaults, then the two
  hash annotations (:mod:`.hashing`), as upstream's ``SidecarSetCreateHandler``.
- ``vsidecarset.kb.io`` (``/validate-apps-kruise-io-v1alpha1-sidecarset``): the pure rules of
  :mod:`kruise.workloads.admission.sidecarset` over the cached SidecarSets, namespaces and
  revisions; the whitelist ConfigMap ``kruise-configuration`` read from the API server; the
  containers judged by the API server itself, a server-side dry run of a pod holding them (as
  upstream runs ``ValidatePodCreate`` on a fake pod: its paths, ``spec.containers[0].image``, are
  the SidecarSet's too). A refusal is HTTP 422 with the aggregated field errors.
  Both see every CREATE and an UPDATE changing ``spec``, labels or annotations.
- :class:`SidecarSetPodMutator`: the pod webhook's injection. The SidecarSets of the pod's
  namespace, then the cluster-wide ones (each group by name), not paused for injection and
  selecting the pod, each resolved to the revision to inject (:func:`.history.choose_revision`).
  Each SidecarSet's selectors are parsed once per cached object (:func:`.matching.sidecarset_matcher`).

Every replica serves these from its own informers (they run before the Lease is held).
"""

from __future__ import annotations

import copy
import datetime
import json
import logging
import random
from collections.abc import Callable, Mapping
from typing import Any

from kruise.core.errors import ApiError, KruiseError
from kruise.core.informer.store import JSON as StoreJSON
from kruise.core.kube.client import KubeClient
from kruise.core.kube.resources import CONFIGMAPS, CONTROLLER_REVISIONS, NAMESPACES, PODS, SIDECARSETS
from kruise.core.runtime import CacheReader, Read
from kruise.core.webhook import AdmissionRequest, AdmissionResponse
from kruise.core.webhook.configuration import Rule, WebhookSettings, WebhookSpec, operation_or_changed
from kruise.core.webhook.patch import json_patch
from kruise.workloads.admission.fielderrors import FieldError, aggregate
from kruise.workloads.admission.podtemplate import template_errors
from kruise.workloads.admission.sidecarset import PatchWhitelist, SidecarSetContext, validate_sidecarset
from kruise.workloads.admission.sidecarset_defaults import default_sidecarset
from kruise.workloads.objects import KubeObject, labels, mapping, name, sequence, spec, uid
from kruise.workloads.podwebhook import PodMutationError
from kruise.workloads.sidecarset.controller import REVISION_INDEX, index_revision
from kruise.workloads.sidecarset.hashing import sidecarset_hash, sidecarset_hash_without_image
from kruise.workloads.sidecarset.history import RevisionNotFoundError, choose_revision, find_revision, restore
from kruise.workloads.sidecarset.inject import inject
from kruise.workloads.sidecarset.keys import (
    HASH_ANNOTATION,
    HASH_WITHOUT_IMAGE_ANNOTATION,
    SIDECAR_ONLY_FIELDS,
)
from kruise.workloads.sidecarset.matching import SidecarSetMatcher, pod_namespace, sidecarset_matcher

__all__ = [
    "MUTATE_SIDECARSET_PATH",
    "NAMESPACE_INDEX",
    "VALIDATE_SIDECARSET_PATH",
    "SidecarSetPodMutator",
    "SidecarSetWebhooks",
    "sidecarset_webhook_specs",
    "webhook_reads",
]

log = logging.getLogger(__name__)
JSON = dict[str, Any]
MUTATE_SIDECARSET_PATH = "/mutate-apps-kruise-io-v1alpha1-sidecarset"
VALIDATE_SIDECARSET_PATH = "/validate-apps-kruise-io-v1alpha1-sidecarset"
NAMESPACE_INDEX = "sidecarset-namespace"
CONFIGURATION_NAME = "kruise-configuration"
WHITELIST_KEY = "SidecarSet_PatchPodMetadata_WhiteList"
_VALIDATED_POD_FIELDS = ("containers", "initContainers", "volumes")
MATCHER_CACHE_SIZE = 4096
"""Parsed SidecarSet selectors kept by the pod mutator (by UID, each with the object it came from)."""


def index_namespace(sidecarset: StoreJSON) -> tuple[str, ...]:
    """:data:`NAMESPACE_INDEX`: ``spec.namespace`` ("" for a cluster-wide SidecarSet)."""
    return (str(spec(sidecarset).get("namespace") or ""),)


def webhook_reads() -> tuple[Read, ...]:
    """What the SidecarSet webhooks read from the informers."""
    return (
        Read(SIDECARSETS, {NAMESPACE_INDEX: index_namespace}),
        Read(NAMESPACES),
        Read(CONTROLLER_REVISIONS, {REVISION_INDEX: index_revision}),
    )


def sidecarset_webhook_specs(settings: WebhookSettings) -> list[WebhookSpec]:
    """``msidecarset.kb.io`` and ``vsidecarset.kb.io`` (CREATE, and UPDATEs changing what they judge)."""
    changed = operation_or_changed(
        "spec", "metadata.labels", "metadata.annotations", name="spec-or-metadata-changed"
    )
    rules = (Rule("apps.kruise.io", "v1alpha1", "sidecarsets", ("CREATE", "UPDATE")),)
    return [
        WebhookSpec(
            name=f"{kind}sidecarset.kb.io",
            path=path,
            mutating=kind == "m",
            rules=rules,
            failure_policy=settings.failure_policy,
            timeout_seconds=settings.timeout_seconds,
            match_conditions=(changed,),
        )
        for kind, path in (("m", MUTATE_SIDECARSET_PATH), ("v", VALIDATE_SIDECARSET_PATH))
    ]


class _Lookups:
    """Cache reads shared by the SidecarSet webhooks and the pod mutator."""

    def __init__(self, cache: CacheReader, namespace: str) -> None:
        self.cache = cache
        self.namespace = namespace

    def namespace_labels(self, ns: str) -> Mapping[str, str] | None:
        found = self.cache.get(NAMESPACES, ns)
        return None if found is None else labels(found)

    def stored(self, sidecarset: KubeObject, info: Mapping[str, Any]) -> KubeObject | None:
        """The SidecarSet as ``injectionStrategy.revision`` (``info``) names it, ``None`` if unnamed.

        Raises:
            RevisionNotFoundError: no such revision.
        """
        own = self.cache.by_index(
            CONTROLLER_REVISIONS, REVISION_INDEX, f"{self.namespace}/{name(sidecarset)}"
        )
        found = find_revision(
            sidecarset, info, lambda n: self.cache.get(CONTROLLER_REVISIONS, f"{self.namespace}/{n}"), own
        )
        return None if found is None else restore(sidecarset, found)


class SidecarSetWebhooks:
    """``/mutate-`` and ``/validate-apps-kruise-io-v1alpha1-sidecarset``."""

    def __init__(
        self, kube: KubeClient, cache: CacheReader, *, namespace: str, patch_defaults_allowed: bool = False
    ) -> None:
        self.kube = kube
        self.lookups = _Lookups(cache, namespace)
        self.namespace = namespace
        self.patch_defaults_allowed = patch_defaults_allowed  # gate SidecarSetPatchPodMetadataDefaultsAllowed

    async def mutate(self, req: AdmissionRequest) -> AdmissionResponse:
        if req.object is None or not isinstance(req.object.get("spec", {}), Mapping):
            return AdmissionResponse.allow()
        out = default_sidecarset(req.object)
        annotations = dict(mapping(out.setdefault("metadata", {}).get("annotations")))
        annotations[HASH_ANNOTATION] = sidecarset_hash(out)
        annotations[HASH_WITHOUT_IMAGE_ANNOTATION] = sidecarset_hash_without_image(out)
        out["metadata"]["annotations"] = annotations
        return AdmissionResponse.allow(json_patch(req.object, out))

    async def validate(self, req: AdmissionRequest) -> AdmissionResponse:
        if req.object is None:
            return AdmissionResponse.allow()
        context = SidecarSetContext(
            others=self.lookups.cache.list(SIDECARSETS),
            namespace_labels=self.lookups.namespace_labels,
            revision_error=self._revision_error,
            container_errors=await self._container_errors(req.object, req.old_object),
            whitelist=await self._whitelist(),
        )
        errors = validate_sidecarset(req.object, req.old_object, context)
        return AdmissionResponse.deny(aggregate(errors)) if errors else AdmissionResponse.allow()

    def _revision_error(self, obj: Mapping[str, Any]) -> str | None:
        info = mapping(mapping(spec(obj).get("injectionStrategy")).get("revision"))
        try:
            found = self.lookups.stored(obj, info)
        except RevisionNotFoundError as err:
            return str(err)
        return None if found is not None else "<nil>"

    async def _whitelist(self) -> PatchWhitelist:
        """``kruise-configuration``'s whitelist (absent ConfigMap or key: no rules)."""
        config = await self.kube.get_or_none(CONFIGMAPS, CONFIGURATION_NAME, self.namespace)
        value = mapping(mapping(config).get("data")).get(WHITELIST_KEY)
        if not value:
            return PatchWhitelist(defaults_allowed=self.patch_defaults_allowed)
        try:
            rules = [mapping(r) for r in sequence(mapping(json.loads(value)).get("rules"))]
        except ValueError:
            rules = []
        return PatchWhitelist(rules=rules, defaults_allowed=self.patch_defaults_allowed)

    async def _container_errors(self, obj: KubeObject, old: KubeObject | None) -> list[FieldError]:
        """Kubernetes' verdict on a pod of the containers and volumes (none when unchanged)."""
        body = spec(obj)
        if old is not None and all(body.get(k) == spec(old).get(k) for k in _VALIDATED_POD_FIELDS):
            return []
        pod = _fake_pod(body)
        try:
            await self.kube.create(PODS, pod, "default", dry_run=True)
        except ApiError as err:
            verdict = template_errors(err.status, err.body, "")
            if verdict is not None:
                return verdict
            log.info("no verdict on the containers of sidecarset %s: %s", name(obj), err)
        except KruiseError as err:
            log.info("no verdict on the containers of sidecarset %s: %s", name(obj), err)
        return []


def _container(raw: Any) -> JSON:
    return {k: copy.deepcopy(v) for k, v in mapping(raw).items() if k not in SIDECAR_ONLY_FIELDS}


def _fake_pod(body: Mapping[str, Any]) -> JSON:
    """The pod upstream validates: the SidecarSet's init containers, containers (a placeholder
    when none) and volumes, in ``default``."""
    containers = [_container(c) for c in sequence(body.get("containers"))] or [
        {
            "name": "test",
            "image": "busybox",
            "imagePullPolicy": "IfNotPresent",
            "terminationMessagePolicy": "File",
        }
    ]
    pod_spec: JSON = {"containers": containers, "restartPolicy": "Always", "dnsPolicy": "ClusterFirst"}
    inits = [_container(c) for c in sequence(body.get("initContainers"))]
    if inits:
        pod_spec["initContainers"] = inits
    if sequence(body.get("volumes")):
        pod_spec["volumes"] = copy.deepcopy(list(sequence(body.get("volumes"))))
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"generateName": "kruise-sidecarset-check-", "namespace": "default"},
        "spec": pod_spec,
    }


class SidecarSetPodMutator:
    """The pod webhook's SidecarSet injection (see the module docstring)."""

    name = "sidecarset"

    def __init__(
        self,
        cache: CacheReader,
        *,
        namespace: str,
        draw: Callable[[], float] = random.random,
        clock: Callable[[], datetime.datetime] = lambda: datetime.datetime.now(datetime.UTC),
    ) -> None:
        self.lookups = _Lookups(cache, namespace)
        self.draw = draw
        self.clock = clock
        self._matchers: dict[str, tuple[KubeObject, SidecarSetMatcher]] = {}

    def matcher(self, sidecarset: KubeObject) -> SidecarSetMatcher:
        """The SidecarSet's matcher, parsed again only when the cache holds a new object."""
        key = uid(sidecarset) or name(sidecarset)
        known = self._matchers.get(key)
        if known is not None and known[0] is sidecarset:
            return known[1]
        if len(self._matchers) > MATCHER_CACHE_SIZE:
            self._matchers.clear()
        matcher = sidecarset_matcher(sidecarset)
        self._matchers[key] = (sidecarset, matcher)
        return matcher

    def candidates(self, ns: str) -> list[KubeObject]:
        """The SidecarSets that may select a pod of ``ns``: that namespace's, then cluster-wide."""
        cache = self.lookups.cache
        own = sorted(cache.by_index(SIDECARSETS, NAMESPACE_INDEX, ns), key=name) if ns else []
        return [*own, *sorted(cache.by_index(SIDECARSETS, NAMESPACE_INDEX, ""), key=name)]

    def _stored_for(self, sidecarset: KubeObject) -> Callable[[Mapping[str, Any]], KubeObject | None]:
        def stored(info: Mapping[str, Any]) -> KubeObject | None:
            return self.lookups.stored(sidecarset, info)

        return stored

    async def mutate(self, pod: JSON, request: AdmissionRequest) -> bool:
        ns = pod_namespace(pod)
        namespace_labels: Mapping[str, str] | None = None
        chosen: list[KubeObject] = []
        for sidecarset in self.candidates(ns):
            if mapping(spec(sidecarset).get("injectionStrategy")).get("paused"):
                continue
            if spec(sidecarset).get("namespaceSelector") is not None and namespace_labels is None:
                namespace_labels = self.lookups.namespace_labels(ns)
            if not self.matcher(sidecarset)(pod, namespace_labels):
                continue
            try:
                chosen.append(choose_revision(sidecarset, pod, self._stored_for(sidecarset), self.draw))
            except (RevisionNotFoundError, ValueError) as err:
                raise PodMutationError(str(err)) from err
        try:
            out = inject(pod, chosen, self.clock())
        except ValueError as err:  # a MergePatchJson annotation that is not JSON
            raise PodMutationError(str(err)) from err
        if out is None:
            return False
        pod.clear()
        pod.update(out)
        return True
