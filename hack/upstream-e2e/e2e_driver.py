#!/usr/bin/env python3
"""Runs the upstream Kruise Rollouts e2e binary (ginkgo v1) spec by spec against the cluster in
$KUBECONFIG, and prints one PASS/FAIL line per spec plus `upstream-e2e: N passed, M failed`.

Called by run-rollouts-e2e.sh inside with-cluster.sh (cluster + product manager already up).
One process per spec (focus = that spec's full text), so each result is the process's exit status
and a hung spec can be cut off by a timeout without losing the others. The suite's own files are
read relative to test/e2e (./test_data/...), so the binary runs with that directory as cwd.
"""

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ANSI = re.compile(r"\x1b\[[0-9;]*m")
RE2_SPECIAL = set("\\.+*?()|[]{}^$")


def re2_escape(text: str) -> str:
    return "".join("\\" + c if c in RE2_SPECIAL else c for c in text)


def kubectl(*args, check=False, quiet=True):
    kc = os.environ.get("KUBECTL", "kubectl")
    r = subprocess.run([kc, *args], capture_output=True, text=True)
    if check and r.returncode != 0:
        raise SystemExit(f"kubectl {' '.join(args)} failed: {r.stderr.strip()}")
    if not quiet:
        print((r.stdout + r.stderr).strip())
    return r


def list_specs(binary: str, e2e_dir: str, focus: str, skip: str | None):
    """Spec full texts matching focus, from a ginkgo dry run (in suite order)."""
    cmd = [binary, "-ginkgo.dryRun", "-ginkgo.v", "-ginkgo.noColor", f"-ginkgo.focus={focus}"]
    if skip:
        cmd.append(f"-ginkgo.skip={skip}")
    out = subprocess.run(
        cmd,
        cwd=e2e_dir,
        capture_output=True,
        text=True,
        env={**os.environ, "ACK_GINKGO_DEPRECATIONS": "1.16.5"},
    ).stdout
    specs = []
    lines = ANSI.sub("", out).splitlines()
    # each spec: "<containers> " / "  <It text>" / "  <file>:<line>" (the first one may follow the
    # "Will run N of M specs" preamble without a separator line)
    for i in range(2, len(lines)):
        if (
            re.match(r"^\s+/\S+\.go:\d+$", lines[i])
            and lines[i - 1].startswith("  ")
            and lines[i - 2].strip()
            and not lines[i - 2].startswith(" ")
        ):
            containers, it, loc = lines[i - 2].strip(), lines[i - 1].strip(), lines[i].strip()
            specs.append({"containers": containers, "it": it, "loc": loc, "full": f"{containers} {it}"})
    return specs


def failure_summary(text: str) -> str:
    """First failure message of a ginkgo v1 verbose run, one line."""
    text = ANSI.sub("", text)
    lines = text.splitlines()
    start = None
    for i, ln in enumerate(lines):
        if re.match(r"^(•!? ?)?(Failure|Panic|\[Timeout|\[Panic|\[TIMEDOUT|\[PANICKED)", ln):
            start = i
            break
    last_step = ""
    for ln in lines[: start if start is not None else len(lines)]:
        if ln.startswith("STEP: ") and "[TEST] Clean up" not in ln:
            last_step = ln[6:].strip()
    if start is None:
        return "no ginkgo failure block" + (f"; last STEP: {last_step}" if last_step else "")
    block = []
    for ln in lines[start + 1 :]:
        if ln.startswith("------------------------------"):
            break
        block.append(ln)
    # header (container texts + locations), a blank line, the message, a blank line, the location
    k = next((j + 1 for j, ln in enumerate(block) if not ln.strip()), 0)
    if "Panic" in lines[start]:
        # "Test Panicked" / the panic value; where: the first e2e test frame of the stack
        k = next((j for j, ln in enumerate(block) if "Test Panicked" in ln), k)
        st = next((j for j, ln in enumerate(block) if "Full Stack Trace" in ln), 0)
        frame = next(
            (
                ln.strip()
                for ln in block[st:]
                if re.search(r"/test/e2e/\w+_test\.go:\d+", ln) and "suite_test.go" not in ln
            ),
            "",
        )
        panic_msg = " ".join(ln.strip() for ln in block[k : k + 2])
        return f"{panic_msg} @{frame.rsplit('/', 1)[-1].split(' ')[0]}" + (
            f" [last STEP: {last_step}]" if last_step else ""
        )
    msg, loc = [], ""
    for ln in block[k:]:
        s = ln.strip()
        if re.match(r"^/\S+\.go:\d+$", s):
            loc = s.rsplit("/", 1)[-1]
            break
        if s.startswith("Full Stack Trace"):
            break
        if s and len(msg) < 4:
            msg.append(s)
    one = " ".join(msg)
    one = re.sub(r"\s+", " ", one)
    if len(one) > 400:
        one = one[:400] + "..."
    where = f" @{loc}" if loc else ""
    step = f" [last STEP: {last_step}]" if last_step else ""
    return f"{one}{where}{step}"


def setup_cluster(e2e_dir: Path):
    """What upstream's workflows/deploy do before `ginkgo test/e2e`, minus installing the
    upstream managers (the product's manager stands in for kruise-manager + kruise-rollout)."""
    # kruise-rollout's own namespace: the aliyun-alb specs create kruise-rollout-configuration there.
    kubectl("create", "namespace", "kruise-rollout")
    # e2e-custom / e2e-multi-network-provider apply the Istio CRDs (and, below, the Lua ConfigMap).
    kubectl("apply", "--server-side", "-f", str(e2e_dir / "test_data/customNetworkProvider/istio_crd.yaml"))
    # with-cluster.sh installs Gateway API v1.6.1, whose ValidatingAdmissionPolicy "safe-upgrades"
    # denies the suite's BeforeSuite Create() of its own (v0.x) HTTPRoute CRD before the API server
    # can answer AlreadyExists (upstream CI has no Gateway API installed beforehand). Drop the
    # policy so the Create gets AlreadyExists, which the suite accepts; the v1.6.1 CRD (serving
    # v1beta1, which the suite uses) stays.
    kubectl(
        "delete",
        "validatingadmissionpolicybinding",
        "safe-upgrades.gateway.networking.k8s.io",
        "--ignore-not-found",
    )
    kubectl(
        "delete", "validatingadmissionpolicy", "safe-upgrades.gateway.networking.k8s.io", "--ignore-not-found"
    )
    # the API server drops a deleted policy from its admission cache a few seconds later
    crd = str(e2e_dir / "test_data/crds/httproutes.yaml")
    deadline = time.time() + 60
    while time.time() < deadline:
        r = kubectl("create", "--dry-run=server", "-f", crd)
        if r.returncode == 0 or "AlreadyExists" in r.stderr or "already exists" in r.stderr:
            break
        time.sleep(2)
    else:
        print("warning: the suite's HTTPRoute CRD Create is still refused: " + r.stderr.strip())
    # wait for the product manager's admission webhooks to be registered
    deadline = time.time() + 90
    while time.time() < deadline:
        r = kubectl("get", "validatingwebhookconfigurations,mutatingwebhookconfigurations", "-o", "name")
        if r.returncode == 0 and r.stdout.strip():
            break
        time.sleep(2)
    # and for it to lead (controllers running): a first spec that updates its workload right after
    # creating it otherwise races a manager still starting its controllers on a loaded machine
    deadline = time.time() + 90
    while time.time() < deadline:
        r = kubectl(
            "-n", "kruise-system", "get", "lease", "kruise-manager", "-o", "jsonpath={.spec.holderIdentity}"
        )
        if r.returncode == 0 and r.stdout.strip():
            break
        time.sleep(1)
    else:
        print("warning: the manager holds no lease after 90 s")


def per_spec_setup(spec, e2e_dir: Path):
    lua = e2e_dir / "test_data/customNetworkProvider/lua_script_configmap.yaml"
    if "network provider" in spec["full"]:
        kubectl("apply", "-f", str(lua))
    else:
        # the aliyun-alb specs Create() this ConfigMap themselves (AlreadyExists otherwise)
        kubectl(
            "-n",
            "kruise-rollout",
            "delete",
            "configmap",
            "kruise-rollout-configuration",
            "--ignore-not-found",
        )


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--e2e-dir", required=True)
    ap.add_argument("--focus", required=True)
    ap.add_argument("--skip", default=None)
    ap.add_argument("--out", required=True)
    ap.add_argument("--spec-timeout", type=int, default=int(os.environ.get("SPEC_TIMEOUT", "1500")))
    ap.add_argument("--list-only", action="store_true")
    a = ap.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    e2e_dir = Path(a.e2e_dir)
    specs = list_specs(a.binary, a.e2e_dir, a.focus, a.skip)
    print(f"upstream-e2e: {len(specs)} specs match focus {a.focus!r}", flush=True)
    for s in specs:
        print(f"  - {s['full']}  ({s['loc'].rsplit('/', 1)[-1]})", flush=True)
    if a.list_only or not specs:
        return 0
    setup_cluster(e2e_dir)
    results = []
    summary = out / "summary.tsv"
    summary.write_text("result\tseconds\tspec\tlocation\tfirst_failure\n")
    for n, s in enumerate(specs, 1):
        per_spec_setup(s, e2e_dir)
        log = out / f"spec-{n:02d}.log"
        # ginkgo v1 matches focus against " <containers...> <It>" (the root container's text is
        # empty), so anchor only the end
        cmd = [a.binary, f"-ginkgo.focus={re2_escape(s['full'])}$", "-ginkgo.v", "-ginkgo.noColor", "-test.v"]
        t0 = time.time()
        print(f"[{n}/{len(specs)}] RUN  {s['full']}", flush=True)
        watchers = []
        if os.environ.get("E2E_WATCH", "1") != "0":
            # evidence for failures (the spec's AfterEach deletes its namespace): every change to
            # Rollouts, BatchReleases and the workloads, as watch events, next to the spec's log
            for kind in (
                "rollouts.rollouts.kruise.io",
                "batchreleases.rollouts.kruise.io",
                "deployments.apps",
                "clonesets.apps.kruise.io",
                "statefulsets.apps",
                "statefulsets.apps.kruise.io",
                "daemonsets.apps",
                "daemonsets.apps.kruise.io",
                "pods.",
                "services.",
                "ingresses.networking.k8s.io",
            ):
                wf = open(out / f"spec-{n:02d}.watch-{kind.rstrip('.').replace('.', '-')}.json", "w")  # noqa: SIM115
                kc = os.environ.get("KUBECTL", "kubectl")
                argv = [kc, "get", kind.rstrip("."), "-A", "-w", "--output-watch-events", "-o", "json"]
                watchers.append((subprocess.Popen(argv, stdout=wf, stderr=subprocess.DEVNULL), wf))
        with open(log, "w") as fh:
            fh.write("# " + " ".join(cmd) + "\n")
            fh.flush()
            try:
                p = subprocess.run(
                    cmd,
                    cwd=a.e2e_dir,
                    stdout=fh,
                    stderr=subprocess.STDOUT,
                    timeout=a.spec_timeout,
                    env={**os.environ, "ACK_GINKGO_DEPRECATIONS": "1.16.5"},
                )
                rc = p.returncode
            except subprocess.TimeoutExpired:
                rc = "timeout"
        for proc, wf in watchers:
            proc.terminate()
            proc.wait()
            wf.close()
        secs = int(time.time() - t0)
        text = log.read_text(errors="replace")
        ran = re.search(r"Ran (\d+) of \d+ Specs", text)
        if rc == 0 and ran and ran.group(1) == "1":
            res, msg = "PASS", ""
        elif rc == 0:
            res, msg = "FAIL", "spec did not run (focus matched nothing?)"
        else:
            res = "FAIL"
            msg = failure_summary(text)
            if rc == "timeout":
                msg = f"killed after {a.spec_timeout}s (driver timeout); " + msg
        results.append((res, s, msg, secs))
        line = f"{res} [{secs}s] {s['full']}" + (f" :: {msg}" if msg else "")
        print(line, flush=True)
        with open(summary, "a") as fh:
            fh.write(f"{res}\t{secs}\t{s['full']}\t{s['loc'].rsplit('/', 1)[-1]}\t{msg}\n")
    print("\n=== upstream Kruise Rollouts e2e summary ===")
    for res, s, msg, _secs in results:
        print(f"{res}  {s['full']}" + (f"\n      {msg}" if msg else ""))
    npass = sum(1 for r in results if r[0] == "PASS")
    nfail = len(results) - npass
    print(f"upstream-e2e: {npass} passed, {nfail} failed")
    print(f"(logs: {out})")
    return 0 if nfail == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
