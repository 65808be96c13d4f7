# shellcheck shell=bash disable=SC2154  # sourced after scripts/lib.sh and start_work: `work`, `pids`, `name` come from there
# A PostgreSQL server of Debian's `postgresql` package for the scripts under scripts/: a cluster in a directory of
# its own on a free loopback port, the superuser `postgres` with a random password stored as SCRAM-SHA-256,
# fsync on (the figures are a durable server's). Under root every binary runs as the `postgres` account.
#
# start_postgres sets pg_bin, pg_port, pg_dir, pg_password, pg_password_file (readable by the broker) and pg_url
# (postgres://postgres@127.0.0.1:PORT/postgres, the password left out); pg_as runs a PostgreSQL binary.

pg_as() {  # pg_as BINARY ARGS...: runs $pg_bin/BINARY as the server's account
  if [ "$(id -u)" = 0 ]; then setpriv --reuid=postgres --regid=postgres --init-groups -- "$pg_bin/$1" "${@:2}"
  else "$pg_bin/$1" "${@:2}"; fi
}

start_postgres() {
  pg_bin=$(find /usr/lib/postgresql -maxdepth 2 -name bin -type d 2>/dev/null | sort -V | tail -1)
  [ -x "${pg_bin:-/nonexistent}/initdb" ] || apt_install postgresql
  pg_bin=$(find /usr/lib/postgresql -maxdepth 2 -name bin -type d | sort -V | tail -1)
  pg_dir=$(mktemp -d "${TMPDIR:-/tmp}/${name##*/}-pg.XXXXXX")
  pg_port=$(free_port)
  pg_password="pw-$(python3 -c 'import secrets; print(secrets.token_hex(12))')"
  printf '%s' "$pg_password" >"$pg_dir/pwfile"
  pg_password_file=$work/pg-password
  printf '%s' "$pg_password" >"$pg_password_file"; chmod 600 "$pg_password_file"
  [ "$(id -u)" = 0 ] && chown -R postgres:postgres "$pg_dir"
  LC_ALL=C pg_as initdb -D "$pg_dir/data" -U postgres --pwfile="$pg_dir/pwfile" --auth-local=trust \
    --auth-host=scram-sha-256 -E UTF8 --locale=C >"$work/initdb.log" 2>&1 || die "initdb failed (see $work/initdb.log)"
  rm -f "$pg_dir/pwfile"
  start_postgres_again
  pg_url="postgres://postgres@127.0.0.1:$pg_port/postgres"
}

start_postgres_again() {  # the same cluster, after stop_postgres
  LC_ALL=C pg_as postgres -D "$pg_dir/data" -p "$pg_port" -k "$pg_dir" -c listen_addresses=127.0.0.1 \
    -c password_encryption=scram-sha-256 -c shared_buffers=64MB >>"$work/postgres.log" 2>&1 &
  pg_pid=$!
  pids+=("$pg_pid")
  until_true 60 pg_as pg_isready -q -h "$pg_dir" -p "$pg_port" || die "postgres did not start (see $work/postgres.log)"
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
