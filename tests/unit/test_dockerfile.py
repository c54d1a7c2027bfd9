"""The Dockerfile of the one kruise image, checked without Docker (none in this environment).

Its shape is asserted (base image, a wheel installed with pip, ``ENTRYPOINT ["kruise"]``, every
source root of the wheel copied and none hidden by ``.dockerignore``), then its build stage is
replayed: a wheel is built from exactly the paths the Dockerfile copies, installed into a fresh
directory, and the ``kruise`` console script it provides runs from there.
"""

from __future__ import annotations

import fnmatch
import json
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOCKERFILE = REPO / "Dockerfile"
DOCKERIGNORE = REPO / ".dockerignore"


def instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) in order, with line continuations joined and comments dropped."""
    out: list[tuple[str, str]] = []
    pending = ""
    for raw in DOCKERFILE.read_text().splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line = pending + line
        pending = ""
        keyword, _, args = line.partition(" ")
        out.append((keyword.upper(), args.strip()))
    return out


def stages() -> list[list[tuple[str, str]]]:
    """The instructions of each ``FROM`` stage (global ``ARG``s before the first are dropped)."""
    result: list[list[tuple[str, str]]] = []
    for ins in instructions():
        if ins[0] == "FROM":
            result.append([])
        if result:
            result[-1].append(ins)
    return result


def global_args() -> dict[str, str]:
    """``ARG NAME=default`` before the first ``FROM``."""
    out: dict[str, str] = {}
    for keyword, args in instructions():
        if keyword == "FROM":
            break
        if keyword == "ARG":
            name, _, default = args.partition("=")
            out[name] = default
    return out


def wheel_roots() -> list[str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    return [p.split("/")[0] for p in project["tool"]["hatch"]["build"]["targets"]["wheel"]["only-include"]]


def copied_paths(stage: list[tuple[str, str]]) -> list[str]:
    """Sources of the stage's ``COPY`` instructions from the build context (not ``--from``)."""
    paths: list[str] = []
    for keyword, args in stage:
        if keyword != "COPY" or args.startswith("--from"):
            continue
        *sources, _dest = shlex.split(args)
        paths += [s.rstrip("/") for s in sources]
    return paths


def ignore_patterns() -> list[str]:
    lines = DOCKERIGNORE.read_text().splitlines()
    return [ln.strip() for ln in lines if ln.strip() and not ln.strip().startswith("#")]


def ignored(relpath: str, patterns: list[str]) -> bool:
    """Enough of .dockerignore's matching for our patterns (plain names, ``**/`` globs, and
    ``!`` exceptions; as Docker, the last pattern that matches decides)."""
    parts = relpath.split("/")
    verdict = False
    for raw in patterns:
        negate, pat = raw.startswith("!"), raw.lstrip("!").rstrip("/")
        if pat.startswith("**/"):
            hit = any(fnmatch.fnmatch(p, pat[3:]) for p in parts)
        else:
            hit = fnmatch.fnmatch(relpath, pat) or any(
                fnmatch.fnmatch("/".join(parts[: i + 1]), pat) for i in range(len(parts))
            )
        if hit:
            verdict = not negate
    return verdict


def test_two_stages_on_one_base_python_311_slim_by_default() -> None:
    """``docker build`` uses python:3.11-slim; ``make image`` passes BASE (a Debian bookworm
    rootfs with the same Python 3.11) to buildah: one recipe, two builders."""
    froms = [args.split()[0] for stage in stages() for kw, args in stage if kw == "FROM"]
    assert froms == ["${BASE}", "${BASE}"]
    assert global_args() == {"BASE": "python:3.11-slim"}
    script = (REPO / "hack" / "build-image.sh").read_text()
    assert "buildah bud" in script and '--build-arg "BASE=$base"' in script and "-f Dockerfile" in script


def test_runtime_is_the_base_and_the_venv_with_the_wheel_and_runs_kruise() -> None:
    build, runtime = stages()
    runs = [args for kw, args in build if kw == "RUN"]
    assert any("install" in r and "-r /tmp/requirements.txt" in r and "--no-deps" in r for r in runs), runs
    assert any("install" in r and "kruise-" in r and ".whl" in r and "--no-deps" in r for r in runs), runs
    assert [kw for kw, _ in runtime if kw == "RUN"] == [], "the runtime stage runs nothing (no shell needed)"
    assert [args for kw, args in runtime if kw == "COPY"] == ["--from=build /opt/kruise /opt/kruise"]
    entrypoint = [json.loads(args) for kw, args in runtime if kw == "ENTRYPOINT"]
    assert entrypoint == [["/opt/kruise/bin/kruise"]]
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert "kruise" in project["project"]["scripts"]
    user = [args for kw, args in runtime if kw == "USER"]
    assert user == ["65534:65534"], "the chart runs the pods as 65534"


def test_build_stage_copies_every_source_root_and_dockerignore_keeps_them() -> None:
    copied = copied_paths(stages()[0])
    assert set(wheel_roots()) <= set(copied), f"a source root is not copied: {copied}"
    assert {"pyproject.toml", "README.md", "hack/image/requirements.txt"} <= set(copied)
    patterns = ignore_patterns()
    hidden = [p for p in copied if ignored(p, patterns)]
    assert hidden == [], f".dockerignore hides what the Dockerfile copies: {hidden}"
    assert ignored(".venv", patterns) and ignored(".git", patterns)
    assert ignored("hack/build-image.sh", patterns) and ignored("tests/unit", patterns)


def test_build_stage_replayed_installs_a_working_kruise(tmp_path: Path) -> None:
    """``pip wheel`` on the copied paths, ``pip install`` of the wheel, then ``kruise --help``."""
    context = tmp_path / "src"
    patterns = ignore_patterns()
    for rel in copied_paths(stages()[0]):
        src = REPO / rel
        if src.is_dir():
            shutil.copytree(
                src,
                context / rel,
                ignore=lambda d, names: [
                    n for n in names if ignored(str((Path(d) / n).relative_to(REPO)), patterns)
                ],
            )
        else:
            (context / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, context / rel)
    dist = tmp_path / "dist"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    # --no-build-isolation: hatchling comes from the dev virtualenv, not the network
    built = subprocess.run(
        [*pip, "wheel", "--no-deps", "--no-build-isolation", "--wheel-dir", str(dist), str(context)],
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stderr
    wheel = next(dist.glob("kruise-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert "kruise/rollouts/cli/main.py" in names and "kruise/__init__.py" not in names

    target = tmp_path / "site"
    installed = subprocess.run(
        [*pip, "install", "--no-deps", "--target", str(target), str(wheel)], capture_output=True, text=True
    )
    assert installed.returncode == 0, installed.stderr
    script = target / "bin" / "kruise"
    assert script.exists(), "the wheel provides no `kruise` console script"

    # -S: no site-packages .pth files, so the editable install of this checkout stays out of the
    # way; the dependencies come from the dev virtualenv's site-packages after the installed wheel.
    env = {
        **os.environ,
        "COLUMNS": "200",
        "PYTHONPATH": os.pathsep.join([str(target), sysconfig.get_paths()["purelib"]]),
    }
    where = subprocess.run(
        [sys.executable, "-S", "-c", "import kruise.rollouts.cli.main as m; print(m.__file__)"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert where.returncode == 0, where.stderr
    assert Path(where.stdout.strip()).is_relative_to(target)
    for args in (["--help"], ["manager", "--help"]):
        ran = subprocess.run(
            [sys.executable, "-S", str(script), *args], capture_output=True, text=True, env=env, timeout=60
        )
        assert ran.returncode == 0, ran.stderr
        assert "kruise" in ran.stdout.lower()
    manager_help = ran.stdout
    for flag in ("--webhook-port", "--webhook-cert-dir", "--feature-gates", "--leader-election-namespace"):
        assert flag in manager_help


@pytest.mark.parametrize("path", ["Dockerfile", ".dockerignore"])
def test_files_exist(path: str) -> None:
    assert (REPO / path).is_file()
