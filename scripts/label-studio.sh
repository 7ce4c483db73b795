#!/usr/bin/env bash
# Start, stop or describe the embedded Label Studio: scripts/label-studio.sh start|stop|status|install
# Uses $GOLDLOOP_LABEL_STUDIO when set, else installs label-studio into .goldloop/studio/venv.
set -euo pipefail
cd "$(dirname "$0")/.."
exec .venv/bin/goldloop studio "${1:-start}" "${@:2}"
