#!/usr/bin/env bash
# The production topology without Docker: PostgreSQL (embedded cluster, or DATABASE_URL), Debian's
# redis-server, gunicorn and a Celery worker, all on 127.0.0.1. Ctrl-C stops everything it started.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=.venv/bin
PORT=${PORT:-8000}
REDIS_PORT=${REDIS_PORT:-6379}
WEB_WORKERS=${WEB_WORKERS:-4}
mkdir -p var/log var/redis

command -v redis-server >/dev/null || { echo "redis-server is missing: apt-get install redis-server" >&2; exit 1; }

if [ -z "${DATABASE_URL:-}" ]; then
  DATABASE_URL=$($BIN/python manage.py embedded_db --start)
  STARTED_PG=1
fi
export DATABASE_URL
export CELERY_BROKER_URL=${CELERY_BROKER_URL:-redis://127.0.0.1:$REDIS_PORT/0}
export REDIS_URL=${REDIS_URL:-redis://127.0.0.1:$REDIS_PORT/1}

redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --dir var/redis --appendonly yes \
  --daemonize yes --pidfile "$PWD/var/redis/redis.pid" --logfile "$PWD/var/log/redis.log"

cleanup() {
  trap - EXIT INT TERM
  kill "${PIDS[@]}" 2>/dev/null || true
  wait 2>/dev/null || true
  [ -f var/redis/redis.pid ] && kill "$(cat var/redis/redis.pid)" 2>/dev/null || true
  if [ -n "${STARTED_PG:-}" ]; then unset DATABASE_URL; $BIN/python manage.py embedded_db --stop >/dev/null || true; fi
}
trap cleanup EXIT INT TERM

$BIN/python manage.py migrate --noinput
$BIN/python manage.py collectstatic --noinput -v0
PIDS=()
$BIN/celery -A config worker --beat --loglevel INFO --concurrency "${WORKER_CONCURRENCY:-2}" >var/log/worker.log 2>&1 &
PIDS+=($!)
$BIN/gunicorn config.wsgi --bind "127.0.0.1:$PORT" --workers "$WEB_WORKERS" --access-logfile var/log/access.log \
  --error-logfile var/log/web.log &
PIDS+=($!)
echo "portal stack: http://127.0.0.1:$PORT  (logs in var/log/; health at /health/)"
wait -n "${PIDS[@]}"
