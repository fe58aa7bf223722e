#!/usr/bin/env bash
# Builds Jaeger v2 (a trace store and UI built on the OpenTelemetry
# collector, which nobody here wrote) for the end-to-end test of the
# OpenTelemetry traces, and prints the binary's path on stdout (progress
# goes to stderr):
#
#   JAEGER_BIN=$(scripts/jaeger.sh)
#
# The binary is built once into a cache directory outside the repository,
# ${XDG_CACHE_HOME:-$HOME/.cache}/codemode-mcp/jaeger-v1.76.0/jaeger (or
# $JAEGER_CACHE_DIR/jaeger), and reused while `jaeger version` runs;
# delete the directory to rebuild. A cold build takes several minutes (it
# compiles the collector's dependency tree); CI caches the directory.
#
# Why not `go install github.com/jaegertracing/jaeger/cmd/jaeger@v1.76.0`:
# Jaeger's go.mod has replace directives, which go install refuses. A
# throwaway module that requires Jaeger as a tool (`go get -tool`) resolves
# its dependencies without those replaces, and `go build` of the package
# from inside that module works.
#
# Needs Go only (no cgo). Jaeger runs as `jaeger --config <file.yaml>` with
# the otlp receiver, memory storage and jaeger_query each bound to a
# loopback port (e2e/lib/jaeger.mjs and internal/telemetry's end-to-end
# test write that file).
set -euo pipefail

version=v1.76.0
pkg=github.com/jaegertracing/jaeger/cmd/jaeger
dir=${JAEGER_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/codemode-mcp/jaeger-$version}
binary=$dir/jaeger

if [ -x "$binary" ] && "$binary" version >/dev/null 2>&1; then
  echo "$binary"
  exit 0
fi

command -v go >/dev/null || { echo "scripts/jaeger.sh: go is required to build Jaeger" >&2; exit 1; }

echo "== building Jaeger $version into $dir (once; several minutes cold)" >&2
start=$(date +%s)
work=$(mktemp -d)
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT

# GOFLAGS is set whole: a -mod from the environment would fight the tool
# module's own go.sum.
(cd "$work" && export GOFLAGS= GOTOOLCHAIN=local CGO_ENABLED=0 &&
  go mod init codemode-mcp-jaeger-build >/dev/null 2>&1 &&
  go get -tool "$pkg@$version" >&2 &&
  go build -trimpath -o "$work/jaeger" "$pkg")
"$work/jaeger" version >/dev/null

mkdir -p "$dir"
# Renamed into place, so a concurrent run never sees half a binary.
mv -f "$work/jaeger" "$binary.tmp.$$"
mv -f "$binary.tmp.$$" "$binary"
echo "== built Jaeger $version in $(( $(date +%s) - start ))s" >&2
echo "$binary"
