"""Build small OCI images from local files, without a container engine or the internet.

:func:`write_oci_layout` packs files into one uncompressed, reproducible layer (sorted
entries, mtime 0, uid/gid 0) and writes an OCI image layout directory (``oci-layout``,
``index.json``, ``blobs/sha256/``) that ``skopeo copy oci:DIR:TAG docker://...`` pushes.
The same inputs always give the same digests; a different file gives a different one.

:func:`catalogue` is what the local real nodes pull from ``kruise.local``:

- ``pause:3.10``: our static pause program (``hack/pause``), the sandbox image;
- ``busybox:v1`` ... ``busybox:v4``: Debian's static busybox with a shell that serves
  ``/www`` on port 8080 (``httpd``) and exits 0 on SIGTERM, so a container stops at once
  instead of waiting out its grace period. Each tag carries its own ``/VERSION`` and
  ``/www/index.html``, hence its own digest: a kubelet then reports a new ``imageID``
  after an in-place update, which is what OpenKruise's completion check compares.
"""

from __future__ import annotations

import hashlib
import io
import json
import random
import tarfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REGISTRY_HOST = "kruise.local"
PAUSE_TAG = "3.10"
BUSYBOX_TAGS = ("v1", "v2", "v3", "v4")
#: busybox applets linked into /bin of the busybox images
APPLETS = (
    "sh", "cat", "echo", "env", "false", "hostname", "httpd", "id", "kill", "ls", "mkdir",
    "ps", "pwd", "rm", "sleep", "test", "touch", "true", "wget",
)  # fmt: skip
SERVE = "trap 'exit 0' TERM INT; httpd -f -p \"${PORT:-8080}\" -h /www & wait"
MEDIA_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
MEDIA_CONFIG = "application/vnd.oci.image.config.v1+json"
MEDIA_LAYER = "application/vnd.oci.image.layer.v1.tar"


def image_ref(repository: str, tag: str) -> str:
    """``kruise.local/<repository>:<tag>``, the name pods use."""
    return f"{REGISTRY_HOST}/{repository}:{tag}"


PAUSE_IMAGE = image_ref("pause", PAUSE_TAG)


def busybox(tag: str = "v1") -> str:
    """The busybox image of ``tag`` (one of :data:`BUSYBOX_TAGS`)."""
    if tag not in BUSYBOX_TAGS:
        raise ValueError(f"no busybox image {tag!r}; built tags: {', '.join(BUSYBOX_TAGS)}")
    return image_ref("busybox", tag)


@dataclass(frozen=True)
class Entry:
    """One file of a layer: ``data`` (bytes) or ``link`` (symlink target), at ``path``."""

    path: str
    data: bytes | None = None
    mode: int = 0o644
    link: str | None = None


@dataclass(frozen=True)
class ImageSpec:
    """An image to build: repository, tag, files and the container defaults."""

    repository: str
    tag: str
    entries: tuple[Entry, ...]
    entrypoint: tuple[str, ...] = ()
    cmd: tuple[str, ...] = ()
    env: tuple[str, ...] = ("PATH=/bin",)
    labels: dict[str, str] = field(default_factory=dict)

    @property
    def ref(self) -> str:
        return image_ref(self.repository, self.tag)


def layer_tar(entries: Sequence[Entry]) -> bytes:
    """A reproducible tar of ``entries``, parent directories included."""
    dirs: set[str] = set()
    for entry in entries:
        parts = entry.path.strip("/").split("/")[:-1]
        dirs.update("/".join(parts[: i + 1]) for i in range(len(parts)))
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for d in sorted(dirs):
            info = tarfile.TarInfo(d)
            info.type, info.mode = tarfile.DIRTYPE, 0o755
            tar.addfile(info)
        for entry in sorted(entries, key=lambda e: e.path):
            info = tarfile.TarInfo(entry.path.strip("/"))
            info.mode = entry.mode
            if entry.link is not None:
                info.type, info.linkname = tarfile.SYMTYPE, entry.link
                tar.addfile(info)
            else:
                data = entry.data or b""
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _write_blob(blobs: Path, data: bytes) -> dict[str, Any]:
    digest = hashlib.sha256(data).hexdigest()
    path = blobs / digest
    if not path.exists():
        path.write_bytes(data)
    return {"digest": f"sha256:{digest}", "size": len(data)}


def _canonical(obj: Any) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()


def write_oci_layout(spec: ImageSpec, out: Path) -> str:
    """Write ``spec`` as an OCI image layout in ``out`` (tag = ``spec.tag``); returns the
    manifest digest (``sha256:...``). Several specs may share one ``out``."""
    blobs = out / "blobs" / "sha256"
    blobs.mkdir(parents=True, exist_ok=True)
    (out / "oci-layout").write_text(json.dumps({"imageLayoutVersion": "1.0.0"}))
    layer = _write_blob(blobs, layer_tar(spec.entries))
    config: dict[str, Any] = {
        "architecture": "amd64",
        "os": "linux",
        "config": {"Env": list(spec.env), "WorkingDir": "/", "Labels": dict(spec.labels)},
        "rootfs": {"type": "layers", "diff_ids": [layer["digest"]]},
    }
    if spec.entrypoint:
        config["config"]["Entrypoint"] = list(spec.entrypoint)
    if spec.cmd:
        config["config"]["Cmd"] = list(spec.cmd)
    config_desc = _write_blob(blobs, _canonical(config))
    manifest = {
        "schemaVersion": 2,
        "mediaType": MEDIA_MANIFEST,
        "config": {"mediaType": MEDIA_CONFIG, **config_desc},
        "layers": [{"mediaType": MEDIA_LAYER, **layer}],
    }
    manifest_desc = _write_blob(blobs, _canonical(manifest))
    index_path = out / "index.json"
    index: dict[str, Any] = (
        json.loads(index_path.read_text()) if index_path.exists() else {"schemaVersion": 2}
    )
    others = [
        m
        for m in index.get("manifests", [])
        if m.get("annotations", {}).get("org.opencontainers.image.ref.name") != spec.tag
    ]
    index["manifests"] = [
        *others,
        {
            "mediaType": MEDIA_MANIFEST,
            **manifest_desc,
            "annotations": {"org.opencontainers.image.ref.name": spec.tag},
        },
    ]
    index_path.write_text(json.dumps(index, indent=1))
    return str(manifest_desc["digest"])


def pause_spec(pause_binary: bytes) -> ImageSpec:
    return ImageSpec(
        repository="pause",
        tag=PAUSE_TAG,
        entries=(Entry("pause", pause_binary, 0o755),),
        entrypoint=("/pause",),
    )


def busybox_spec(busybox_binary: bytes, tag: str) -> ImageSpec:
    entries = [Entry("bin/busybox", busybox_binary, 0o755)]
    entries += [Entry(f"bin/{applet}", link="busybox") for applet in APPLETS]
    entries += [
        Entry("VERSION", f"{tag}\n".encode()),
        Entry("www/index.html", f"busybox {tag}\n".encode()),
    ]
    return ImageSpec(
        repository="busybox",
        tag=tag,
        entries=tuple(entries),
        cmd=("/bin/sh", "-c", SERVE),
        labels={"io.kruise.image.version": tag},
    )


PAYLOAD_CHUNK = 64 * 1024 * 1024


def payload_spec(busybox_binary: bytes, repository: str, tag: str, payload_bytes: int = 0) -> ImageSpec:
    """A busybox image (as :func:`busybox_spec`) named ``repository:tag`` with ``/payload`` of
    ``payload_bytes`` incompressible bytes derived from the name, so every name is a new image
    of the size asked for (a pull that really transfers, for pre-pull tests and benchmarks)."""
    rng = random.Random(f"{repository}:{tag}")
    # in chunks: one randbytes() call takes at most 256 MiB (its bit count is a C int); chunks of
    # whole 32-bit words give the same bytes as one call would
    chunks = [
        rng.randbytes(min(PAYLOAD_CHUNK, payload_bytes - at)) for at in range(0, payload_bytes, PAYLOAD_CHUNK)
    ]
    payload = b"".join(chunks)
    base = busybox_spec(busybox_binary, "v1")
    entries = (*base.entries, Entry("payload", payload), Entry("NAME", f"{repository}:{tag}\n".encode()))
    return ImageSpec(repository, tag, entries, cmd=base.cmd, labels={"io.kruise.image.version": tag})


def catalogue_refs() -> list[str]:
    """The names of every image :func:`catalogue` builds."""
    return [PAUSE_IMAGE, *(busybox(tag) for tag in BUSYBOX_TAGS)]


def catalogue(pause_binary: bytes, busybox_binary: bytes) -> list[ImageSpec]:
    """Every image the local real nodes serve (see the module docstring)."""
    return [pause_spec(pause_binary), *(busybox_spec(busybox_binary, tag) for tag in BUSYBOX_TAGS)]
