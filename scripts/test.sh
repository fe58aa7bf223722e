#!/usr/bin/env bash
# The whole test suite, exactly as CI runs it:
#   formatting, go vet (and a build and vet for every other release target:
#   linux, darwin and windows on amd64 and arm64), the release binaries
#   built twice and compared, unit and integration
#   tests with the race detector,
#   then the end-to-end suite (a real MCP client drives the built binary in
#   front of real npm MCP servers).
# Needs Go 1.26 and Node 20+ with npm; installs Go modules and the pinned npm
# packages itself. The approval console's browser tests need Debian's
# chromium at /usr/bin/chromium, and the PostgreSQL store's tests Debian's
# postgresql (initdb, pg_ctl) (.ci/run installs both; without them those
# tests are skipped here, and fail when CI=true). The OAuth sign-in tests
# need Ory Hydra, built once by scripts/hydra.sh (Go and gcc; a few
# minutes cold, then cached outside the repository) and passed to the
# suite as HYDRA_BIN; the traces test needs Jaeger, built likewise by
# scripts/jaeger.sh (Go only) and passed as JAEGER_BIN. A failed build
# stops the run.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './e2e/node_modules/*'))
if [ -n "$unformatted" ]; then
  echo "gofmt needed on:"; echo "$unformatted"; exit 1
fi

echo "== go vet"
go mod download
go vet ./...

# The release targets other than this machine's: built and vetted (tests
# included) so that their code cannot rot, though it is not run here.
for target in linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64; do
  [ "$target" = "$(go env GOOS)/$(go env GOARCH)" ] && continue
  echo "== go build and go vet for $target"
  GOOS=${target%/*} GOARCH=${target#*/} CGO_ENABLED=0 go build -trimpath ./...
  GOOS=${target%/*} GOARCH=${target#*/} CGO_ENABLED=0 go vet -trimpath ./...
done

echo "== release binaries (scripts/release.sh), built twice from two clones of HEAD"
# The same commit must give the same bytes whatever the directory; local
# changes are not in the clones.
git rev-parse --git-dir >/dev/null 2>&1 || { echo "scripts/test.sh: not a git checkout; the release check needs one"; exit 1; }
rel=$(mktemp -d)
trap 'rm -rf "$rel"' EXIT
git clone -q . "$rel/a" && git clone -q . "$rel/b"
"$rel/a/scripts/release.sh" "$rel/out-a" > /dev/null
"$rel/b/scripts/release.sh" "$rel/out-b" > /dev/null
[ "$(wc -l < "$rel/out-a/SHA256SUMS")" -eq 6 ] || { echo "release.sh made $(wc -l < "$rel/out-a/SHA256SUMS") binaries, want 6"; exit 1; }
cmp "$rel/out-a/SHA256SUMS" "$rel/out-b/SHA256SUMS" || { echo "two release builds of the same commit differ"; diff "$rel/out-a/SHA256SUMS" "$rel/out-b/SHA256SUMS"; exit 1; }
"$rel/out-a/codemode-mcp-$(cd "$rel/a" && git describe --tags --always)-$(go env GOOS)-$(go env GOARCH)" version | sed -n 1p   # (head would end the pipe early: SIGPIPE)
rm -rf "$rel"

echo "== go test -race"
# The end-to-end suite's npm packages first: the TypeScript checker's Go
# tests (internal/tscheck) use its tsc.
command -v npm >/dev/null || { echo "npm is required (the TypeScript checker's tests and the end-to-end suite)"; exit 1; }
(cd e2e && npm ci --no-audit --no-fund --loglevel=error)
go test -race -count=1 -timeout 15m ./...

echo "== end-to-end"
command -v node >/dev/null || { echo "node is required for the end-to-end suite"; exit 1; }
command -v npm >/dev/null || { echo "npm is required for the end-to-end suite"; exit 1; }
mkdir -p bin
go build -o bin/codemode-mcp ./cmd/codemode-mcp
go build -o bin/mcpfixture ./internal/fixture/mcpserver
(cd e2e/conformance && npm ci --no-audit --no-fund --loglevel=error)   # the MCP conformance suite and Node 22
HYDRA_BIN=$(scripts/hydra.sh)   # the authorization server of the OAuth tests (e2e/lib/hydra.mjs)
JAEGER_BIN=$(scripts/jaeger.sh) # the trace store of the traces test (e2e/lib/jaeger.mjs)
(cd e2e && CODEMODE_BIN="$PWD/../bin/codemode-mcp" HYDRA_BIN="$HYDRA_BIN" JAEGER_BIN="$JAEGER_BIN" npm test)
