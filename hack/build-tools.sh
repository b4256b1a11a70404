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
# kwok is patched (see build_kwok): the stamp names the patch so a cache built before it is
# not reused.
KWOK_PATCH=uid1
stamp="k8s-${KUBE_VERSION}_etcd-${ETCD_VERSION}_kwok-${KWOK_VERSION}-${KWOK_PATCH}"
dir=${KM_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-maintenance/tools/$stamp}
mkdir -p "$dir"
# Several test packages may start at once on a cold machine: build once, under a lock.
exec 9>"$dir/.lock"
flock 9

log() { echo "build-tools: $*" >&2; }

# build_kwok builds kwok with one change: kwok's simulated kubelet deletes a terminating
# pod by name alone, and when that DELETE times out under load it retries it later, by name
# again. By then a StatefulSet pod may be back under the same name on another node, and
# kwok deletes the new pod: no eviction, no budget asked (476 such deletions in one
# 1,000-node bench run). A real kubelet deletes with the pod's UID as a precondition; so
# does the patched kwok. The module is copied out of the module cache, patched, and built
# through a replace directive in a temporary go.mod (-modfile); hack/tools/kwok is untouched.
build_kwok() {
  local mod tmp src
  # `go list -m` does not download: on a machine whose module cache never held kwok it
  # prints nothing. `go mod download -json` fetches the module (verified against go.sum)
  # and says where it is.
  mod=$(cd "$here/tools/kwok" && go mod download -json sigs.k8s.io/kwok | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
  if [[ -z "$mod" || ! -d "$mod" ]]; then
    log "kwok ${KWOK_VERSION}: go mod download gave no module directory (run: cd hack/tools/kwok && go mod download -json sigs.k8s.io/kwok)"
    return 1
  fi
  tmp=$(mktemp -d)
  cp -R "$mod" "$tmp/kwok"
  chmod -R u+w "$tmp/kwok"
  src="$tmp/kwok/pkg/kwok/controllers/pod_controller.go"
  sed -i 's|Pods(pod.Namespace).Delete(ctx, pod.Name, deleteOpt)|Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: deleteOpt.GracePeriodSeconds, Preconditions: metav1.NewUIDPreconditions(string(pod.UID))})|' "$src"
  if ! grep -q 'NewUIDPreconditions(string(pod.UID))' "$src"; then
    log "kwok ${KWOK_VERSION}: the pod DELETE to patch was not found in $mod"
    rm -rf "$tmp"
    return 1
  fi
  cp "$here/tools/kwok/go.mod" "$tmp/go.mod"
  cp "$here/tools/kwok/go.sum" "$tmp/go.sum"
  echo "replace sigs.k8s.io/kwok => $tmp/kwok" >>"$tmp/go.mod"
  (cd "$here/tools/kwok" && CGO_ENABLED=0 go build -modfile "$tmp/go.mod" -trimpath -ldflags "-s -w" -o "$dir/kwok" sigs.k8s.io/kwok/cmd/kwok) || { chmod -R u+w "$tmp"; rm -rf "$tmp"; return 1; }
  chmod -R u+w "$tmp"
  rm -rf "$tmp"
}

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
  (cd "$here/tools/kube" && CGO_ENABLED=0 go build -trimpath -ldflags "$kube_ldflags" -o "$dir/" "${kube_pkgs[@]}") ||
    { log "building ${kube_pkgs[*]} ${KUBE_VERSION} in hack/tools/kube failed (the go error is above)"; exit 1; }
fi
if [[ ! -x "$dir/etcd" ]]; then
  (cd "$here/tools/etcd" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$dir/etcd" go.etcd.io/etcd/server/v3) ||
    { log "building etcd ${ETCD_VERSION} in hack/tools/etcd failed (the go error is above)"; exit 1; }
fi
if [[ ! -x "$dir/kwok" ]]; then
  build_kwok || { log "building kwok ${KWOK_VERSION} failed (the reason is above)"; exit 1; }
fi
log "built in $(( $(date +%s) - start ))s"
echo "$dir"
