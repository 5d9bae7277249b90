#!/usr/bin/env bash
# Fail the job when a gate failed (exit 1) or could not run (exit 2); MCPREEL_EXIT_CODE comes from run.sh.
set -euo pipefail
code="${MCPREEL_EXIT_CODE:-}"
case "$code" in
  0) echo "mcpreel: every gate passed" ;;
  1) echo "::error::mcpreel: a gate failed (see the reports)"; exit 1 ;;
  2) echo "::error::mcpreel: a gate could not run (see the log)"; exit 2 ;;
  *) echo "::error::mcpreel: no verdict (the gates step did not finish: '$code')"; exit 2 ;;
esac
