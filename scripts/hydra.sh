#!/usr/bin/env bash
# Builds Ory Hydra, a real OAuth 2.1 / OpenID Connect authorization server
# that nobody here wrote, for the end-to-end tests of remote MCP servers
# behind a sign-in, and prints the binary's path on stdout (progress goes to
# stderr):
#
#   HYDRA_BIN=$(scripts/hydra.sh)
#
# The binary is built once into a cache directory outside the repository,
# ${XDG_CACHE_HOME:-$HOME/.cache}/codemode-mcp/hydra-v2.3.0/hydra (or
# $HYDRA_CACHE_DIR/hydra), and reused while `hydra version` runs; delete
# the directory to rebuild. A cold build takes a few minutes (it compiles
# Hydra's whole dependency tree, cgo sqlite included); CI caches the
# directory.
#
# Why not `go install github.com/ory/hydra/v2@v2.3.0`: Hydra's go.mod has
# replace directives, which go install refuses. So the module's source is
# fetched through the module proxy (`go mod download`), copied out of the
# read-only module cache, and built in place after deleting the one
# replace that points into the repository
# (github.com/ory/hydra-client-go/v2 => ./internal/httpclient: module zips
# leave nested modules out, so that directory is not there; the published
# hydra-client-go module stands in for it). -mod=mod lets go fill in the
# go.sum lines that change needs. The sqlite build tag and cgo give Hydra
# its in-memory database (DSN=memory), so no database server is needed.
#
# Needs Go and a C compiler (gcc). Hydra runs as
#   DSN=memory SECRETS_SYSTEM=<32+ characters> hydra serve all --dev
# (e2e/lib/hydra.mjs starts it on loopback with random ports).
set -euo pipefail

version=v2.3.0
module=github.com/ory/hydra/v2
dir=${HYDRA_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/codemode-mcp/hydra-$version}
binary=$dir/hydra

if [ -x "$binary" ] && "$binary" version >/dev/null 2>&1; then
  echo "$binary"
  exit 0
fi

command -v go >/dev/null || { echo "scripts/hydra.sh: go is required to build Ory Hydra" >&2; exit 1; }
command -v "${CC:-gcc}" >/dev/null || { echo "scripts/hydra.sh: a C compiler (${CC:-gcc}) is required to build Ory Hydra with sqlite" >&2; exit 1; }

echo "== building Ory Hydra $version into $dir (once; a few minutes cold)" >&2
start=$(date +%s)
work=$(mktemp -d)
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT

src=$(go mod download -json "$module@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
[ -n "$src" ] && [ -f "$src/go.mod" ] || { echo "scripts/hydra.sh: go mod download $module@$version named no source directory" >&2; exit 1; }

cp -R "$src" "$work/src"
chmod -R u+w "$work/src"
sed -i.orig '\#^replace github.com/ory/hydra-client-go/v2 => ./internal/httpclient$#d' "$work/src/go.mod"
if cmp -s "$work/src/go.mod" "$work/src/go.mod.orig"; then
  echo "scripts/hydra.sh: $module@$version's go.mod has no replace of hydra-client-go to drop; the build recipe needs a look" >&2
  exit 1
fi
rm "$work/src/go.mod.orig"

# GOFLAGS is set whole: a -mod from the environment would fight -mod=mod.
(cd "$work/src" && GOFLAGS=-mod=mod CGO_ENABLED=1 GOTOOLCHAIN=local go build -tags sqlite -trimpath \
  -ldflags "-X $module/driver/config.Version=$version" -o "$work/hydra" .)
"$work/hydra" version >/dev/null

mkdir -p "$dir"
# Renamed into place, so a concurrent run never sees half a binary.
mv -f "$work/hydra" "$binary.tmp.$$"
mv -f "$binary.tmp.$$" "$binary"
echo "== built Ory Hydra $version in $(( $(date +%s) - start ))s" >&2
echo "$binary"
