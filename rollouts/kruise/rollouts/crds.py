"""The CRDs this product installs, and writing them as YAML files.

``ALL_CRDS`` is the single list of kinds we serve; each later kind appends its ``CRDSpec``.
Files are named like upstream's ``config/crd/bases`` (``<group>_<plural>.yaml``) and committed
under ``charts/kruise/files/crds/`` (the chart renders them from there, ``crds.managed``); a unit
test compares them with :func:`generated_crds` so the
committed YAML cannot drift from the models.
"""

from __future__ import annotations

from pathlib import Path

from kruise.analysis.api import ANALYSISRUN_CRD, ANALYSISTEMPLATE_CRD, CLUSTERANALYSISTEMPLATE_CRD
from kruise.core.crdgen import CRDSpec, render_crd_yaml
from kruise.daemon.api.containerrecreaterequest import CONTAINERRECREATEREQUEST_CRD
from kruise.daemon.api.imagepulljob import IMAGELISTPULLJOB_CRD, IMAGEPULLJOB_CRD
from kruise.daemon.api.nodeimage import NODEIMAGE_CRD
from kruise.daemon.api.podprobe import NODEPODPROBE_CRD, PODPROBEMARKER_CRD
from kruise.rollouts.api.batchrelease import BATCHRELEASE_CRD
from kruise.rollouts.api.rollout import ROLLOUT_CRD
from kruise.rollouts.api.rollouthistory import ROLLOUTHISTORY_CRD
from kruise.rollouts.api.trafficrouting import TRAFFICROUTING_CRD
from kruise.workloads.api.advancedcronjob import ADVANCEDCRONJOB_CRD
from kruise.workloads.api.broadcastjob import BROADCASTJOB_CRD
from kruise.workloads.api.cloneset import CLONESET_CRD
from kruise.workloads.api.daemonset import DAEMONSET_CRD
from kruise.workloads.api.ephemeraljob import EPHEMERALJOB_CRD
from kruise.workloads.api.persistentpodstate import PERSISTENTPODSTATE_CRD
from kruise.workloads.api.podunavailablebudget import PUB_CRD
from kruise.workloads.api.resourcedistribution import RESOURCEDISTRIBUTION_CRD
from kruise.workloads.api.sidecarset import SIDECARSET_CRD
from kruise.workloads.api.statefulset import STATEFULSET_CRD
from kruise.workloads.api.uniteddeployment import UNITEDDEPLOYMENT_CRD
from kruise.workloads.api.workloadspread import WORKLOADSPREAD_CRD

__all__ = ["ALL_CRDS", "generated_crds", "write_crds"]

ALL_CRDS: list[CRDSpec] = [
    CLONESET_CRD,
    STATEFULSET_CRD,
    DAEMONSET_CRD,
    SIDECARSET_CRD,
    BROADCASTJOB_CRD,
    ADVANCEDCRONJOB_CRD,
    UNITEDDEPLOYMENT_CRD,
    ROLLOUT_CRD,
    BATCHRELEASE_CRD,
    TRAFFICROUTING_CRD,
    ROLLOUTHISTORY_CRD,
    ANALYSISTEMPLATE_CRD,
    CLUSTERANALYSISTEMPLATE_CRD,
    ANALYSISRUN_CRD,
    NODEIMAGE_CRD,
    IMAGEPULLJOB_CRD,
    IMAGELISTPULLJOB_CRD,
    CONTAINERRECREATEREQUEST_CRD,
    PODPROBEMARKER_CRD,
    NODEPODPROBE_CRD,
    PUB_CRD,
    RESOURCEDISTRIBUTION_CRD,
    PERSISTENTPODSTATE_CRD,
    EPHEMERALJOB_CRD,
    WORKLOADSPREAD_CRD,
]
"""Every CRD served, in install order.

The multi-version kinds (Rollout, BatchRelease: v1alpha1 served, v1beta1 stored) are rendered
without ``spec.conversion``, which the API server defaults to ``strategy: None``. Upstream
converts through a webhook (:mod:`kruise.rollouts.api.conversion` holds the pure conversion);
until the manager serves it, v1alpha1-only fields (``objectRef``, ``rolloutID``, ``weight``,
``targetReference``) are pruned when a v1alpha1 object is stored.
"""


def generated_crds() -> dict[str, str]:
    """Render every CRD in ``ALL_CRDS``: file name (``apps.kruise.io_clonesets.yaml``) -> YAML text.

    Raises ``ValueError`` if two CRDs map to the same file name.
    """
    out: dict[str, str] = {}
    for spec in ALL_CRDS:
        if spec.filename in out:
            raise ValueError(f"duplicate CRD file name {spec.filename}")
        out[spec.filename] = render_crd_yaml(spec)
    return out


def write_crds(out_dir: Path) -> list[Path]:
    """Write one YAML file per CRD into ``out_dir`` (created if missing); return the paths written.

    Files are rewritten only when their content changed, so timestamps stay stable.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for filename, text in generated_crds().items():
        path = out_dir / filename
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
        written.append(path)
    return written
