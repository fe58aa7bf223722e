#!/usr/bin/env bash
# Builds the release binaries into DIR:
#
#   scripts/release.sh DIR                 # version from `git describe`
#   VERSION=v1.2.3 scripts/release.sh DIR
#
# One static binary (CGO_ENABLED=0) per target, linux, darwin and windows
# on amd64 and arm64, named codemode-mcp-VERSION-OS-ARCH (.exe on
# windows), with the version stamped in (`codemode-mcp version` prints it),
# and DIR/SHA256SUMS. Reproducible: the same commit and Go version give
# the same bytes on any machine and in any directory (-trimpath, an empty
# build id, no build time; the VCS revision and commit time Go stamps in
# belong to the commit, and the OpenAPI connector keys its caches by them).
# Build from a git clone: where Go cannot stamp the revision (a git
# worktree, a tarball) the script stops. Publishing is left to whoever runs
# it; CI builds twice, from two clones, and compares (scripts/test.sh).
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: scripts/release.sh DIR" >&2; exit 2; }
out=$1
cd "$(dirname "$0")/.."
mkdir -p "$out"
out=$(cd "$out" && pwd)

version=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
case "$version" in
  *[!A-Za-z0-9._+-]*) echo "release.sh: version $version: only letters, digits and . _ + - are allowed" >&2; exit 2 ;;
esac

targets="linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64"
names=()
for target in $targets; do
  goos=${target%/*} goarch=${target#*/}
  name="codemode-mcp-$version-$goos-$goarch"
  [ "$goos" = windows ] && name="$name.exe"
  echo "== $name"
  GOOS=$goos GOARCH=$goarch CGO_ENABLED=0 GOFLAGS= go build -trimpath -buildvcs=true \
    -ldflags "-s -w -buildid= -X github.com/codemode-mcp/codemode-mcp/internal/cli.Version=$version" \
    -o "$out/$name" ./cmd/codemode-mcp
  if ! go version -m "$out/$name" | grep -q 'vcs.revision='; then
    echo "release.sh: Go did not stamp the VCS revision into $name (not a git clone? a worktree?); build from a clone" >&2
    exit 1
  fi
  names+=("$name")
done

(
  cd "$out"
  if command -v sha256sum >/dev/null; then
    sha256sum "${names[@]}"
  else
    shasum -a 256 "${names[@]}"
  fi
) > "$out/SHA256SUMS"
cat "$out/SHA256SUMS"
