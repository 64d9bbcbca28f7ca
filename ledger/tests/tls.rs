//! TLS to a real PostgreSQL (scripts/services.sh serves TLS with a certificate for 127.0.0.1 and
//! localhost signed by a throwaway certificate authority; each test makes its own database):
//! every session the shared ledger opens (its pool, its listening session, its exclusive turn) is
//! encrypted under each `sslmode` that asks for it and plain under `disable`; a certificate the
//! roots do not vouch for, or one for another host under `verify-full`, is refused with a clear
//! reason and nothing written; a server without TLS is refused under `require`.

use std::time::{Duration, Instant};

use memledger_ledger::pg_tls::PgConnect;
use memledger_ledger::postgres::PgLedger;
use memledger_ledger::*;
use memledger_schemas::samples::sample_bodies;
use memledger_tests::services::{PrivatePostgres, create_database, fresh_pg_database, service_url};

/// A fresh database on the throwaway server, and the certificate authorities of its TLS.
struct Server {
    admin: String,
    url: String,
    database: String,
    ca: String,
    other_ca: String,
}

fn fresh_server() -> Option<Server> {
    let url = fresh_pg_database()?;
    let what = "a throwaway PostgreSQL serving TLS";
    let ca = service_url("MEMLEDGER_TEST_PG_CA", what)?;
    let other_ca = service_url("MEMLEDGER_TEST_PG_OTHER_CA", what)?;
    let admin = service_url("MEMLEDGER_TEST_PG_URL", what)?;
    let database = url.rsplit('/').next().expect("a database path").to_string();
    Some(Server { admin, url, database, ca, other_ca })
}

/// The first column of each row `sql` returns on `url` (connected as the ledger connects).
fn column(url: &str, sql: &str) -> Vec<i64> {
    let connect = PgConnect::from_url(url).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let (client, connection) = connect.config.connect(connect.tls.clone()).await.unwrap();
        let driver = tokio::spawn(connection);
        let rows = client.query(sql, &[]).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
        drop(client);
        let _ = driver.await;
        rows.iter().map(|row| row.get(0)).collect()
    })
}

impl Server {
    fn with(&self, params: &str) -> String {
        format!("{}?{params}", self.url)
    }

    fn verify_full(&self, ca: &str) -> String {
        self.with(&format!("sslmode=verify-full&sslrootcert={ca}"))
    }

    /// The sessions on the test's database, once the ledger's listening session is among them:
    /// (encrypted, all).
    fn sessions(&self) -> (i64, i64) {
        let count = |filter: &str| {
            column(
                &self.admin,
                &format!(
                    "SELECT count(*) FROM pg_stat_activity JOIN pg_stat_ssl USING (pid) \
                     WHERE datname = '{}' AND {filter}",
                    self.database
                ),
            )[0]
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while count("query LIKE 'LISTEN %'") == 0 {
            assert!(Instant::now() < deadline, "the ledger's listening session never connected");
            std::thread::sleep(Duration::from_millis(10));
        }
        (count("ssl"), count("true"))
    }

    /// The tables memledger made in the test's database.
    fn tables(&self) -> i64 {
        column(&self.url, "SELECT count(*) FROM pg_tables WHERE tablename LIKE 'memledger%'")[0]
    }
}

fn bodies(n: usize) -> Vec<NewEvent> {
    sample_bodies().into_iter().cycle().take(n).map(NewEvent::from).collect()
}

/// Append and read back through `pg`: the events are the ones appended.
fn round_trip(pg: &PgLedger) {
    let head = pg.head().unwrap().seq;
    let appended = match pg.append_group(head, vec![(CommandMeta::new("cli:test"), bodies(3))]).unwrap().remove(0) {
        Appended::Committed(events) => events,
        other => panic!("expected a commit, got {other:?}"),
    };
    assert_eq!(pg.read(head + 1, 10).unwrap(), appended);
}

/// Why connecting to `url` failed (it must), as the CLI prints it.
fn refused(url: &str) -> String {
    match PgLedger::connect(url) {
        Ok(_) => panic!("{url} connected"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn verify_full_with_the_servers_authority_encrypts_every_session() {
    let Some(server) = fresh_server() else { return };
    let url = server.verify_full(&server.ca);
    let pg = PgLedger::connect(&url).unwrap();
    round_trip(&pg);
    let turn = pg.exclusive_turn().unwrap();
    let (encrypted, all) = server.sessions();
    assert!(all >= 2, "the pool's and the listening session: {all}");
    assert_eq!(encrypted, all, "every session of the ledger is encrypted");
    drop(turn);
    // The certificate names localhost too.
    let by_name = PgLedger::connect(&url.replacen("127.0.0.1", "localhost", 1)).unwrap();
    assert_eq!(by_name.head().unwrap(), pg.head().unwrap());
    assert!(by_name.verify().unwrap().ok);
}

#[test]
fn require_encrypts_without_a_root_certificate_and_disable_does_not() {
    let Some(server) = fresh_server() else { return };
    let pg = PgLedger::connect(&server.with("sslmode=require")).unwrap();
    round_trip(&pg);
    let (encrypted, all) = server.sessions();
    assert_eq!(encrypted, all);
    drop(pg);

    let Some(server) = fresh_server() else { return };
    let pg = PgLedger::connect(&server.with("sslmode=disable")).unwrap();
    round_trip(&pg);
    let (encrypted, all) = server.sessions();
    assert!(all >= 2);
    assert_eq!(encrypted, 0, "sslmode=disable is plain TCP");
    drop(pg);

    // libpq's default, prefer, encrypts when the server offers TLS.
    let Some(server) = fresh_server() else { return };
    let pg = PgLedger::connect(&server.url).unwrap();
    round_trip(&pg);
    let (encrypted, all) = server.sessions();
    assert_eq!(encrypted, all);
}

#[test]
fn an_untrusted_certificate_is_refused_clearly_and_nothing_is_written() {
    let Some(server) = fresh_server() else { return };
    // A password in the URL is never printed.
    let with_password = |url: String| url.replacen("postgres@", "postgres:sekrit-pw@", 1);
    let message = refused(&with_password(server.verify_full(&server.other_ca)));
    assert!(
        message.contains(&format!(
            "the server's TLS certificate is not signed by a certificate authority in {}",
            server.other_ca
        )) && message.contains("(sslmode=verify-full)"),
        "{message}"
    );
    assert!(!message.contains("sekrit-pw"), "{message}");
    // verify-ca checks the chain as well.
    let message = refused(&server.with(&format!("sslmode=verify-ca&sslrootcert={}", server.other_ca)));
    assert!(message.contains("is not signed by") && message.contains("(sslmode=verify-ca)"), "{message}");
    // A root certificate file makes require check the chain, as libpq does.
    let message = refused(&server.with(&format!("sslmode=require&sslrootcert={}", server.other_ca)));
    assert!(message.contains("is not signed by"), "{message}");
    // The public roots do not vouch for a throwaway authority's certificate either.
    if !std::env::var_os("HOME").is_some_and(|home| std::path::Path::new(&home).join(".postgresql/root.crt").exists()) {
        let message = refused(&server.with("sslmode=verify-full"));
        assert!(message.contains("is not signed by a public certificate authority (webpki-roots)"), "{message}");
    }
    // A root certificate file that cannot be read is refused before anything connects.
    let message = refused(&server.with("sslmode=verify-full&sslrootcert=/nonexistent/root.crt"));
    assert!(message.contains("sslrootcert /nonexistent/root.crt: "), "{message}");
    assert_eq!(server.tables(), 0, "nothing was written");
}

#[test]
fn verify_full_checks_the_host_name_and_verify_ca_does_not() {
    let Some(server) = fresh_server() else { return };
    // Connect to 127.0.0.1 while naming a host the certificate is not for.
    let elsewhere = |mode: &str| {
        server.url.replacen("127.0.0.1", "db.wrong.invalid", 1)
            + &format!("?hostaddr=127.0.0.1&sslmode={mode}&sslrootcert={}", server.ca)
    };
    let message = refused(&elsewhere("verify-full"));
    assert!(
        message.contains("the server's TLS certificate does not name the host connected to")
            && message.contains("db.wrong.invalid")
            && message.contains("(sslmode=verify-full checks the name"),
        "{message}"
    );
    assert_eq!(server.tables(), 0, "nothing was written");
    let pg = PgLedger::connect(&elsewhere("verify-ca")).unwrap();
    round_trip(&pg);
    let (encrypted, all) = server.sessions();
    assert_eq!(encrypted, all);
}

#[test]
fn a_server_without_tls_is_refused_under_require_and_used_under_prefer() {
    let Some(pg) = PrivatePostgres::start() else { return };
    let url = create_database(&pg.admin_url());
    let message = refused(&format!("{url}?sslmode=require"));
    assert!(message.contains("cannot connect over TLS (sslmode=require)"), "{message}");
    assert!(message.contains("does not support TLS"), "{message}");
    let ledger = PgLedger::connect(&format!("{url}?sslmode=prefer")).unwrap();
    round_trip(&ledger);
}
