#!/usr/bin/env bash
# generate.sh builds the pinned controller-gen (hack/tools/controller-gen, once per
# machine) and regenerates the NodePool API's deepcopy code and CRD manifest.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$here")
VERSION=v0.23.0
bin=${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-maintenance/controller-gen-$VERSION
if [[ ! -x "$bin" ]]; then
  echo "generate: building controller-gen $VERSION (once per machine)" >&2
  (cd "$here/tools/controller-gen" && go build -o "$bin" sigs.k8s.io/controller-tools/cmd/controller-gen)
fi
cd "$root"
"$bin" object paths=./nodepool/api/... paths=./maintenance/api/...
"$bin" crd paths=./nodepool/api/... paths=./maintenance/api/... output:crd:artifacts:config=config/crd/bases
# One line per paragraph in every description: kubectl explain wraps them itself.
go run ./hack/crdfold config/crd/bases/*.yaml
# The Helm chart's copies of config/ (Helm reads no file outside the chart): its templates
# render them in the release's namespace (charts/kubectl-maintenance/templates/_helpers.tpl).
files=charts/kubectl-maintenance/files
rm -rf "$files"
mkdir -p "$files/crds" "$files/rbac" "$files/admission"
cp config/crd/bases/*.yaml "$files/crds/"
cp config/rbac/rbac.yaml config/rbac/roles.yaml "$files/rbac/"
cp config/admission/policy.yaml "$files/admission/"
