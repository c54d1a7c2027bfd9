"""kubectl's global flags and kubeconfig rules for the kubectl-kruise commands.

``kubectl kruise -n shop rollout status rollout/web`` and ``... status rollout/web -n shop`` are
the same command for kubectl (cobra's persistent flags go anywhere); :func:`hoist_global_flags`
moves ``-n/--namespace``, ``--context`` and ``--kubeconfig`` in front of the sub-command so the
root callback reads them. The namespace, as kubectl (client-go's ``clientcmd``) decides it:

1. ``-n/--namespace``;
2. the namespace of the kubeconfig context (``--context``, else ``current-context``), the files
   merged as ``$KUBECONFIG`` lists them (the first file to set a context or ``current-context``
   wins), else ``~/.kube/config``;
3. in a pod without a kubeconfig: ``$POD_NAMESPACE``, then the service account's namespace file;
4. ``default``.

Errors print as kubectl prints them (``Error from server (NotFound): ...`` or ``error: ...``)
and exit 1.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import typer
import yaml

from kruise.core.errors import ApiError, KruiseError
from kruise.core.kube import KubeClient

T = TypeVar("T")

#: kubectl global flags taking a value, long name for each spelling.
GLOBAL_FLAGS = {"-n": "--namespace", "--namespace": "--namespace", "--context": "--context"}
GLOBAL_FLAGS["--kubeconfig"] = "--kubeconfig"
#: The sub-commands that follow kubectl's flag rules (the others keep their own flags).
KUBECTL_COMMANDS = frozenset(
    {"rollout", "set", "scale", "scaledown", "describe", "create", "migrate", "expose"}
)
#: ``--dry-run``'s values; kubectl reads a bare ``--dry-run`` as ``--dry-run=client``.
DRY_RUN_VALUES = frozenset({"none", "client", "server"})
SERVICE_ACCOUNT_NAMESPACE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")


def hoist_global_flags(argv: Sequence[str]) -> list[str]:
    """``argv`` (without the program name) with kubectl's global flags moved to the front and a
    bare ``--dry-run`` spelled ``--dry-run=client``, as kubectl reads it (``--flag=false`` is
    :func:`kruise.rollouts.cli.boolflags.spell_bool_flags`' job, for every command).

    Only for :data:`KUBECTL_COMMANDS`; nothing after ``--`` moves (a command for a Job, say).
    """
    head: list[str] = []
    rest: list[str] = []
    args = list(argv)
    command = None
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            rest.extend(args[i:])
            break
        flag, eq, value = arg.partition("=")
        short = arg[:2] if arg.startswith("-n") and not arg.startswith("--") and len(arg) > 2 else None
        if flag in GLOBAL_FLAGS and eq:
            head.append(f"{GLOBAL_FLAGS[flag]}={value}")
        elif flag in GLOBAL_FLAGS and i + 1 < len(args):
            head.append(f"{GLOBAL_FLAGS[flag]}={args[i + 1]}")
            i += 1
        elif short == "-n":
            head.append(f"--namespace={arg[2:]}")
        elif arg == "--dry-run" and (i + 1 == len(args) or args[i + 1] not in DRY_RUN_VALUES):
            rest.append("--dry-run=client")
        else:
            if command is None and not arg.startswith("-"):
                command = arg
            rest.append(arg)
        i += 1
    if command not in KUBECTL_COMMANDS:
        return list(argv)
    return [*head, *rest]


def _kubeconfig_paths(explicit: str | None) -> list[Path]:
    if explicit:
        return [Path(explicit).expanduser()]
    env = os.environ.get("KUBECONFIG")
    if env:
        return [Path(p).expanduser() for p in env.split(os.pathsep) if p]
    return [Path("~/.kube/config").expanduser()]


def merged_kubeconfig(paths: Sequence[Path]) -> dict[str, Any]:
    """``current-context`` and ``contexts`` merged as clientcmd merges them (first one wins)."""
    current = ""
    contexts: dict[str, Mapping[str, Any]] = {}
    for path in paths:
        if not path.is_file():
            continue
        data = yaml.safe_load(path.read_text()) or {}
        current = current or str(data.get("current-context") or "")
        for entry in data.get("contexts") or []:
            contexts.setdefault(str(entry.get("name")), entry.get("context") or {})
    return {"current-context": current, "contexts": contexts}


@dataclass(frozen=True)
class KubeTarget:
    """Which cluster and namespace a command talks to (kubectl's global flags)."""

    kubeconfig: str | None = None
    context: str | None = None
    namespace_flag: str | None = None

    def namespace(self) -> str:
        """The namespace as kubectl picks it (module docstring)."""
        if self.namespace_flag:
            return self.namespace_flag
        paths = _kubeconfig_paths(self.kubeconfig)
        if any(p.is_file() for p in paths):
            config = merged_kubeconfig(paths)
            name = self.context or config["current-context"]
            context = config["contexts"].get(name) or {}
            return str(context.get("namespace") or "default")
        if os.environ.get("KUBERNETES_SERVICE_HOST"):
            if os.environ.get("POD_NAMESPACE"):
                return os.environ["POD_NAMESPACE"]
            if SERVICE_ACCOUNT_NAMESPACE.is_file():
                return SERVICE_ACCOUNT_NAMESPACE.read_text().strip() or "default"
        return "default"

    async def client(self) -> KubeClient:
        return await KubeClient.from_kubeconfig(self.kubeconfig, context=self.context, qps=50, burst=100)


def target_of(ctx: typer.Context) -> KubeTarget:
    """The :class:`KubeTarget` the root callback stored (defaults when called without it)."""
    obj = ctx.find_root().obj
    return obj if isinstance(obj, KubeTarget) else KubeTarget()


def fail(message: str, code: int = 1) -> NoReturn:
    """Print ``error: <message>`` to stderr (kubectl's wording) and exit ``code``."""
    sys.stderr.write(message if message.startswith("error: ") else f"error: {message}")
    sys.stderr.write("\n")
    raise typer.Exit(code)


def server_error(err: ApiError) -> str:
    """kubectl's line for an API error: ``Error from server (NotFound): ...``."""
    return f"Error from server ({err.reason}): {err.message}"


def run_kube(target: KubeTarget, body: Callable[[KubeClient, str], Awaitable[T]]) -> T:
    """Run ``body(client, namespace)``; API and config errors end the command as kubectl does."""

    async def main() -> T:
        kube = await target.client()
        try:
            return await body(kube, target.namespace())
        finally:
            await kube.close()

    try:
        return asyncio.run(main())
    except ApiError as err:
        sys.stderr.write(server_error(err) + "\n")
        raise typer.Exit(1) from err
    except KruiseError as err:
        fail(str(err))
    except OSError as err:  # an unreadable kubeconfig, a refused connection
        fail(str(err))
    except Exception as err:
        if type(err).__name__ == "ConfigException":  # kubernetes_asyncio's: no usable kubeconfig
            fail(str(err))
        raise
