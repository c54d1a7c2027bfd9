"""The OCI image builder of the local real nodes: valid layouts, reproducible digests,
one digest per busybox version (what makes a kubelet report a new imageID)."""

from __future__ import annotations

import hashlib
import io
import json
import random
import tarfile
from pathlib import Path

import pytest

from kruise.core.localcluster.realnode import images
from kruise.core.localcluster.realnode.images import (
    BUSYBOX_TAGS,
    MEDIA_LAYER,
    MEDIA_MANIFEST,
    SERVE,
    busybox,
    busybox_spec,
    catalogue,
    catalogue_refs,
    layer_tar,
    pause_spec,
    payload_spec,
    write_oci_layout,
)

FAKE_BUSYBOX = b"\x7fELF busybox stand-in"
FAKE_PAUSE = b"\x7fELF pause stand-in"


def _blob(layout: Path, digest: str) -> bytes:
    data = (layout / "blobs" / "sha256" / digest.removeprefix("sha256:")).read_bytes()
    assert hashlib.sha256(data).hexdigest() == digest.removeprefix("sha256:"), "blob named by its digest"
    return data


def _layer_members(layout: Path, manifest_digest: str) -> dict[str, tarfile.TarInfo]:
    manifest = json.loads(_blob(layout, manifest_digest))
    assert manifest["mediaType"] == MEDIA_MANIFEST
    (layer,) = manifest["layers"]
    assert layer["mediaType"] == MEDIA_LAYER
    with tarfile.open(fileobj=io.BytesIO(_blob(layout, layer["digest"]))) as tar:
        return {m.name: m for m in tar.getmembers()}


def test_layout_is_an_oci_image_layout_with_one_tag_per_image(tmp_path: Path) -> None:
    digests = {spec.tag: write_oci_layout(spec, tmp_path) for spec in catalogue(FAKE_PAUSE, FAKE_BUSYBOX)}
    assert json.loads((tmp_path / "oci-layout").read_text()) == {"imageLayoutVersion": "1.0.0"}
    index = json.loads((tmp_path / "index.json").read_text())
    tags = {m["annotations"]["org.opencontainers.image.ref.name"]: m["digest"] for m in index["manifests"]}
    assert tags == digests
    assert set(tags) == {"3.10", *BUSYBOX_TAGS}


def test_every_busybox_version_has_its_own_digest(tmp_path: Path) -> None:
    digests = [write_oci_layout(busybox_spec(FAKE_BUSYBOX, tag), tmp_path) for tag in BUSYBOX_TAGS]
    assert len(set(digests)) == len(BUSYBOX_TAGS)


def test_the_same_inputs_give_the_same_digest(tmp_path: Path) -> None:
    first = write_oci_layout(busybox_spec(FAKE_BUSYBOX, "v1"), tmp_path / "a")
    second = write_oci_layout(busybox_spec(FAKE_BUSYBOX, "v1"), tmp_path / "b")
    assert first == second


def test_rewriting_a_tag_replaces_it_in_the_index(tmp_path: Path) -> None:
    write_oci_layout(busybox_spec(FAKE_BUSYBOX, "v1"), tmp_path)
    again = write_oci_layout(busybox_spec(b"other busybox", "v1"), tmp_path)
    index = json.loads((tmp_path / "index.json").read_text())
    assert [m["digest"] for m in index["manifests"]] == [again]


def test_busybox_layer_holds_the_binary_its_applets_and_its_version(tmp_path: Path) -> None:
    digest = write_oci_layout(busybox_spec(FAKE_BUSYBOX, "v2"), tmp_path)
    members = _layer_members(tmp_path, digest)
    assert members["bin/busybox"].mode == 0o755 and members["bin/busybox"].size == len(FAKE_BUSYBOX)
    assert members["bin/sh"].issym() and members["bin/sh"].linkname == "busybox"
    assert members["bin"].isdir() and members["www"].isdir()
    assert all(m.mtime == 0 and m.uid == 0 and m.gid == 0 for m in members.values())
    with tarfile.open(fileobj=io.BytesIO(layer_tar(busybox_spec(FAKE_BUSYBOX, "v2").entries))) as tar:
        version = tar.extractfile("VERSION")
        assert version is not None and version.read() == b"v2\n"


def test_busybox_serves_http_and_exits_on_sigterm(tmp_path: Path) -> None:
    digest = write_oci_layout(busybox_spec(FAKE_BUSYBOX, "v1"), tmp_path)
    manifest = json.loads(_blob(tmp_path, digest))
    config = json.loads(_blob(tmp_path, manifest["config"]["digest"]))
    assert config["config"]["Cmd"] == ["/bin/sh", "-c", SERVE]
    assert "trap 'exit 0' TERM" in SERVE and "httpd -f" in SERVE
    assert config["rootfs"]["diff_ids"] == [manifest["layers"][0]["digest"]]  # uncompressed layer
    assert config["os"] == "linux" and config["architecture"] == "amd64"


def test_pause_image_runs_the_pause_binary(tmp_path: Path) -> None:
    digest = write_oci_layout(pause_spec(FAKE_PAUSE), tmp_path)
    manifest = json.loads(_blob(tmp_path, digest))
    config = json.loads(_blob(tmp_path, manifest["config"]["digest"]))
    assert config["config"]["Entrypoint"] == ["/pause"]
    assert _layer_members(tmp_path, digest)["pause"].mode == 0o755


def test_image_names_live_under_the_local_registry_host() -> None:
    assert busybox("v3") == "kruise.local/busybox:v3"
    assert catalogue_refs()[0] == "kruise.local/pause:3.10"
    with pytest.raises(ValueError, match="no busybox image 'v9'"):
        busybox("v9")


def test_a_payload_is_built_in_chunks_of_the_same_bytes_as_one_draw(monkeypatch: pytest.MonkeyPatch) -> None:
    """``random.randbytes`` refuses 256 MiB and more (the 300 MiB benchmark images); the payload
    is drawn in chunks, byte for byte what one draw of a smaller size gives, its length exact."""
    size = 3 * 1024 + 4
    monkeypatch.setattr(images, "PAYLOAD_CHUNK", 1024)
    spec = payload_spec(FAKE_BUSYBOX, "kruise.local/payload", "v1", size)
    (payload,) = (e for e in spec.entries if e.path.strip("/") == "payload")
    assert payload.data == random.Random("kruise.local/payload:v1").randbytes(size)
