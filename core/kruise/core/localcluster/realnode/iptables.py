"""What kube-proxy leaves in iptables after ``kube-proxy --cleanup``, and removing it.

``--cleanup`` removes kube-proxy's service chains but keeps ``KUBE-FIREWALL`` (shared with the
kubelet upstream) and the tables it had to create: with the ``nf_tables`` backend
(``iptables-nft``, Debian's default) ``iptables-save`` then prints ``filter``, ``nat`` and
``mangle`` tables that were not there before. The host record keeps, per family, the tables and
``KUBE-*`` chains that existed before kube-proxy started (:func:`snapshot`); :func:`plan_undo`
(pure) turns the state after ``--cleanup`` into the iptables commands that delete the ``KUBE-*``
chains that are new (their jumps first) and the tables that are new and hold nothing else
(only built-in chains, policy ``ACCEPT``, no rule). A table someone else put a rule in stays.
"""

from __future__ import annotations

import shlex
import subprocess
from dataclasses import dataclass, field
from typing import TypedDict

#: ``(save command, iptables command, nft family)`` per IP family
FAMILIES = {"ipv4": ("iptables-save", "iptables", "ip"), "ipv6": ("ip6tables-save", "ip6tables", "ip6")}
BUILTIN_CHAINS = {"PREROUTING", "INPUT", "FORWARD", "OUTPUT", "POSTROUTING"}
KUBE_PREFIX = "KUBE-"


class FamilySnapshot(TypedDict):
    """Per family (``ipv4``/``ipv6``): table -> its chain names, as saved before kube-proxy ran."""

    tables: dict[str, list[str]]


@dataclass
class Table:
    """One table of an ``iptables-save`` dump: chain -> policy (``-`` for user chains), and its
    rules as ``(chain, rule arguments after -A CHAIN)``."""

    chains: dict[str, str] = field(default_factory=dict)
    rules: list[tuple[str, list[str]]] = field(default_factory=list)


def parse_save(text: str) -> dict[str, Table]:
    """Parse ``iptables-save`` output into tables (comments and counters ignored)."""
    tables: dict[str, Table] = {}
    current: Table | None = None
    for line in text.splitlines():
        if line.startswith("*"):
            current = tables.setdefault(line[1:].strip(), Table())
        elif current is None or line.startswith("#") or line == "COMMIT":
            continue
        elif line.startswith(":"):
            name, policy = line[1:].split()[:2]
            current.chains[name] = policy
        elif line.startswith("-A "):
            args = shlex.split(line)
            current.rules.append((args[1], args[2:]))
    return tables


def plan_undo(before: dict[str, list[str]], after: dict[str, Table]) -> tuple[list[list[str]], list[str]]:
    """``(iptables argument lists, tables to delete)`` that undo kube-proxy's leftovers.

    ``before``: table -> chains that existed before; ``after``: the parsed dump after
    ``kube-proxy --cleanup``. Commands (each after ``iptables``): ``-t T -D CHAIN RULE...`` for
    every rule in or jumping to a new ``KUBE-*`` chain, then ``-t T -X CHAIN`` for each such chain.
    Tables to delete: new tables left with built-in ``ACCEPT`` chains and no other rule."""
    commands: list[list[str]] = []
    drop_tables: list[str] = []
    for name, table in sorted(after.items()):
        old = set(before.get(name, ()))
        new_kube = {c for c in table.chains if c.startswith(KUBE_PREFIX) and c not in old}
        kept_rules = []
        for chain, rule in table.rules:
            target = rule[rule.index("-j") + 1] if "-j" in rule else ""
            if chain in new_kube or target in new_kube:
                if chain not in new_kube:  # a jump from a chain that stays
                    commands.append(["-t", name, "-D", chain, *rule])
            else:
                kept_rules.append((chain, rule))
        for chain in sorted(new_kube):
            commands.append(["-t", name, "-F", chain])
            commands.append(["-t", name, "-X", chain])
        left = {c: p for c, p in table.chains.items() if c not in new_kube}
        empty = not kept_rules and all(c in BUILTIN_CHAINS and p == "ACCEPT" for c, p in left.items())
        if name not in before and empty:
            drop_tables.append(name)
    return commands, drop_tables


def _save(command: str) -> str:
    proc = subprocess.run([command], capture_output=True, text=True, timeout=60)
    return proc.stdout if proc.returncode == 0 else ""


def snapshot() -> dict[str, FamilySnapshot]:
    """Tables and chains per family now (before kube-proxy starts)."""
    result: dict[str, FamilySnapshot] = {}
    for family, (save, _iptables, _nft) in FAMILIES.items():
        tables = parse_save(_save(save))
        result[family] = {"tables": {name: sorted(t.chains) for name, t in tables.items()}}
    return result


def undo(before: dict[str, FamilySnapshot]) -> list[str]:
    """Remove what kube-proxy left beyond ``before`` (run after ``kube-proxy --cleanup``);
    returns what failed. Deleting a table needs ``nft`` (the ``nftables`` package) with the
    ``nf_tables`` backend; with the legacy backend tables are the kernel's and stay."""
    problems: list[str] = []
    for family, (save, iptables, nft) in FAMILIES.items():
        if family not in before:
            continue
        commands, tables = plan_undo(before[family]["tables"], parse_save(_save(save)))
        for args in commands:
            proc = subprocess.run([iptables, "-w", *args], capture_output=True, text=True, timeout=60)
            if proc.returncode != 0:
                problems.append(f"{iptables} {shlex.join(args)}: {proc.stderr.strip()}")
        legacy = "legacy" in subprocess.run([iptables, "--version"], capture_output=True, text=True).stdout
        for table in [] if legacy else tables:
            try:
                proc = subprocess.run(["nft", "delete", "table", nft, table], capture_output=True, text=True)
            except FileNotFoundError:
                problems.append(f"nft delete table {nft} {table}: no nft (install the nftables package)")
                continue
            if proc.returncode != 0:
                problems.append(f"nft delete table {nft} {table}: {proc.stderr.strip()}")
    return problems
