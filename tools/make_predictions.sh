#!/usr/bin/env bash
# Regenerates docs/predictions.md (the pre-registered predictions) with the built `overlap`.
# Usage: tools/make_predictions.sh [BUILD_DIR]   (default: build)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"
cmake --build "$build" --target overlap
"$build/app/overlap" predictions --out "$root/docs/predictions.md"
echo "wrote $root/docs/predictions.md"
