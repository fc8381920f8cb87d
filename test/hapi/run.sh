#!/usr/bin/env bash
# Build (once) and run a real HAPI FHIR 8.8 R4 JPA server on in-memory H2, without Docker.
#   bash test/hapi/run.sh               build if needed, serve on HAPI_PORT (default 8090), stay in the foreground
#   bash test/hapi/run.sh --build-only  build if needed, then exit
# Env: HAPI_PORT, HAPI_HOST (default 127.0.0.1), HAPI_JAVA_OPTS (extra JVM flags after jvm.options),
#      HAPI_WAIT_SECONDS (default 180), HAPI_LOG_LEVEL (default WARN). Synthetic data only.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
JAR="$HERE/target/hapi-launcher.jar"
PORT="${HAPI_PORT:-8090}"
HOST="${HAPI_HOST:-127.0.0.1}"
WAIT_SECONDS="${HAPI_WAIT_SECONDS:-180}"

need() { command -v "$1" >/dev/null 2>&1 || { echo "hapi: '$1' not found on PATH (needs Java 17+ and Maven)" >&2; exit 127; }; }

is_stale() {
  [[ ! -f "$JAR" || ! -d "$HERE/target/lib" ]] && return 0
  [[ -n "$(find "$HERE/pom.xml" "$HERE/src" -newer "$JAR" -print -quit)" ]]
}

build() {
  need java
  mkdir -p "$HERE/target"
  # Tests and this script may build at the same time: one Maven run at a time, the others wait and reuse it.
  exec 9>"$HERE/target/.build.lock"
  flock 9
  if is_stale; then
    need mvn
    echo "hapi: building $JAR (first build downloads ~330 MB into ~/.m2)" >&2
    local started=$SECONDS
    # -T1: the machine is small and shared. Stale jars in lib/ would shadow new versions, so start clean.
    rm -rf "$HERE/target/lib"
    mvn -q -T1 -B -f "$HERE/pom.xml" package >&2
    echo "hapi: built in $((SECONDS - started))s" >&2
  fi
  flock -u 9
}

build
[[ "${1:-}" == "--build-only" ]] && exit 0

# shellcheck disable=SC2086 # HAPI_JAVA_OPTS is a list of flags.
HAPI_PORT="$PORT" HAPI_HOST="$HOST" java "@$HERE/jvm.options" ${HAPI_JAVA_OPTS:-} -jar "$JAR" &
JAVA_PID=$!
trap 'kill "$JAVA_PID" 2>/dev/null; wait "$JAVA_PID" 2>/dev/null; exit 130' INT TERM
trap 'kill "$JAVA_PID" 2>/dev/null || true' EXIT

BASE="http://$HOST:$PORT/fhir"
deadline=$((SECONDS + WAIT_SECONDS))
until [[ "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/metadata" 2>/dev/null)" == "200" ]]; do
  if ! kill -0 "$JAVA_PID" 2>/dev/null; then
    echo "hapi: the server exited before it was ready (is port $PORT free?)" >&2
    wait "$JAVA_PID" || exit $?
    exit 1
  fi
  if (( SECONDS >= deadline )); then
    echo "hapi: no 200 from $BASE/metadata within ${WAIT_SECONDS}s" >&2
    exit 1
  fi
  sleep 1
done
echo "HAPI FHIR R4 ready at $BASE (Ctrl-C stops it)"
wait "$JAVA_PID"
