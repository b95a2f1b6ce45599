#!/usr/bin/env bash
# Where the test time went, from the surefire reports of the last run (scripts/test.sh or any mvn test):
# seconds per module (the sum of its test classes) and the slowest test classes and cases.
#   scripts/test-times.sh [N]   (N: how many classes and cases to list, default 20)
# scripts/test.sh also prints each job's wall time as it ends; target/test-lanes/ keeps the jobs' logs.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 - "${1:-20}" dlock-*/target/surefire-reports dlock-*/target/surefire-reports-contract* \
  dlock-*/target/surefire-reports-model-check <<'PY'
import glob, os, sys, xml.etree.ElementTree as ET
top, dirs = int(sys.argv[1]), sys.argv[2:]
modules, classes, cases = {}, [], []
for d in dirs:
    module = d.split("/")[0]
    for f in glob.glob(os.path.join(d, "TEST-*.xml")):
        suite = ET.parse(f).getroot()
        name = suite.get("name")
        if "$" in name:
            continue  # a contract section: its cases are in the report of the store's class too
        t = float(suite.get("time") or 0)
        modules[module] = modules.get(module, 0) + t
        classes.append((t, module, name.rsplit(".", 1)[-1]))
        for case in suite.iter("testcase"):
            section = case.get("classname").rsplit(".", 1)[-1].split("$")[-1]
            cases.append((float(case.get("time") or 0), name.rsplit(".", 1)[-1], section + "." + case.get("name")))
if not modules:
    sys.exit("no surefire reports under dlock-*/target/surefire-reports: run the tests first")
print(f"{'module':<28}{'s':>8}")
for m, t in sorted(modules.items(), key=lambda x: -x[1]):
    print(f"{m:<28}{t:8.0f}")
print(f"{'all':<28}{sum(modules.values()):8.0f}\n")
print(f"slowest {top} test classes")
for t, m, c in sorted(classes, reverse=True)[:top]:
    print(f"{t:8.1f}  {m:<26}{c}")
print(f"\nslowest {top} cases")
for t, c, n in sorted(cases, reverse=True)[:top]:
    print(f"{t:8.1f}  {c:<30}{n}")
PY
