"""``kruise crds``: write the CRDs generated from the API models."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kruise.rollouts.crds import write_crds


def crds(
    out: Annotated[Path, typer.Option("--out", help="Output directory.")] = Path("charts/kruise/files/crds"),
) -> None:
    """Generate structural apiextensions.k8s.io/v1 CRDs from the pydantic models."""
    for path in write_crds(out):
        typer.echo(str(path))
