#!/usr/bin/env bash
# Install mcpreel for the Action: this action's own checkout (default), a pip spec, or nothing ("skip").
# Env: MCPREEL_INSTALL (action | skip | <pip spec>), GITHUB_ACTION_PATH (set by GitHub), MCPREEL_PYTHON.
set -euo pipefail
python="${MCPREEL_PYTHON:-python}"
what="${MCPREEL_INSTALL:-action}"
case "$what" in
  skip) ;;
  action)
    if [ -z "${GITHUB_ACTION_PATH:-}" ]; then
      echo "::error::MCPREEL_INSTALL=action needs GITHUB_ACTION_PATH (set by GitHub for a composite action)" >&2
      exit 2
    fi
    "$python" -m pip install --quiet "$GITHUB_ACTION_PATH" ;;
  *) "$python" -m pip install --quiet "$what" ;;
esac
if ! command -v "${MCPREEL_BIN:-mcpreel}" >/dev/null 2>&1; then
  echo "::error::mcpreel is not on PATH after the install step" >&2
  exit 2
fi
"${MCPREEL_BIN:-mcpreel}" --version
