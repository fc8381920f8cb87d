#!/usr/bin/env bash
# Build (once) and run a real HAPI FHIR 8.8 R4 JPA server on in-memory H2 (or PostgreSQL), without Docker.
#   bash test/hapi/run.sh               build if needed, serve on HAPI_PORT (default 8090), stay in the foreground
#   bash test/hapi/run.sh --build-only  build if needed, then exit
# Env: HAPI_PORT, HAPI_HOST (default 127.0.0.1), HAPI_JAVA_OPTS (extra JVM flags after jvm.options),
#      HAPI_WAIT_SECONDS (default 180), HAPI_LOG_LEVEL (default WARN). Synthetic data only.
# Memory: jvm.options caps the heap at 6 GB (-Xmx6g), what loading the MIMIC-IV demo on FHIR (~150k resources)
# needs; at 512 MB HAPI spent most of that load in garbage collection. The heap grows only as data arrives, so a
# small test load still uses a few hundred MB. Lower it with HAPI_JAVA_OPTS=-Xmx1g (the last -Xmx wins).
#      HAPI_JDBC_URL (default jdbc:h2:mem:hapi;DB_CLOSE_DELAY=-1; or jdbc:postgresql://HOST:PORT/DB, whose tables
#      HAPI creates on first start), HAPI_JDBC_USER, HAPI_JDBC_PASSWORD.
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

# Something already answering on the port would pass for our server: refuse before the build and before the launch.
port_taken() { (exec 3<>"/dev/tcp/$HOST/$PORT") 2>/dev/null; }
refuse_taken_port() {
  if port_taken; then
    echo "hapi: port $PORT on $HOST is already in use; stop that server or set HAPI_PORT" >&2
    exit 1
  fi
}

[[ "${1:-}" == "--build-only" ]] || refuse_taken_port
build
[[ "${1:-}" == "--build-only" ]] && exit 0
refuse_taken_port

# The JVM reads its stdin from a FIFO only this script writes to: when the script ends, however it ends (even
# SIGKILL), the FIFO closes and the launcher exits (HAPI_EXIT_ON_STDIN_EOF). Its stdout goes to a file, for the
# launcher's own "HAPI_READY" line: printed only once Jetty has bound the port, so a server that already held the
# port can never pass for ours.
RUN_DIR="$(mktemp -d)"
mkfifo "$RUN_DIR/stdin"
# shellcheck disable=SC2086 # HAPI_JAVA_OPTS is a list of flags.
HAPI_PORT="$PORT" HAPI_HOST="$HOST" HAPI_EXIT_ON_STDIN_EOF=1 java "@$HERE/jvm.options" ${HAPI_JAVA_OPTS:-} -jar "$JAR" <"$RUN_DIR/stdin" >"$RUN_DIR/stdout" &
JAVA_PID=$!
exec 7>"$RUN_DIR/stdin"
stop_java() {
  kill "$JAVA_PID" 2>/dev/null || true
  wait "$JAVA_PID" 2>/dev/null || true
  rm -rf "$RUN_DIR"
}
trap 'stop_java; exit 130' INT TERM HUP
trap 'stop_java' EXIT

BASE="http://$HOST:$PORT/fhir"
deadline=$((SECONDS + WAIT_SECONDS))
until grep -q '^HAPI_READY ' "$RUN_DIR/stdout" 2>/dev/null; do
  if ! kill -0 "$JAVA_PID" 2>/dev/null; then
    status=0
    wait "$JAVA_PID" || status=$?
    echo "hapi: the server exited (status $status) before it was ready; its errors are above" >&2
    exit 1
  fi
  if (( SECONDS >= deadline )); then
    echo "hapi: not ready within ${WAIT_SECONDS}s; stopping it" >&2
    exit 1
  fi
  sleep 1
done
echo "HAPI FHIR R4 ready at $BASE (Ctrl-C stops it)"
status=0
wait "$JAVA_PID" || status=$?
exit "$status"
