"""Go-style boolean flags (``--watch=false``, ``-w=false``) for every command (pure).

kubectl-kruise is a cobra program: its boolean flags are pflag flags, which take an optional
``=value`` parsed by Go's ``strconv.ParseBool`` (``1 t T TRUE true True`` / ``0 f F FALSE false
False``), on the long and the short name alike; ``-w false`` (a separate word) is not a value, so
it stays a positional argument there and here. Click spells the same flags ``--watch`` /
``--no-watch`` and refuses a value, so :func:`spell_bool_flags` rewrites each ``FLAG=VALUE`` whose
FLAG is a boolean flag of a command on the command line (the command reached so far, or one of
its parents) into click's spelling before click parses the line:

- true -> the flag's own name (``--watch``, ``-w``);
- false -> its ``--no-`` name when it has one, else nothing (the flag stays at its default,
  ``False``, as pflag leaves it);
- any other value is left as it is, for click to refuse (pflag refuses it too).

Nothing after ``--`` is touched (a Job's command line, say).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

TRUE_WORDS = frozenset({"1", "t", "T", "TRUE", "true", "True"})
FALSE_WORDS = frozenset({"0", "f", "F", "FALSE", "false", "False"})
"""Go's ``strconv.ParseBool`` words (what pflag takes after a boolean flag's ``=``)."""


class Param(Protocol):
    """The part of a click parameter read here."""

    @property
    def opts(self) -> Sequence[str]: ...

    @property
    def secondary_opts(self) -> Sequence[str]: ...


class Command(Protocol):
    """The part of a click command (or group, with ``commands``) read here."""

    @property
    def params(self) -> Sequence[Param]: ...


def _bool_flags(command: Command) -> dict[str, tuple[str, str | None]]:
    """Each spelling of ``command``'s boolean flags -> (the true spelling, the false one or None)."""
    out: dict[str, tuple[str, str | None]] = {}
    for param in command.params:
        if not getattr(param, "is_bool_flag", False):
            continue
        positive = [o for o in param.opts if o.startswith("-")]
        negative = next(iter(param.secondary_opts), None)
        for name in positive:
            out[name] = (name, negative)
    return out


def _subcommands(command: Command) -> Mapping[str, Command]:
    commands: Mapping[str, Command] = getattr(command, "commands", None) or {}
    return commands


def spell_bool_flags(argv: Sequence[str], root: Command) -> list[str]:
    """``argv`` (without the program name) with ``--flag=true|false`` of ``root``'s commands in
    click's spelling (see the module doc); everything else unchanged and in order."""
    out: list[str] = []
    flags = _bool_flags(root)
    command = root
    for i, arg in enumerate(argv):
        if arg == "--":
            out.extend(argv[i:])
            break
        if not arg.startswith("-") and arg in _subcommands(command):
            command = _subcommands(command)[arg]
            flags = {**flags, **_bool_flags(command)}
            out.append(arg)
            continue
        name, eq, value = arg.partition("=")
        if eq and name in flags and (value in TRUE_WORDS or value in FALSE_WORDS):
            positive, negative = flags[name]
            out.extend(_spelled(positive, negative, value in TRUE_WORDS))
            continue
        out.append(arg)
    return out


def _spelled(positive: str, negative: str | None, value: bool) -> Iterable[str]:
    if value:
        return (positive,)
    return (negative,) if negative else ()
