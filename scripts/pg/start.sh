#!/usr/bin/env bash
# Starts a throwaway PostgreSQL server on 127.0.0.1 for gantry's tests, with
# Debian's `postgresql` package (installed here when missing): initdb in
# DIR/data, a free port, the unix socket inside DIR, a database gantry_test
# owned by the role gantry (password auth, CREATEDB so tests can make more
# databases), and the superuser postgres (password too).
#
# Usage: start.sh DIR
# Writes DIR/dsn (postgres://gantry:...@127.0.0.1:PORT/gantry_test?sslmode=disable)
# and DIR/admin_dsn (the superuser, same server). Stop with scripts/pg/stop.sh
# DIR, restart (same port) with scripts/pg/restart.sh DIR; then `rm -rf DIR`.
# Run on a DIR whose server was stopped, it starts that server again (same
# data, same port when still free). On a failure it prints the server log's
# tail, stops what it started and exits 1.
set -euo pipefail

if [ $# -ne 1 ] || [ -z "$1" ]; then echo "usage: $0 DIR" >&2; exit 2; fi
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/pg/lib.sh
. "$here/lib.sh"
mkdir -p "$1"
pg_dir "$1"
t0=$SECONDS

# (In a subshell: pg_load sets the variables of the server found.)
if running_port=$(pg_load 2>/dev/null && pg_running && echo "${PORT:-?}"); then
  pg_die "a server is already running in $S (port $running_port): stop it with scripts/pg/stop.sh $S"
fi

# --- the binaries, installed when missing (like scripts/test.sh does tmux).
if ! pg_find_bin; then
  echo "== installing PostgreSQL (Debian's postgresql package)"
  command -v apt-get >/dev/null 2>&1 ||
    pg_die "initdb/pg_ctl not found and apt-get is not available: install PostgreSQL or set GANTRY_PG_BIN"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  # (Not in DIR/log: that folder must be made by the server's user, below.)
  if ! { $SUDO apt-get update -qq && $SUDO env DEBIAN_FRONTEND=noninteractive \
           apt-get install -y -qq postgresql; } >"$S/apt.log" 2>&1; then
    tail -n 20 "$S/apt.log" >&2
    pg_die "apt-get install postgresql failed (log: $S/apt.log)"
  fi
  pg_find_bin || pg_die "postgresql was installed but no initdb/pg_ctl is in /usr/lib/postgresql/*/bin"
fi
version=$("$PGBIN/postgres" --version)
case $PGBIN in
  */15/bin) echo "== $version ($PGBIN)" ;;
  *) echo "== $version ($PGBIN): not 15, the major the tests target; going on with it" ;;
esac

# --- who runs the server: ourselves, or when root (PostgreSQL refuses root)
# the package's `postgres` user (so chosen after the install), or a system
# user made for it.
if [ "$(id -u)" -ne 0 ]; then
  PG_OS_USER=$(id -un)
elif getent passwd postgres >/dev/null; then
  PG_OS_USER=postgres
else
  PG_OS_USER=gantrypg
  getent passwd gantrypg >/dev/null ||
    useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin gantrypg ||
    pg_die "could not create the system user gantrypg to run PostgreSQL as (PostgreSQL refuses root)"
fi

# --- the server's user must own DIR (it writes data, socket, log there) and
# reach it: a folder under /root is not searchable for it.
if [ "$PG_OS_USER" != "$(id -un)" ]; then
  (cd / && runuser -u "$PG_OS_USER" -- test -x "$(dirname "$S")") 2>/dev/null ||
    pg_die "user $PG_OS_USER cannot enter $(dirname "$S") (it or a parent folder is closed to it): use a folder under /tmp"
  chown "$PG_OS_USER" "$S"
  chmod 700 "$S"
fi
as_pg mkdir -p "$S/log" "$S/run"

ok=0
on_exit() {
  if [ "$ok" != 1 ]; then
    "$here/stop.sh" "$S" >/dev/null 2>&1 || true
    echo "start.sh: failed; stopped what it had started (files in $S)" >&2
  fi
}
trap on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- a new cluster, unless DIR holds a complete one (dsn written at the end
# of a successful first start); a half-made one from a failed start is redone.
fresh=1
if [ -f "$S/dsn" ] && [ -f "$S/pg.env" ] && [ -f "$S/data/PG_VERSION" ]; then
  fresh=0
  PG_OS_USER_NOW=$PG_OS_USER PGBIN_NOW=$PGBIN
  # shellcheck source=/dev/null
  . "$S/pg.env"   # PORT, PASSWORD, ADMIN_PASSWORD of the first start
  PG_OS_USER=$PG_OS_USER_NOW PGBIN=$PGBIN_NOW   # but this start's user and binaries
  echo "== starting the existing server in $S again"
else
  rm -rf "$S/data" "$S/dsn" "$S/admin_dsn"
  rnd() { od -An -tx1 -N16 /dev/urandom | tr -d ' \n'; }   # hex: safe in a URL and in SQL
  PASSWORD=$(rnd) ADMIN_PASSWORD=$(rnd) PORT=""
  echo "== initdb in $S/data (as $PG_OS_USER)"
  (umask 077; echo "$ADMIN_PASSWORD" >"$S/pwfile")
  [ "$PG_OS_USER" = "$(id -un)" ] || chown "$PG_OS_USER" "$S/pwfile"
  # --no-sync: a throwaway cluster need not survive a machine crash. C locale:
  # a bare container may have no other.
  if ! as_pg "$PGBIN/initdb" -D "$S/data" -U postgres --pwfile="$S/pwfile" \
      --auth-local=trust --auth-host=scram-sha-256 -E UTF8 --locale=C --no-sync \
      >"$S/log/initdb.log" 2>&1; then
    rm -f "$S/pwfile"
    tail -n 20 "$S/log/initdb.log" >&2
    pg_die "initdb failed (log: $S/log/initdb.log)"
  fi
  rm -f "$S/pwfile"
  # Loopback TCP with a password only (a DSN missing its password fails, as
  # it would against a real server); trust on the socket, closed inside DIR.
  as_pg sh -c 'printf "%s\n" "local all all trust" "host all all 127.0.0.1/32 scram-sha-256" > data/pg_hba.conf'
  as_pg sh -c 'echo "include = '\''gantry.conf'\''" >> data/postgresql.conf'
fi

# The socket path must fit in sockaddr_un (107 bytes): "DIR/run/.s.PGSQL.NNNNN".
# A longer DIR gets no socket; everything here goes over TCP anyway.
sockdir=$S/run
if [ $((${#S} + 19)) -gt 107 ]; then
  echo "== $S is too long a path for a unix socket: TCP only"
  sockdir=""
fi

# A free loopback port below the ephemeral range (32768+), so that outgoing
# connections' source ports cannot take it between this pick and the bind.
free_port() {
  local p tries=0
  while [ $((tries += 1)) -le 1000 ]; do
    p=$((20000 + RANDOM % 12000))
    (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return 0; }
  done
  return 1
}

# Starts on $PORT (the old one on a start again, else a new one); a port taken
# before the server binds it is retried on a new one.
for try in 1 2 3; do
  [ -n "$PORT" ] || PORT=$(free_port) || pg_die "could not find a free port"
  # max_connections: go test runs packages in parallel, each with a pool.
  as_pg sh -c 'cat > data/gantry.conf' <<EOF
# Written by scripts/pg/start.sh
listen_addresses = '127.0.0.1'
port = $PORT
unix_socket_directories = '$sockdir'
max_connections = 300
EOF
  printf 'PGBIN=%q\nPG_OS_USER=%q\nPORT=%q\nPASSWORD=%q\nADMIN_PASSWORD=%q\n' \
    "$PGBIN" "$PG_OS_USER" "$PORT" "$PASSWORD" "$ADMIN_PASSWORD" >"$S/pg.env"
  chmod 600 "$S/pg.env"
  from=1   # the log's first line written by this try
  [ ! -f "$S/log/postgresql.log" ] || from=$(( $(wc -l <"$S/log/postgresql.log") + 1 ))
  # -w: pg_ctl returns once the server accepts connections (or has died).
  if as_pg "$PGBIN/pg_ctl" start -D "$S/data" -l "$S/log/postgresql.log" -w -t 120 >"$S/log/pg_ctl.log" 2>&1; then
    break
  fi
  if [ "$try" -lt 3 ] && tail -n +"$from" "$S/log/postgresql.log" | grep 'already in use' >/dev/null; then
    echo "== port $PORT was taken meanwhile; trying another"
    PORT=""
    continue
  fi
  cat "$S/log/pg_ctl.log" >&2
  pg_log_tail "$from"
  pg_die "the server did not start on 127.0.0.1:$PORT"
done
echo "== server up on 127.0.0.1:$PORT ($((SECONDS - t0))s)"

if [ "$fresh" = 1 ]; then
  # Over TCP as the superuser, which also proves password auth works.
  if ! PGPASSWORD=$ADMIN_PASSWORD PGCONNECT_TIMEOUT=10 "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 \
      "host=127.0.0.1 port=$PORT user=postgres dbname=postgres sslmode=disable" \
      >"$S/log/setup.log" 2>&1 <<EOF
CREATE ROLE gantry LOGIN CREATEDB PASSWORD '$PASSWORD';
CREATE DATABASE gantry_test OWNER gantry;
EOF
  then
    cat "$S/log/setup.log" >&2
    pg_log_tail 1
    pg_die "could not create the role gantry and the database gantry_test"
  fi
  echo "== made the database gantry_test and the role gantry"
fi

DSN="postgres://gantry:$PASSWORD@127.0.0.1:$PORT/gantry_test?sslmode=disable"
(umask 077
 echo "$DSN" >"$S/dsn"
 echo "postgres://postgres:$ADMIN_PASSWORD@127.0.0.1:$PORT/postgres?sslmode=disable" >"$S/admin_dsn")
ok=1
echo "== PostgreSQL ready: DSN in $S/dsn (superuser: $S/admin_dsn)"
echo "export GANTRY_TEST_POSTGRES='$DSN'"
echo "export GANTRY_TEST_PGDIR='$S'"
