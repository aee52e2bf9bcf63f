#!/usr/bin/env bash
# The main job on built-in defaults, no GPU needed: installs what is missing, builds the
# `overlap` tool, then predicts every gla variant on an H100 and checks every workload's CPU
# reference against its float64 oracle. Extra arguments go to `overlap run`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/tools/build.sh" overlap
exec "${OVERLAP_BUILD_DIR:-$root/build}/app/overlap" run "$@"
