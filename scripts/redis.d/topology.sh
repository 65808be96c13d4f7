# shellcheck shell=bash disable=SC2034,SC2154  # sourced after scripts/hardening.d/common.sh
# Redis processes for scripts/redis-sentinel and scripts/redis-tls: servers, replicas and sentinels on
# 127.0.0.1, each in its own directory under $work, killed on exit with the rest of $pids.

# start_redis PORT [ARG...]: a redis-server on PORT with an append-only file synced on every write; sets redis_pid.
start_redis() {
  local port=$1; shift
  mkdir -p "$work/redis-$port"
  redis-server --port "$port" --bind 127.0.0.1 --dir "$work/redis-$port" --save "" --appendonly yes \
    --appendfsync always --daemonize no --logfile "$work/redis-$port.log" "$@" &
  redis_pid=$!
  pids+=("$redis_pid")
  eval "redis_pid_$port=$redis_pid"
  wait_ping "$port" || die "redis-server on port $port did not start (see $work/redis-$port.log)"
}

# start_sentinel PORT PRIMARY_PORT: a sentinel (redis-server --sentinel) watching the primary as "mymaster", quorum 2.
start_sentinel() {
  local port=$1 primary=$2
  mkdir -p "$work/sentinel-$port"
  cat >"$work/sentinel-$port/sentinel.conf" <<CONF
port $port
bind 127.0.0.1
dir $work/sentinel-$port
logfile $work/sentinel-$port.log
sentinel monitor mymaster 127.0.0.1 $primary 2
sentinel down-after-milliseconds mymaster 1000
sentinel failover-timeout mymaster 4000
sentinel parallel-syncs mymaster 1
CONF
  redis-server "$work/sentinel-$port/sentinel.conf" --sentinel &
  pids+=($!)
  wait_ping "$port" || die "the sentinel on port $port did not start (see $work/sentinel-$port.log)"
}

# wait_ping PORT: until PORT answers PING (30 s: a loaded machine starts it late).
wait_ping() {
  for _ in {1..600}; do
    [ "$(redis-cli -p "$1" ping 2>/dev/null)" = PONG ] && return 0
    sleep 0.05
  done
  return 1
}

# sentinel_primary_port SENTINEL_PORT: the port the sentinel names for mymaster now.
sentinel_primary_port() { redis-cli -p "$1" SENTINEL get-master-addr-by-name mymaster 2>/dev/null | sed -n 2p; }

# role PORT: master, slave or empty.
role() { redis-cli -p "$1" ROLE 2>/dev/null | head -1; }

# until_true SECONDS COMMAND...: polls every 0.1 s; false when SECONDS pass first.
until_true() {
  local limit=$1; shift
  local deadline=$((SECONDS + limit))
  while [ "$SECONDS" -lt "$deadline" ]; do "$@" && return 0; sleep 0.1; done
  "$@"
}

# status_of PORT PATH [API_KEY]: the status of GET PATH on the broker at PORT; 000 when none can be had.
status_of() { broker_port=$1 http_status "$2" "${3:-}"; }
