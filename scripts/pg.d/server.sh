# shellcheck shell=bash disable=SC2034,SC2154  # sourced after scripts/lib.sh or scripts/hardening.d/common.sh
# PostgreSQL servers of Debian's `postgresql` package for the scripts under scripts/: clusters made by initdb under
# $work/pg, each on a 127.0.0.1 port, killed on exit with the rest of $pids; the superuser `postgres` logs in with
# SCRAM-SHA-256 and a random password. PostgreSQL refuses to run as root: under root every binary runs as the
# postgres account (setpriv), and $work is made traversable so that account reaches $work/pg.
#
# One durable server (bench-broker, deploy-check, pg-backup-check, pg-migrate-check): start_postgres sets pg_port,
# pg_dir (the Unix socket's directory), pg_password, pg_password_file (readable by the broker) and pg_url
# (postgres://postgres@127.0.0.1:PORT/postgres, the password left out); stop_postgres, start_postgres_again, psql_q.
# A primary and standbys (postgres-failover): pg_binaries, pg_init, pg_start, pg_standby, pg_sql, pg_kill, pg_promote.

# pg_binaries: the newest /usr/lib/postgresql/<version>/bin; sets pg_bin and the superuser's password.
pg_binaries() {
  pg_bin=$(find /usr/lib/postgresql -maxdepth 2 -name bin -type d 2>/dev/null | sort -V | tail -1)
  [ -n "$pg_bin" ] && [ -x "$pg_bin/postgres" ] || die "PostgreSQL's binaries are missing: apt-get install postgresql (scripts/test does)"
  pg_password="pw-$(python3 -c 'import secrets; print(secrets.token_hex(12))')"
  mkdir -p "$work/pg"
  if [ "$(id -u)" = 0 ]; then
    id postgres >/dev/null 2>&1 || die "running as root and there is no postgres account (apt-get install postgresql makes it)"
    chmod 0711 "$work"
    chown postgres: "$work/pg"
  fi
  printf '%s\n' "$pg_password" >"$work/pg/password"
  [ "$(id -u)" = 0 ] && chown postgres: "$work/pg/password"
  return 0
}

# as_pg COMMAND...: runs a command as the postgres account when root, else as is.
as_pg() {
  if [ "$(id -u)" = 0 ]; then setpriv --reuid=postgres --regid=postgres --init-groups -- "$@"; else "$@"; fi
}

# pg_as BINARY ARGS...: runs $pg_bin/BINARY as the server's account.
pg_as() { as_pg "$pg_bin/$1" "${@:2}"; }

# exec_as_pg COMMAND...: replaces the calling (sub)shell by the command, as the postgres account when root. Run in
# the background as `( exec_as_pg … ) &`, $! is then the command's own pid: a function or subshell started with `&`
# is a bash process of its own whose child is the command, so signalling $! (cleanup, stop_postgres, pg_kill) would
# end the wrapper and leave the server running.
exec_as_pg() {
  if [ "$(id -u)" = 0 ]; then exec setpriv --reuid=postgres --regid=postgres --init-groups -- "$@"; else exec "$@"; fi
}

# pg_init NAME: a cluster in $work/pg/NAME whose superuser postgres logs in with SCRAM on 127.0.0.1 (replication too).
pg_init() {
  LC_ALL=C as_pg "$pg_bin/initdb" -D "$work/pg/$1" -U postgres --pwfile="$work/pg/password" --auth-local=trust \
    --auth-host=scram-sha-256 -E UTF8 --locale=C >"$work/pg/initdb-$1.log" 2>&1 || die "initdb failed (see $work/pg/initdb-$1.log)"
}

# pg_start NAME PORT [ARG...]: the server of cluster NAME on PORT, with WAL for streaming replication; sets pg_pid_NAME.
# fsync is off unless an ARG turns it on (a later -c wins): servers that are killed as processes, never losing the
# machine, keep what they wrote in the page cache.
pg_start() {
  local cluster=$1 port=$2; shift 2
  # $! is the postmaster itself (exec_as_pg), so cleanup's SIGTERM and SIGKILL reach the server on every exit path.
  (LC_ALL=C exec_as_pg "$pg_bin/postgres" -D "$work/pg/$cluster" -p "$port" -k "$work/pg" -c listen_addresses=127.0.0.1 \
    -c wal_level=replica -c max_wal_senders=4 -c synchronous_commit=on -c fsync=off -c shared_buffers=32MB \
    -c max_connections=60 -c password_encryption=scram-sha-256 "$@") >>"$work/pg/$cluster.log" 2>&1 &
  pids+=($!)
  eval "pg_pid_$cluster=$!"
  eval "pg_port_$cluster=$port"
  for _ in {1..1200}; do "$pg_bin/pg_isready" -q -h 127.0.0.1 -p "$port" && return 0; sleep 0.05; done   # a minute
  die "postgres $cluster on port $port did not start (see $work/pg/$cluster.log)"
}

# pg_standby NAME PRIMARY_PORT: a streaming standby of the server on PRIMARY_PORT (pg_basebackup -R), named NAME to it.
pg_standby() {
  PGPASSWORD=$pg_password as_pg "$pg_bin/pg_basebackup" -h 127.0.0.1 -p "$2" -U postgres -D "$work/pg/$1" -X stream -R \
    >"$work/pg/basebackup-$1.log" 2>&1 || die "pg_basebackup failed (see $work/pg/basebackup-$1.log)"
  # The application name is what synchronous_standby_names matches; written last, so it wins over -R's line.
  echo "primary_conninfo = 'host=127.0.0.1 port=$2 user=postgres password=$pg_password application_name=$1'" \
    >>"$work/pg/$1/postgresql.auto.conf"
}

# pg_sql PORT SQL: the statement's result, unaligned and without headers, as the superuser.
pg_sql() { PGPASSWORD=$pg_password "$pg_bin/psql" -X -q -A -t -h 127.0.0.1 -p "$1" -U postgres -d postgres -c "$2" 2>/dev/null || true; }

# pg_kill NAME: SIGKILL to the postmaster and every backend of cluster NAME at once, as a crash would.
pg_kill() {
  local pid_var="pg_pid_$1"
  local pid=${!pid_var}
  local children; children=$(children_of "$pid")
  kill -KILL "$pid" ${children:+$children} 2>/dev/null || true
  wait "$pid" 2>/dev/null || true   # reaped here, so the shell reports no "Killed" job
}

# children_of PID: the pids whose parent is PID, from /proc (procps may be missing on a fresh machine).
children_of() {
  local stat
  for stat in /proc/[0-9]*/stat; do
    awk -v parent="$1" '{ sub(/^.*\) /, ""); if ($2 == parent) { split(FILENAME, p, "/"); print p[3] } }' "$stat" 2>/dev/null || true
  done
}

# pg_promote NAME: makes the standby of cluster NAME a primary.
pg_promote() {
  as_pg "$pg_bin/pg_ctl" promote -D "$work/pg/$1" >>"$work/pg/$1.log" 2>&1 || die "pg_ctl promote failed (see $work/pg/$1.log)"
}

# start_postgres: one server with fsync on (the figures are a durable server's), installed when missing.
start_postgres() {
  [ -x "$(find /usr/lib/postgresql -maxdepth 2 -name bin -type d 2>/dev/null | sort -V | tail -1)/initdb" ] || apt_install postgresql
  pg_binaries
  pg_init main
  pg_dir=$work/pg
  pg_port=$(free_port)
  pg_password_file=$work/pg-password
  printf '%s' "$pg_password" >"$pg_password_file"; chmod 600 "$pg_password_file"
  start_postgres_again
  pg_url="postgres://postgres@127.0.0.1:$pg_port/postgres"
}

start_postgres_again() {  # the same cluster, after stop_postgres
  pg_start main "$pg_port" -c fsync=on -c shared_buffers=64MB -c max_connections=100
  pg_pid=$pg_pid_main
}

stop_postgres() {
  kill -TERM "$pg_pid" 2>/dev/null || true
  wait "$pg_pid" 2>/dev/null || true
}

psql_q() {  # psql_q SQL: one value, through the Unix socket
  pg_as psql -h "$pg_dir" -p "$pg_port" -U postgres -d "${pg_database:-postgres}" -At -c "$1"
}

# until_true SECONDS COMMAND...: polls every 0.1 s; false when SECONDS pass first.
if ! declare -F until_true >/dev/null; then
  until_true() {
    local limit=$1; shift
    local deadline=$((SECONDS + limit))
    while [ "$SECONDS" -lt "$deadline" ]; do "$@" && return 0; sleep 0.1; done
    "$@"
  }
fi
