#!/usr/bin/env python3
"""Write deploy/seccomp/ctxprof.json, the collector's seccomp profile.

It is the container runtimes' default profile (containers-common's
seccomp.json, what CRI-O and podman apply as RuntimeDefault) resolved for the
DaemonSet's capabilities on amd64 and arm64, plus the two system calls that
profile reserves for CAP_SYS_ADMIN and the collector needs at start-up with
CAP_BPF and CAP_PERFMON instead: bpf and perf_event_open.  containerd 1.7+
and Docker 23+ allow those two for CAP_BPF / CAP_PERFMON in their own default
profiles already; CRI-O's does not.  Output: OCI runtime-spec format
(defaultAction, architectures, syscalls), which kubelet Localhost profiles use.

Usage: deploy/seccomp/gen.py [/usr/share/containers/seccomp.json]
"""
import json
import sys

CAPS = ["CAP_BPF", "CAP_PERFMON", "CAP_SYSLOG", "CAP_SETPCAP", "CAP_SYS_PTRACE",
        "CAP_DAC_READ_SEARCH", "CAP_CHECKPOINT_RESTORE"]
ARCHES = {"amd64", "x32", "x86", "arm64", "arm"}
SCMP_ARCHES = ["SCMP_ARCH_X86_64", "SCMP_ARCH_AARCH64"]
ADDED = ["bpf", "perf_event_open"]


def wanted(rule):
    inc, exc = rule.get("includes") or {}, rule.get("excludes") or {}
    if inc.get("caps") and not all(c in CAPS for c in inc["caps"]):
        return False
    if exc.get("caps") and any(c in CAPS for c in exc["caps"]):
        return False
    if inc.get("arches") and not ARCHES.intersection(inc["arches"]):
        return False
    if exc.get("arches") and ARCHES.issubset(exc["arches"]):
        return False
    return True


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else "/usr/share/containers/seccomp.json"
    default = json.load(open(src))
    arches = []
    for a in default["archMap"]:
        if a["architecture"] in SCMP_ARCHES:
            arches += [a["architecture"]] + a.get("subArchitectures", [])
    syscalls = []
    for rule in default["syscalls"]:
        if not wanted(rule):
            continue
        names = [n for n in rule.get("names") or [rule["name"]] if n not in ADDED]
        if not names:
            continue
        out = {"names": names, "action": rule["action"]}
        for key in ("errnoRet", "args"):
            if rule.get(key):
                out[key] = rule[key]
        syscalls.append(out)
    syscalls.append({"names": ADDED, "action": "SCMP_ACT_ALLOW"})
    profile = {
        "defaultAction": default["defaultAction"],
        "defaultErrnoRet": default.get("defaultErrnoRet", 1),
        "architectures": arches,
        "syscalls": syscalls,
    }
    json.dump(profile, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
