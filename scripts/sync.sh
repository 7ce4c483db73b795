#!/usr/bin/env bash
# Push what is missing, then pull what was verified: one command for cron.
#   scripts/sync.sh --sample DIR --project NAME --out gold.verified.json [--candidates A.json] [--other B.json]
# Label Studio: $LABEL_STUDIO_URL + $LABEL_STUDIO_API_KEY, else the embedded server (`goldloop studio start`).
set -euo pipefail
cd "$(dirname "$0")/.."
exec .venv/bin/goldloop sync "$@"
