#!/usr/bin/env bash
# Checks that the release profile packages every published module without signing keys (gpg skipped):
# a sources jar and a javadoc jar each. Published modules are those dlock-bom lists; every module of the
# root pom must be in the BOM or in UNPUBLISHED below, so a new module cannot be forgotten in the BOM.
# Also checks the metadata Central requires (license, scm, developers) in every published pom.
# Run by scripts/test.sh after the tests; alone: scripts/check-release.sh (about a minute).
set -euo pipefail
cd "$(dirname "$0")/.."

UNPUBLISHED="dlock-bom dlock-bench dlock-cli dlock-chaos dlock-example dlock-test-support"   # the BOM itself (a pom), applications, harnesses, test launchers

die() { printf '[check-release] ERROR: %s\n' "$*" >&2; exit 1; }

published=$(sed -n 's:.*<artifactId>\(dlock-[a-z0-9-]*\)</artifactId>.*:\1:p' dlock-bom/pom.xml | grep -vx dlock-parent | grep -vx dlock-bom | sort -u)
for module in $(sed -n 's:.*<module>\([^<]*\)</module>.*:\1:p' pom.xml); do
  printf '%s\n' $published $UNPUBLISHED | grep -qx "$module" \
    || die "module $module is neither listed in dlock-bom/pom.xml nor in UNPUBLISHED of $0"
done
for module in $published; do
  [ -d "$module" ] || die "dlock-bom lists $module, which is not a module"
done

# What Maven Central requires of every published pom (effective, so inherited sections count): name,
# description, url, an Apache-2.0 license, developers, scm. And the LICENSE file beside them.
grep -q 'Apache License' LICENSE 2>/dev/null && grep -q 'Version 2.0, January 2004' LICENSE \
  || die "LICENSE is missing or is not the Apache License 2.0"
effective=$(mktemp)
trap 'rm -f "$effective"' EXIT
mvn -B -q help:effective-pom -Doutput="$effective" -pl "dlock-bom,$(printf '%s\n' $published | paste -sd, -)" >/dev/null \
  || die "mvn help:effective-pom failed"
python3 - "$effective" $published dlock-bom <<'PY' || die "published poms lack what Maven Central requires (above)"
import sys, xml.etree.ElementTree as ET
ns = {"m": "http://maven.apache.org/POM/4.0.0"}
root = ET.parse(sys.argv[1]).getroot()
projects = root.findall("m:project", ns) if root.tag.endswith("projects") else [root]
wanted, found, bad = set(sys.argv[2:]), set(), []
for project in projects:
    artifact = project.findtext("m:artifactId", namespaces=ns)
    if artifact not in wanted:
        continue
    found.add(artifact)
    def text(path):
        return (project.findtext(path, namespaces=ns) or "").strip()
    missing = [path for path in ("m:name", "m:description", "m:url", "m:scm/m:url", "m:scm/m:connection",
                                 "m:developers/m:developer/m:name") if not text(path)]
    if "Apache License, Version 2.0" not in [l.findtext("m:name", namespaces=ns) for l in project.findall("m:licenses/m:license", ns)]:
        missing.append("licenses/license: Apache License, Version 2.0")
    if missing:
        bad.append(f"{artifact}: missing {', '.join(m.replace('m:', '') for m in missing)}")
bad += [f"{a}: not in the effective poms" for a in sorted(wanted - found)]
print("\n".join(bad), file=sys.stderr)
sys.exit(1 if bad else 0)
PY

# -am: the published modules' tests depend on the unpublished dlock-test-support, which Maven resolves
# (test scope) even when the tests are skipped.
mvn -B -q -Prelease -Dgpg.skip -DskipTests -Dspotless.check.skip package \
  -pl "dlock-bom,$(printf '%s\n' $published | paste -sd, -)" -am
for module in $published; do
  for kind in sources javadoc; do
    ls "$module"/target/"$module"-*-"$kind".jar >/dev/null 2>&1 || die "$module has no $kind jar"
  done
done
printf '[check-release] release packaging OK for: %s\n' "$(printf '%s ' $published)" >&2
