#!/usr/bin/env bash
# Run a command against a private, throw-away PostgreSQL server:
#
#   scripts/with-postgres.sh COMMAND [ARGS…]
#   scripts/with-postgres.sh cargo test --all-features --test db -- --ignored
#   scripts/with-postgres.sh cargo run --example bank --features sqlx
#
# 1. Finds initdb and pg_ctl (on PATH, else the newest /usr/lib/postgresql/*/bin); when there
#    are none, installs Debian's `postgresql` package (as root: `apt-get install postgresql`).
# 2. Initialises a cluster in a new temp directory, owned by the OS user `postgres` (made if
#    missing): the server refuses to run as root. Trust authentication, loopback only, fsync off
#    (the data is thrown away).
# 3. Starts it on 127.0.0.1 at a free port, waits until it accepts connections, and creates the
#    database `retry_jitter`.
# 4. Runs COMMAND with, in its environment:
#      DATABASE_URL  postgres://postgres@127.0.0.1:PORT/retry_jitter
#      PGDATA        the cluster's directory (its postgresql.conf has the port and address)
#      PG_CTL        the absolute path of pg_ctl
#      PG_LOG        the server's log file (give it to `pg_ctl start -l`)
#      PG_CTL_AS     the command prefix that runs pg_ctl as the cluster's owner: as root,
#                    `runuser -u postgres --`; empty otherwise
#    so a test can stop the server and start it again:
#      $PG_CTL_AS "$PG_CTL" -D "$PGDATA" -m fast -w stop
#      $PG_CTL_AS "$PG_CTL" -D "$PGDATA" -l "$PG_LOG" -w start
# 5. Stops the server and removes the directory when it exits, however it exits, with
#    COMMAND's exit status.
set -euo pipefail

if [ $# -eq 0 ]; then
    echo "usage: $0 COMMAND [ARGS…]" >&2
    exit 2
fi

is_root() { [ "$(id -u)" -eq 0 ]; }

# The directory holding initdb and pg_ctl, or nothing.
pg_bindir() {
    if command -v initdb >/dev/null 2>&1 && command -v pg_ctl >/dev/null 2>&1; then
        dirname "$(readlink -f "$(command -v pg_ctl)")"
        return
    fi
    local dir
    for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
        if [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ]; then
            echo "$dir"
            return
        fi
    done
}

bindir=$(pg_bindir)
if [ -z "$bindir" ]; then
    if ! is_root; then
        echo "PostgreSQL (initdb, pg_ctl) is not installed; as root this script installs it" >&2
        exit 1
    fi
    echo "with-postgres: installing PostgreSQL from the OS packages…" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q >&2
    apt-get install -y -q postgresql >&2
    bindir=$(pg_bindir)
    [ -n "$bindir" ] || { echo "with-postgres: no initdb after installing postgresql" >&2; exit 1; }
fi
pg_ctl=$bindir/pg_ctl

# Commands that touch the cluster run as its owner: `postgres` when we are root.
if is_root; then
    if ! id -u postgres >/dev/null 2>&1; then
        useradd --system --user-group --home-dir /var/lib/postgresql --shell /bin/sh postgres
    fi
    command -v runuser >/dev/null || { echo "with-postgres: runuser (util-linux) is required" >&2; exit 1; }
    as_owner=(runuser -u postgres --)
else
    as_owner=()
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/with-postgres.XXXXXX")
export PGDATA=$dir/data
log=$dir/server.log
mkdir -p "$dir/socket"
is_root && chown -R postgres: "$dir"
chmod 755 "$dir"

# Run as the owner, from a directory it can read.
owner() { (cd "$dir" && "${as_owner[@]}" "$@"); }

cleanup() {
    local status=$?
    owner "$pg_ctl" -D "$PGDATA" -m fast -w -t 30 stop >/dev/null 2>&1 ||
        owner "$pg_ctl" -D "$PGDATA" -m immediate -w stop >/dev/null 2>&1 || true
    rm -rf "$dir"
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

owner "$bindir/initdb" -D "$PGDATA" -U postgres --auth=trust --encoding=UTF8 --locale=C \
    >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; exit 1; }

# A port nothing listens on; if the server still cannot bind it (taken meanwhile), another.
port_is_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
started=
for _ in 1 2 3 4 5; do
    port=$((20000 + RANDOM % 40000))
    port_is_free "$port" || continue
    cat >>"$PGDATA/postgresql.conf" <<EOF

# with-postgres.sh: a private server for tests, on loopback (the last setting of a key wins).
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$dir/socket'
max_connections = 100
fsync = off
synchronous_commit = off
full_page_writes = off
EOF
    if owner "$pg_ctl" -D "$PGDATA" -l "$log" -w -t 60 start >/dev/null; then
        started=1
        break
    fi
done
if [ -z "$started" ]; then
    echo "with-postgres: the server did not start; its log:" >&2
    cat "$log" >&2 || true
    exit 1
fi
owner "$bindir/createdb" -h 127.0.0.1 -p "$port" -U postgres retry_jitter

export DATABASE_URL=postgres://postgres@127.0.0.1:$port/retry_jitter
export PG_CTL=$pg_ctl PG_LOG=$log PG_CTL_AS="${as_owner[*]}"
echo "with-postgres: PostgreSQL $("$bindir/postgres" --version | awk "{print \$3}") at $DATABASE_URL" >&2

set +e
"$@"
status=$?
set -e
exit "$status"
