#!/usr/bin/env bash
# lint.sh builds the pinned golangci-lint (hack/tools/golangci-lint, from the Go module
# proxy, once per machine into the tool cache) and runs it with .golangci.yml.
# Arguments are passed to `golangci-lint run` (default: ./...).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$here")
VERSION=v2.15.0
dir=${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-maintenance
bin=$dir/golangci-lint-$VERSION
mkdir -p "$dir"
if [[ ! -x "$bin" ]]; then
  exec 9>"$dir/.golangci-lint.lock"
  flock 9
  if [[ ! -x "$bin" ]]; then
    echo "lint: building golangci-lint $VERSION (once per machine; a few minutes cold)" >&2
    (cd "$here/tools/golangci-lint" && CGO_ENABLED=0 go build -trimpath -o "$bin.tmp" github.com/golangci/golangci-lint/v2/cmd/golangci-lint)
    mv "$bin.tmp" "$bin"
  fi
fi
if [[ $# -gt 0 ]]; then
  cd "$root" && exec "$bin" run "$@"
fi
# The root module, then the image builder's, the chart's and filedeps' own modules (same .golangci.yml).
status=0
(cd "$root" && "$bin" run ./...) || status=1
(cd "$root/hack/image" && "$bin" run --config "$root/.golangci.yml" ./...) || status=1
(cd "$root/hack/chart" && "$bin" run --config "$root/.golangci.yml" ./...) || status=1
(cd "$root/hack/filedeps" && "$bin" run --config "$root/.golangci.yml" ./...) || status=1
exit $status
