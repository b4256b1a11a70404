#!/usr/bin/env bash
# build-tools.sh builds the pinned control-plane binaries (etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler, kubectl, kwok) from the Go module proxy
# into a per-machine cache, once. Each tool lives in its own module under hack/tools/
# because its dependency versions differ from ours. Prints the binary directory.
#
# Environment: KM_TOOLS_DIR overrides the cache directory.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
KUBE_VERSION=v1.36.3
ETCD_VERSION=v3.6.6
KWOK_VERSION=v0.8.0
stamp="k8s-${KUBE_VERSION}_etcd-${ETCD_VERSION}_kwok-${KWOK_VERSION}"
dir=${KM_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-maintenance/tools/$stamp}
mkdir -p "$dir"
# Several test packages may start at once on a cold machine: build once, under a lock.
exec 9>"$dir/.lock"
flock 9

log() { echo "build-tools: $*" >&2; }

need=()
for b in etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kwok; do
  [[ -x "$dir/$b" ]] || need+=("$b")
done
if [[ ${#need[@]} -eq 0 ]]; then
  echo "$dir"
  exit 0
fi
log "building ${need[*]} into $dir (once per machine; about 6 minutes cold on 2 cores)"
start=$(date +%s)

kube_ldflags="-s -w -X k8s.io/component-base/version.gitVersion=${KUBE_VERSION} -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=36 -X k8s.io/client-go/pkg/version.gitVersion=${KUBE_VERSION} -X k8s.io/client-go/pkg/version.gitMajor=1 -X k8s.io/client-go/pkg/version.gitMinor=36 -X k8s.io/component-base/version.gitTreeState=clean"
kube_pkgs=()
for b in kube-apiserver kube-controller-manager kube-scheduler kubectl; do
  [[ -x "$dir/$b" ]] || kube_pkgs+=("k8s.io/kubernetes/cmd/$b")
done
if [[ ${#kube_pkgs[@]} -gt 0 ]]; then
  (cd "$here/tools/kube" && CGO_ENABLED=0 go build -trimpath -ldflags "$kube_ldflags" -o "$dir/" "${kube_pkgs[@]}")
fi
if [[ ! -x "$dir/etcd" ]]; then
  (cd "$here/tools/etcd" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$dir/etcd" go.etcd.io/etcd/server/v3)
fi
if [[ ! -x "$dir/kwok" ]]; then
  (cd "$here/tools/kwok" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$dir/kwok" sigs.k8s.io/kwok/cmd/kwok)
fi
log "built in $(( $(date +%s) - start ))s"
echo "$dir"
