#!/usr/bin/env bash
# `npm test` runs the suite through this script: it checks what the tests need on this
# machine, starts Redis when nothing answers at REDIS_TEST_URL on this machine, then runs the
# command it was given (jest). A missing Debian package is installed when this runs as root on a
# machine with apt-get (a fresh CI or dev box: `npm ci && npm test` is then the whole set-up);
# anything still missing is named, with how to install it, in one list.
#
#   scripts/test-setup.sh jest [jest arguments]
#   scripts/test-setup.sh          (only the checks and the Redis start)
#
# REDIS_TEST_URL (default redis://127.0.0.1:6379/0): the shared test Redis; every test works
# under its own key prefix. A local one (127.0.0.1 / localhost) is started when it does not
# answer; any other is only checked. MOTO_PYTHON: the python3 that has moto's S3 server.
set -euo pipefail

REDIS_TEST_URL="${REDIS_TEST_URL:-redis://127.0.0.1:6379/0}"

missing=()
packages=()

want() { # want <command> <Debian package>: the package is installed below when the command is missing
  command -v "$1" >/dev/null 2>&1 || packages+=("$2")
}
want redis-server redis-server
want redis-cli redis-server
want kcat kcat
want openssl openssl
want prlimit util-linux
want promtool prometheus
if [ "${#packages[@]}" -gt 0 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  wanted="$(printf '%s\n' "${packages[@]}" | sort -u | tr '\n' ' ')"
  echo "test-setup: installing $wanted(apt-get, as root)"
  apt-get update -qq && apt-get install -y -qq --no-install-recommends $wanted >/dev/null || echo "test-setup: apt-get failed" >&2
fi

need() { # need <command> <what it is for> <Debian package>
  command -v "$1" >/dev/null 2>&1 || missing+=("$1 ($2): apt-get install -y $3")
}
need redis-server "the Redis tests start and kill their own servers" redis-server
need redis-cli "Redis Cluster tests join nodes with it" redis-server
need kcat "librdkafka's mock Kafka cluster for the Kafka tests" kcat
need openssl "the Redis TLS tests make a throwaway CA" openssl
need prlimit "the file sink's full-disk test sets a file size limit" util-linux
need promtool "the alert rules' tests in deploy/observability" "--no-install-recommends prometheus"

# The S3 tests run moto's server; a pyenv interpreter may have it where python3 does not.
if [ -z "${MOTO_PYTHON:-}" ]; then
  for python in python3 "${HOME:-/root}"/.pyenv/shims/python3 "${HOME:-/root}"/.pyenv/versions/*/bin/python3; do
    if "$python" -c 'import moto.server, flask' >/dev/null 2>&1; then export MOTO_PYTHON="$python"; break; fi
  done
fi
if [ -z "${MOTO_PYTHON:-}" ] || ! "$MOTO_PYTHON" -c 'import moto.server, flask' >/dev/null 2>&1; then
  missing+=("moto (the S3 tests run python3 -m moto.server): pip install 'moto[server]' (or set MOTO_PYTHON to a python3 that has it)")
fi

redis_answers() { redis-cli -u "$REDIS_TEST_URL" ping 2>/dev/null | grep -q PONG; }

if command -v redis-cli >/dev/null 2>&1 && ! redis_answers; then
  # redis://[user:password@]host:port/db -> host and port
  hostport="${REDIS_TEST_URL#*://}"; hostport="${hostport##*@}"; hostport="${hostport%%/*}"
  host="${hostport%:*}"; port="${hostport##*:}"; [ "$port" = "$hostport" ] && port=6379
  if [[ "$REDIS_TEST_URL" == redis://* && ( "$host" == 127.0.0.1 || "$host" == localhost ) ]] && command -v redis-server >/dev/null 2>&1; then
    echo "test-setup: starting redis-server on 127.0.0.1:$port (no persistence; stop it with: redis-cli -p $port shutdown nosave)"
    redis-server --daemonize yes --bind 127.0.0.1 --port "$port" --save "" --appendonly no >/dev/null
    for _ in $(seq 1 100); do redis_answers && break; sleep 0.1; done
  fi
  redis_answers || missing+=("Redis at $REDIS_TEST_URL does not answer PING: start it, or point REDIS_TEST_URL at a Redis that does")
fi

if [ "${#missing[@]}" -gt 0 ]; then
  echo "test-setup: the test suite cannot run on this machine yet; missing:" >&2
  for item in "${missing[@]}"; do echo "  - $item" >&2; done
  echo "On Debian/Ubuntu, all at once: apt-get install -y redis-server kcat openssl util-linux \\
  && apt-get install -y --no-install-recommends prometheus && pip install 'moto[server]'" >&2
  exit 1
fi

[ "$#" -eq 0 ] || exec "$@"
