#!/usr/bin/env bash
# Starts the servers the tests need, each throwaway and on a free loopback port: a PostgreSQL
# (initdb into a temporary directory) and a NATS server with JetStream. Exports their URLs as
# MEMLEDGER_TEST_PG_URL and MEMLEDGER_TEST_NATS_URL and stops both when the sourcing shell exits.
# The PostgreSQL also serves TLS with a certificate for 127.0.0.1 and localhost signed by a
# throwaway certificate authority (MEMLEDGER_TEST_PG_CA; MEMLEDGER_TEST_PG_OTHER_CA is another
# one, which signed nothing the server shows); plain connections work as before.
# Sourced by test.sh; installs postgresql-15, nats-server and openssl from Debian's packages when
# missing.
set -euo pipefail

PG_BIN=/usr/lib/postgresql/15/bin
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
services_apt_updated=""
services_install() {
  if [ -z "$services_apt_updated" ]; then
    $SUDO apt-get update -qq
    services_apt_updated=1
  fi
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "$@" >/dev/null
}
if [ ! -x "$PG_BIN/postgres" ]; then
  echo "services: installing postgresql-15 for the shared-ledger tests…" >&2
  services_install postgresql-15
fi
if ! command -v nats-server >/dev/null 2>&1; then
  echo "services: installing nats-server for the stream tests…" >&2
  services_install nats-server
fi

if ! command -v openssl >/dev/null 2>&1; then
  echo "services: installing openssl for the TLS tests' certificates…" >&2
  services_install openssl
fi

# A loopback port nothing listens on (one that refuses a connection).
free_port() {
  local port
  while :; do
    port=$(( 20000 + RANDOM % 40000 ))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return
    fi
  done
}

SERVICES_DIR=$(mktemp -d /tmp/memledger-services.XXXXXX)
chmod 755 "$SERVICES_DIR"
services_stop() {
  if [ -n "${SERVICES_PG_DATA:-}" ] && [ -f "$SERVICES_PG_DATA/postmaster.pid" ]; then
    $SERVICES_AS "$PG_BIN/pg_ctl" -D "$SERVICES_PG_DATA" -m immediate stop >/dev/null 2>&1 || true
  fi
  if [ -n "${SERVICES_NATS_PID:-}" ]; then
    kill "$SERVICES_NATS_PID" 2>/dev/null || true
    wait "$SERVICES_NATS_PID" 2>/dev/null || true
  fi
  rm -rf "$SERVICES_DIR"
}
trap services_stop EXIT
trap "exit 130" INT TERM

# initdb refuses root: as root, the cluster belongs to the postgres user.
SERVICES_AS=""
if [ "$(id -u)" -eq 0 ]; then
  id postgres >/dev/null 2>&1 || useradd --system --no-create-home postgres
  chown postgres "$SERVICES_DIR"
  SERVICES_AS="runuser -u postgres --"
fi
SERVICES_PG_DATA="$SERVICES_DIR/pg"
pg_port=$(free_port)

# The TLS certificates: two certificate authorities (P-256 keys, valid two days) and the server's
# certificate, signed by the first. The server's key must belong to the server's user, mode 0600.
tls_dir="$SERVICES_DIR/tls"
mkdir -p "$tls_dir"
cat >"$tls_dir/openssl.cnf" <<'CNF'
[req]
distinguished_name = dn
prompt = no
[dn]
CN = memledger throwaway test CA
[ca]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
[server]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = DNS:localhost, IP:127.0.0.1
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
CNF
services_openssl() {
  openssl "$@" >>"$tls_dir/openssl.log" 2>&1 || { cat "$tls_dir/openssl.log" >&2; exit 1; }
}
for ca in ca other-ca; do
  services_openssl req -x509 -config "$tls_dir/openssl.cnf" -extensions ca -newkey ec \
    -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj "/CN=memledger throwaway $ca" \
    -keyout "$tls_dir/$ca.key" -out "$tls_dir/$ca.crt"
done
services_openssl req -new -config "$tls_dir/openssl.cnf" -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
  -subj "/CN=localhost" -keyout "$tls_dir/server.key" -out "$tls_dir/server.csr"
services_openssl x509 -req -in "$tls_dir/server.csr" -CA "$tls_dir/ca.crt" -CAkey "$tls_dir/ca.key" \
  -CAcreateserial -days 2 -extfile "$tls_dir/openssl.cnf" -extensions server -out "$tls_dir/server.crt"
chmod 600 "$tls_dir/server.key"
chmod 644 "$tls_dir/ca.crt" "$tls_dir/other-ca.crt" "$tls_dir/server.crt"
chmod 755 "$tls_dir"
if [ -n "$SERVICES_AS" ]; then chown postgres "$tls_dir/server.key"; fi
pg_tls="-c ssl=on -c ssl_cert_file=$tls_dir/server.crt -c ssl_key_file=$tls_dir/server.key"

$SERVICES_AS "$PG_BIN/initdb" -D "$SERVICES_PG_DATA" -U postgres -A trust --no-sync >"$SERVICES_DIR/initdb.log" 2>&1 \
  || { cat "$SERVICES_DIR/initdb.log" >&2; exit 1; }
$SERVICES_AS "$PG_BIN/pg_ctl" -D "$SERVICES_PG_DATA" -l "$SERVICES_PG_DATA/server.log" -w \
  -o "-p $pg_port -k $SERVICES_DIR -c listen_addresses=127.0.0.1 -c max_connections=300 $pg_tls" start >/dev/null \
  || { cat "$SERVICES_PG_DATA/server.log" >&2; exit 1; }
export MEMLEDGER_TEST_PG_URL="postgres://postgres@127.0.0.1:$pg_port/postgres"
export MEMLEDGER_TEST_PG_CA="$tls_dir/ca.crt"
export MEMLEDGER_TEST_PG_OTHER_CA="$tls_dir/other-ca.crt"
# The tests that restart the server use these.
export MEMLEDGER_TEST_PG_CTL="$SERVICES_AS $PG_BIN/pg_ctl -D $SERVICES_PG_DATA"

nats_port=$(free_port)
mkdir -p "$SERVICES_DIR/nats"
nats-server -js -a 127.0.0.1 -p "$nats_port" -sd "$SERVICES_DIR/nats" >"$SERVICES_DIR/nats.log" 2>&1 &
SERVICES_NATS_PID=$!
for _ in $(seq 1 100); do
  if (exec 3<>"/dev/tcp/127.0.0.1/$nats_port") 2>/dev/null; then break; fi
  sleep 0.1
done
export MEMLEDGER_TEST_NATS_URL="nats://127.0.0.1:$nats_port"
echo "services: PostgreSQL at $MEMLEDGER_TEST_PG_URL, NATS at $MEMLEDGER_TEST_NATS_URL" >&2
