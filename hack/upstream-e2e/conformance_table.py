#!/usr/bin/env python3
"""The conformance table of docs/conformance.md, from a spec list and run results.

Usage: conformance_table.py [--causes FILE] SPECS_LIST RUN_DIR...
  SPECS_LIST: the output of `LIST_ONLY=1 run-rollouts-e2e.sh .` (lines `  - <spec>  (<file:line>)`)
  RUN_DIR:    run directories holding summary.tsv (a spec run in several: the last one wins)
  --causes:   lines `<file:line>\t<cause>`: the cause column of a failed or not run spec
Prints a markdown table: group, spec (file:line), whether upstream's CI runs it, result, seconds,
first failure. The group is the
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

# --focus of upstream's .github/workflows/e2e-*.yaml at the pinned revision (a spec none matches
# is not run by upstream's CI)
CI_FOCUS = [
    "Advanced Deployment",
    "Bluegreen Release - Cloneset - Ingress",
    "Bluegreen Release - Deployment - Ingress",
    "Canary rollout with Gateway API",
    "Canary rollout with Ingress using advance deployment",
    "Canary rollout with custom network provider",
    "Canary rollout with multiple network providers",
    "CloneSet canary rollout with Ingress",
    "DaemonSet canary rollout",
    "Deployment canary rollout with Ingress",
    "Native DaemonSet batch rollout",
    "Others",
    "StatefulSet canary rollout with Ingress",
    "Step Jump",
    "bluegreen disable hpa test case - autoscaling/v2 for v1.23",
    "bluegreen disable hpa test case - autoscaling/v2 for v1.26",
]


def group_of(full: str) -> str:
    for name, rx in GROUPS:
        if re.search(rx, full):
            return name
    return "-"


def main() -> int:
    args = sys.argv[1:]
    causes = {}
    if args[:1] == ["--causes"]:
        for ln in Path(args[1]).read_text().splitlines():
            if "\t" in ln and not ln.startswith("#"):
                loc, cause = ln.split("\t", 1)
                causes[loc.strip()] = cause.strip()
        args = args[2:]
    specs = []
    for ln in Path(args[0]).read_text().splitlines():
        m = re.match(r"^  - (.*)  \((\S+:\d+)\)$", ln)
        if m:
            specs.append((m.group(1), m.group(2)))
    results = {}
    for d in args[1:]:
        p = Path(d) / "summary.tsv"
        if p.exists():
            for ln in p.read_text().splitlines()[1:]:
                f = ln.split("\t")
                if len(f) >= 5:
                    results[f[2]] = (f[0], f[1], f[4])
    print("| # | group | spec | location | upstream CI | result | secs | first failure | cause |")
    print("|---|---|---|---|---|---|---|---|---|")
    n_pass = n_fail = n_not = 0
    for i, (full, loc) in enumerate(specs, 1):
        res, secs, msg = results.get(full, ("not run", "", ""))
        n_pass += res == "PASS"
        n_fail += res == "FAIL"
        n_not += res == "not run"
        name = full.replace("[rollouts] ", "").replace("[kruise.io] ", "")
        msg = msg.replace("|", "/").replace("`", "'")
        ci = "yes" if any(re.search(f, full) for f in CI_FOCUS) else "no"
        cause = causes.get(loc, "") if res != "PASS" else ""
        row = [str(i), group_of(full), name, loc, ci, res, secs, msg, cause]
        print("| " + " | ".join(row) + " |")
    print(f"\n{len(specs)} specs: {n_pass} passed, {n_fail} failed, {n_not} not run")
    return 0


if __name__ == "__main__":
    sys.exit(main())
