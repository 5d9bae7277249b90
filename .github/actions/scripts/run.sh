#!/usr/bin/env bash
# Run the mcpreel gates the workflow asked for (MCPREEL_RUN), write every report into MCPREEL_REPORTS,
# and record the verdict as step outputs. A gate that fails does not stop the others: every report gets
# written and uploaded; verdict.sh fails the job afterwards.
#
# Env (set by action.yml from its inputs): MCPREEL_RUN, MCPREEL_SOURCE, MCPREEL_SERVER_COMMAND,
# MCPREEL_CONTRACT, MCPREEL_FAIL_ON, MCPREEL_AUDIT_FAIL_ON, MCPREEL_AUDIT_RULES, MCPREEL_SESSION,
# MCPREEL_JOBS, MCPREEL_TARGET_COMMAND, MCPREEL_TARGET_URL, MCPREEL_IGNORE_PATH, MCPREEL_COMPARE_RULES, MCPREEL_NOISE,
# MCPREEL_REPEAT, MCPREEL_CHECK_PROFILE, MCPREEL_REPORTS; by GitHub: GITHUB_OUTPUT,
# GITHUB_STEP_SUMMARY (both optional here, so the script runs the same on a laptop). MCPREEL_BIN: the
# mcpreel command (default: mcpreel on PATH). MCPREEL_SERVER_COMMAND is the deprecated name of
# MCPREEL_TARGET_COMMAND (one server for every gate): still read, with a warning.
set -uo pipefail

mcpreel="${MCPREEL_BIN:-mcpreel}"
reports="${MCPREEL_REPORTS:-mcpreel-reports}"
source_="${MCPREEL_SOURCE:-}"
mkdir -p "$reports"

out() { if [ -n "${GITHUB_OUTPUT:-}" ]; then printf '%s=%s\n' "$1" "$2" >> "$GITHUB_OUTPUT"; fi; }
say() { if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then printf '%s\n' "$*" >> "$GITHUB_STEP_SUMMARY"; fi; }
fail_usage() { echo "::error::$*" >&2; out exit-code 2; out reports "$reports"; exit 2; }

# the server: target-command for every gate. server-command, its deprecated name, still works as it did:
# given too, it is what contract-check, audit and check start, and target-command what replay replays against
server_command="${MCPREEL_SERVER_COMMAND:-${MCPREEL_TARGET_COMMAND:-}}"
replay_command="${MCPREEL_TARGET_COMMAND:-${MCPREEL_SERVER_COMMAND:-}}"
if [ -n "${MCPREEL_SERVER_COMMAND:-}" ]; then
  echo "::warning::the input server-command is deprecated: name the server target-command" >&2
fi

# what contract-check and audit judge: a recording or URL, or a live server command
# (source wins over target-command, which replay may use meanwhile; the old server-command named only this)
source_args=()
if [ -n "$source_" ] && [ -n "${MCPREEL_SERVER_COMMAND:-}" ]; then
  fail_usage "give source or server-command, not both"
elif [ -n "$source_" ]; then
  source_args=("$source_")
elif [ -n "$server_command" ]; then
  source_args=(--command "$server_command")
fi

gates="${MCPREEL_RUN:-}"
gates="${gates//,/ }"
[ -n "${gates// /}" ] || fail_usage "no gate to run: set run to contract-check, audit, replay and/or check"

worst=0
say "## mcpreel"
say ""
say "| gate | result | report |"
say "|---|---|---|"

record() {  # gate exit-code report: anything but 0 and 1 (2, 127 not found, a signal) is "could not run"
  local verdict code="$2"
  [ "$code" -le 1 ] || code=2
  case "$code" in 0) verdict="passed" ;; 1) verdict="**failed**" ;; *) verdict="**could not run** (exit $2)" ;; esac
  say "| $1 | $verdict | \`$3\` |"
  out "$1-exit-code" "$code"
  if [ "$code" -gt "$worst" ]; then worst="$code"; fi
  echo "mcpreel $1: exit $2"
}

for gate in $gates; do
  case "$gate" in
    contract-check)
      [ ${#source_args[@]} -gt 0 ] || fail_usage "contract-check needs source or target-command"
      "$mcpreel" contract check "${MCPREEL_CONTRACT:-mcp-contract.json}" "${source_args[@]}" \
        --fail-on "${MCPREEL_FAIL_ON:-dangerous}" --sarif "$reports/contract.sarif" | tee "$reports/contract.txt"
      record contract-check "${PIPESTATUS[0]}" "$reports/contract.sarif" ;;
    audit)
      [ ${#source_args[@]} -gt 0 ] || fail_usage "audit needs source or target-command"
      rules=()
      if [ -n "${MCPREEL_AUDIT_RULES:-}" ]; then rules=(--rules "$MCPREEL_AUDIT_RULES"); fi
      "$mcpreel" audit "${source_args[@]}" "${rules[@]}" --fail-on "${MCPREEL_AUDIT_FAIL_ON:-error}" \
        --sarif "$reports/audit.sarif" | tee "$reports/audit.txt"
      record audit "${PIPESTATUS[0]}" "$reports/audit.sarif" ;;
    replay)
      # several sessions: space or newline separated, shell patterns expanded (one file, files, folders)
      sessions=()
      for word in ${MCPREEL_SESSION:-}; do sessions+=("$word"); done
      [ ${#sessions[@]} -gt 0 ] || fail_usage "replay needs session"
      target=()
      if [ -n "$replay_command" ]; then target=(--target-command "$replay_command");
      elif [ -n "${MCPREEL_TARGET_URL:-}" ]; then target=(--target-url "$MCPREEL_TARGET_URL");
      else fail_usage "replay needs target-command or target-url"; fi
      compare_rules=()
      while IFS= read -r path; do  # one path a line: a path may hold spaces or commas
        path="${path#"${path%%[![:space:]]*}"}"; path="${path%"${path##*[![:space:]]}"}"
        if [ -n "$path" ]; then compare_rules+=(--ignore-path "$path"); fi
      done <<< "${MCPREEL_IGNORE_PATH:-}"
      if [ -n "${MCPREEL_COMPARE_RULES:-}" ]; then compare_rules+=(--compare-rules "$MCPREEL_COMPARE_RULES"); fi
      if [ -n "${MCPREEL_NOISE:-}" ]; then compare_rules+=(--noise "$MCPREEL_NOISE"); fi
      if [ -n "${MCPREEL_REPEAT:-}" ]; then compare_rules+=(--repeat "$MCPREEL_REPEAT"); fi
      if [ -n "${MCPREEL_JOBS:-}" ]; then compare_rules+=(--jobs "$MCPREEL_JOBS"); fi
      "$mcpreel" replay "${sessions[@]}" "${target[@]}" "${compare_rules[@]}" --junit "$reports/replay.junit.xml" \
        --output "$reports/replay.json" --html "$reports/replay.html" | tee "$reports/replay.txt"
      record replay "${PIPESTATUS[0]}" "$reports/replay.junit.xml" ;;
    check)
      if [ -n "${MCPREEL_TARGET_URL:-}" ]; then target=("$MCPREEL_TARGET_URL");
      elif [ -n "$server_command" ]; then target=(--command "$server_command");
      else fail_usage "check needs target-url or target-command"; fi
      "$mcpreel" check "${target[@]}" --profile "${MCPREEL_CHECK_PROFILE:-mcp}" --sarif "$reports/check.sarif" \
        --out "$reports/check.txt"
      record check $? "$reports/check.sarif" ;;
    *) fail_usage "unknown gate '$gate' (known: contract-check, audit, replay, check)" ;;
  esac
done
out exit-code "$worst"
out reports "$reports"
exit 0
