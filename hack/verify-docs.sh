#!/usr/bin/env bash
# verify-docs.sh regenerates the reference (hack/gendocs: command pages, exit codes, NDJSON
# events) into a temporary directory and fails, showing the difference, when the committed
# docs/reference differs. The working tree is not touched.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$root"
go run ./hack/gendocs -root . -out "$tmp/reference"
if ! diff -ru docs/reference "$tmp/reference"; then
  echo "verify-docs: docs/reference is stale: run make docs and commit" >&2
  exit 1
fi
echo "verify-docs: docs/reference matches the code"
