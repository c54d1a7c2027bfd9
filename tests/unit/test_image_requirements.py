"""``hack/image/requirements.txt``: what the image installs is what the tests ran with.

The image installs its dependencies with ``--no-deps`` from this file, so the file must be the
whole runtime closure of ``pyproject.toml``'s ``dependencies`` (every requirement of every pinned
package, markers evaluated for the image's Linux/CPython 3.11), each pinned with ``==`` to a
version inside the project's specifiers, and equal to the version installed in the development
environment the test suite runs in. Regenerate after a dependency change: install the wheel in a
fresh venv and ``pip freeze --exclude kruise``.
"""

from __future__ import annotations

import importlib.metadata as md
import tomllib
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[2]
PINS_FILE = REPO / "hack" / "image" / "requirements.txt"


def pins() -> dict[str, str]:
    out: dict[str, str] = {}
    for line in PINS_FILE.read_text().splitlines():
        line = line.split("#")[0].strip()
        if not line:
            continue
        name, sep, version = line.partition("==")
        assert sep and version, f"not pinned with ==: {line!r}"
        out[canonicalize_name(name)] = version
    return out


def runtime_requirements() -> list[Requirement]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    return [Requirement(r) for r in project["dependencies"]]


def applies(req: Requirement) -> bool:
    env = {**default_environment(), "extra": "", "sys_platform": "linux", "platform_system": "Linux"}
    return req.marker is None or req.marker.evaluate(env)


def test_every_project_dependency_is_pinned_inside_its_specifier() -> None:
    pinned = pins()
    for req in runtime_requirements():
        name = canonicalize_name(req.name)
        assert name in pinned, f"{req.name} is a dependency of kruise but not pinned in {PINS_FILE.name}"
        assert req.specifier.contains(pinned[name], prereleases=True), f"{name}=={pinned[name]} breaks {req}"


def test_the_pins_are_the_whole_closure_and_nothing_else() -> None:
    pinned = pins()
    seen: set[str] = set()
    todo = [r for r in runtime_requirements() if applies(r)]
    while todo:
        req = todo.pop()
        name = canonicalize_name(req.name)
        if name in seen:
            continue
        seen.add(name)
        assert name in pinned, f"{name} (needed by the runtime dependencies) is not pinned"
        assert req.specifier.contains(pinned[name], prereleases=True), f"{name}=={pinned[name]} breaks {req}"
        todo += [r for r in (Requirement(s) for s in md.requires(req.name) or []) if applies(r)]
    assert set(pinned) - seen == set(), f"pinned but not needed: {sorted(set(pinned) - seen)}"


def test_the_pins_are_the_versions_the_tests_run_with() -> None:
    differ = {name: (v, md.version(name)) for name, v in pins().items() if md.version(name) != v}
    assert differ == {}, f"image pin != development environment (pin, installed): {differ}"
