"""Pushing the real nodes' images (OCI layouts from :mod:`~kruise.core.localcluster.realnode.images`)
to the cluster's registry on loopback with skopeo."""

from __future__ import annotations

import concurrent.futures
import functools
import subprocess
from pathlib import Path

from kruise.core.localcluster.errors import RealNodeError
from kruise.core.localcluster.realnode.images import ImageSpec, write_oci_layout


def copy_to_registry(spec: ImageSpec, layout: Path, registry: str) -> str:
    """``skopeo copy`` ``spec``'s tag from the OCI layout ``layout`` to ``registry``
    (``127.0.0.1:PORT``, plain HTTP); returns the registry's manifest digest (skopeo compresses
    the layers, so it is not the layout's). Raises :class:`RealNodeError`."""
    digest_file = layout / f"{spec.repository}-{spec.tag}.digest"
    proc = subprocess.run(
        [
            "/usr/bin/skopeo", "copy", "--quiet", "--insecure-policy", "--dest-tls-verify=false",
            f"--digestfile={digest_file}", f"oci:{layout}:{spec.tag}",
            f"docker://{registry}/{spec.repository}:{spec.tag}",
        ],
        capture_output=True,
        text=True,
    )  # fmt: skip
    if proc.returncode != 0:
        raise RealNodeError(f"pushing {spec.ref} to {registry}: {proc.stderr.strip()}")
    return digest_file.read_text().strip()


def push_catalogue(specs: list[ImageSpec], layout: Path, registry: str) -> dict[str, str]:
    """Write every spec into ``layout`` (one after another: they share its ``index.json``), then
    push them in parallel; returns ``{ref: digest in the registry}``."""
    for spec in specs:
        write_oci_layout(spec, layout)
    push = functools.partial(copy_to_registry, layout=layout, registry=registry)
    with concurrent.futures.ThreadPoolExecutor(max(1, len(specs))) as pool:
        return dict(zip((s.ref for s in specs), pool.map(push, specs), strict=True))
