#!/usr/bin/env bash
# verify-generated.sh regenerates the NodePool and Maintenance deepcopy code and CRDs (hack/generate.sh) in
# a copy of the working tree and fails, showing the difference, when the committed files
# differ. The working tree is not touched.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$root"
# Tracked and untracked-but-not-ignored files, as they are now (deleted ones are skipped).
git ls-files -z --cached --others --exclude-standard | tar --null --ignore-failed-read -T - -cf - 2>/dev/null | tar -xf - -C "$tmp"
(cd "$tmp" && ./hack/generate.sh)
status=0
for d in nodepool/api maintenance/api config/crd charts/kubectl-maintenance/files; do
  if ! diff -ru "$d" "$tmp/$d"; then status=1; fi
done
if [[ $status -ne 0 ]]; then
  echo "verify-generated: the committed files differ from what controller-gen makes: run make generate and commit" >&2
  exit 1
fi
echo "verify-generated: deepcopy code and CRD match their sources"
