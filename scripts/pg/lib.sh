# shellcheck shell=bash
# Shared by scripts/pg/{start,stop,restart}.sh: sourced, not run.
# Layout of a server folder DIR (every file is inside it, so `rm -rf DIR`
# after stop.sh removes everything):
#   DIR/data/       the cluster (initdb)          DIR/run/   its unix socket
#   DIR/log/        postgresql.log, initdb.log    DIR/pg.env binaries, OS user, port, passwords
#   DIR/dsn         the test role's URL           DIR/admin_dsn  the superuser's URL

# runuser and useradd live in sbin, which a non-login PATH may lack.
PATH=$PATH:/usr/sbin:/sbin

pg_die() { echo "$(basename "$0"): $*" >&2; exit 1; }

# pg_dir DIR: sets S to DIR's absolute, symlink-free path (postgres records it).
pg_dir() {
  if [ $# -ne 1 ] || [ -z "$1" ]; then
    echo "usage: $0 DIR" >&2
    exit 2
  fi
  S=$(cd "$1" 2>/dev/null && pwd -P) || pg_die "no such folder: $1"
}

# The binaries: GANTRY_PG_BIN if set; else Debian's /usr/lib/postgresql/*/bin
# (initdb and pg_ctl are not on PATH there), 15 first, then the newest major;
# else initdb's folder on PATH (another packaging). Sets PGBIN; 1 if none.
pg_find_bin() {
  local d c
  if [ -n "${GANTRY_PG_BIN:-}" ]; then PGBIN=$GANTRY_PG_BIN; return 0; fi
  for d in /usr/lib/postgresql/15/bin $(printf '%s\n' /usr/lib/postgresql/*/bin | sort -t/ -k4,4 -nr); do
    if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ] && [ -x "$d/postgres" ] && [ -x "$d/psql" ]; then
      PGBIN=$d; return 0
    fi
  done
  if c=$(command -v initdb 2>/dev/null) && d=$(dirname "$(readlink -f "$c")") &&
     [ -x "$d/pg_ctl" ] && [ -x "$d/postgres" ] && [ -x "$d/psql" ]; then
    PGBIN=$d; return 0
  fi
  return 1
}

# Runs a command as the server's OS user ($PG_OS_USER): PostgreSQL refuses to
# run as root, so when we are root it goes through runuser (util-linux, always
# in Debian). The working folder is $S, which that user can enter (a cwd such
# as /root makes initdb and postgres fail).
as_pg() {
  if [ "$(id -un)" = "$PG_OS_USER" ]; then
    (cd "$S" && "$@")
  else
    (cd "$S" && runuser -u "$PG_OS_USER" -- "$@")
  fi
}

# Loads DIR/pg.env (written by start.sh) if there; else guesses from the data
# folder's owner, for a server whose first start failed half-way. 1 if there
# is no server in $S.
pg_load() {
  [ -f "$S/data/PG_VERSION" ] || return 1
  if [ -f "$S/pg.env" ]; then
    # shellcheck source=/dev/null
    . "$S/pg.env"
  else
    PG_OS_USER=$(stat -c %U "$S/data")
    pg_find_bin || return 1
  fi
}

pg_running() { as_pg "$PGBIN/pg_ctl" status -D "$S/data" >/dev/null 2>&1; }

pg_log_tail() { # first line: the server log from that line on, at most 40 lines
  if [ -s "$S/log/postgresql.log" ] && [ "$(wc -l <"$S/log/postgresql.log")" -ge "$1" ]; then
    echo "---- last lines of $S/log/postgresql.log" >&2
    tail -n +"$1" "$S/log/postgresql.log" | tail -n 40 >&2
    echo "----" >&2
  fi
}
