#!/usr/bin/env python3
"""The conformance table of docs/conformance.md, from a spec list and run results.

Usage: conformance_table.py SPECS_LIST RUN_DIR...
  SPECS_LIST: the output of `LIST_ONLY=1 run-rollouts-e2e.sh .` (lines `  - <spec>  (<file:line>)`)
  RUN_DIR:    run directories holding summary.tsv (a spec run in several: the last one wins)
Prints a markdown table: group, spec (file:line), result, seconds, first failure. The group is the
first of GROUPS (the runs' focus regexes, as in docs/conformance.md) the spec matches.
"""

import re
import sys
from pathlib import Path

GROUPS = [
    ("A", r"CloneSet canary rollout with Ingress"),
    ("B", r"Deployment canary rollout with Ingress"),
    (
        "C",
        r"StatefulSet canary rollout with Ingress|DaemonSet canary rollout|"
        r"Native DaemonSet batch rollout|Canary rollout with Gateway API",
    ),
    ("D", r"Step Jump|\[kruise.io\] Others|\[kruise.io\] Test failure threshold|Disabled rollout tests"),
    ("E", r"Bluegreen Release"),
    ("F", r"using advance deployment|Advanced Deployment Checker"),
    ("G", r"custom network provider|multiple network providers"),
]


def group_of(full: str) -> str:
    for name, rx in GROUPS:
        if re.search(rx, full):
            return name
    return "-"


def main() -> int:
    specs = []
    for ln in Path(sys.argv[1]).read_text().splitlines():
        m = re.match(r"^  - (.*)  \((\S+:\d+)\)$", ln)
        if m:
            specs.append((m.group(1), m.group(2)))
    results = {}
    for d in sys.argv[2:]:
        p = Path(d) / "summary.tsv"
        if p.exists():
            for ln in p.read_text().splitlines()[1:]:
                f = ln.split("\t")
                if len(f) >= 5:
                    results[f[2]] = (f[0], f[1], f[4])
    print("| # | group | spec | location | result | secs | first failure |")
    print("|---|---|---|---|---|---|---|")
    n_pass = n_fail = n_not = 0
    for i, (full, loc) in enumerate(specs, 1):
        res, secs, msg = results.get(full, ("not run", "", ""))
        n_pass += res == "PASS"
        n_fail += res == "FAIL"
        n_not += res == "not run"
        name = full.replace("[rollouts] ", "").replace("[kruise.io] ", "")
        msg = msg.replace("|", "/").replace("`", "'")
        print(f"| {i} | {group_of(full)} | {name} | {loc} | {res} | {secs} | {msg} |")
    print(f"\n{len(specs)} specs: {n_pass} passed, {n_fail} failed, {n_not} not run")
    return 0


if __name__ == "__main__":
    sys.exit(main())
