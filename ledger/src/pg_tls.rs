//! TLS to PostgreSQL with rustls, set up from the URL as libpq reads it: `sslmode` and
//! `sslrootcert`, which tokio-postgres does not read itself (it knows `disable`, `prefer` and
//! `require` and checks nothing). Every connection memledger opens to PostgreSQL is made from one
//! [`PgConnect`], so the pool, the listening session and the benchmarks' clients are set up alike
//! (docs/adr/0024-tls-to-postgresql.md, docs/shared-ledger.md).

use std::borrow::Cow;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use tokio_postgres::config::Host;
use tokio_postgres_rustls::MakeRustlsConnect;

/// libpq's `sslmode`, as memledger honours it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SslMode {
    /// Plain TCP.
    Disable,
    /// TLS when the server offers it, plain TCP when it refuses (libpq's default).
    Prefer,
    /// TLS or no connection.
    Require,
    /// TLS, the server's certificate chain verified against the roots.
    VerifyCa,
    /// As `VerifyCa`, and the certificate must name the host connected to.
    VerifyFull,
}

impl SslMode {
    fn parse(value: &str) -> Option<SslMode> {
        Some(match value {
            "disable" => SslMode::Disable,
            "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            SslMode::Disable => "disable",
            SslMode::Prefer => "prefer",
            SslMode::Require => "require",
            SslMode::VerifyCa => "verify-ca",
            SslMode::VerifyFull => "verify-full",
        }
    }
}

impl fmt::Display for SslMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a server's certificate is checked against.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Roots {
    /// Nothing: the session is encrypted, the certificate is not checked (the handshake's
    /// signature by the certificate's key still is).
    Unchecked,
    /// The certificates of a PEM file: `sslrootcert=PATH`, or libpq's `~/.postgresql/root.crt`.
    File(PathBuf),
    /// The public roots webpki-roots ships: `sslrootcert=system`, or a verify mode with no file.
    Public,
}

impl fmt::Display for Roots {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Roots::Unchecked => f.write_str("no certificate authority (the certificate is not checked)"),
            Roots::File(path) => write!(f, "a certificate authority in {}", path.display()),
            Roots::Public => f.write_str("a public certificate authority (webpki-roots)"),
        }
    }
}

/// How to reach one PostgreSQL: tokio-postgres's settings and the TLS connector, from a URL.
#[derive(Clone)]
pub struct PgConnect {
    pub config: tokio_postgres::Config,
    pub tls: MakeRustlsConnect,
    /// The `sslmode` asked for (`prefer` when the URL names none).
    pub mode: SslMode,
    /// What the server's certificate is checked against.
    pub roots: Roots,
}

impl PgConnect {
    /// Read `url` (a `postgres://` or `postgresql://` URL, or tokio-postgres's `key=value`
    /// form, which is handed on as it is); libpq's `~/.postgresql/root.crt` is the default
    /// `sslrootcert`. The reason, when the URL or its root certificate file is unusable.
    pub fn from_url(url: &str) -> Result<PgConnect, String> {
        let home_root = std::env::var_os("HOME").map(|home| Path::new(&home).join(".postgresql").join("root.crt"));
        PgConnect::with_default_root(url, home_root.filter(|path| path.is_file()))
    }

    /// As [`PgConnect::from_url`], with `default_root` the file a URL without `sslrootcert`
    /// trusts.
    pub fn with_default_root(url: &str, default_root: Option<PathBuf>) -> Result<PgConnect, String> {
        let (rest, mode, root) = split_tls_params(url)?;
        let mut config: tokio_postgres::Config = rest.parse().map_err(|e| format!("not a PostgreSQL URL: {e}"))?;
        let mode = match (mode.as_deref(), root.as_deref()) {
            (Some(value), _) => SslMode::parse(value).ok_or_else(|| {
                format!("sslmode={value} is not one of disable, prefer, require, verify-ca, verify-full")
            })?,
            (None, Some("system")) => SslMode::VerifyFull,
            (None, _) => SslMode::Prefer,
        };
        let roots = match (mode, root) {
            (SslMode::Disable, _) => Roots::Unchecked,
            (SslMode::VerifyFull, Some(root)) if root == "system" => Roots::Public,
            (_, Some(root)) if root == "system" => {
                return Err(format!(
                    "sslrootcert=system needs sslmode=verify-full (libpq's rule), not sslmode={mode}: \
                     a public certificate authority vouches for a host name only"
                ));
            }
            (_, Some(path)) => Roots::File(PathBuf::from(path)),
            (_, None) => match default_root {
                Some(path) => Roots::File(path),
                None if matches!(mode, SslMode::VerifyCa | SslMode::VerifyFull) => Roots::Public,
                None => Roots::Unchecked,
            },
        };
        // As libpq: no TLS over a Unix socket, whatever sslmode says.
        let only_sockets = !config.get_hosts().is_empty()
            && config.get_hostaddrs().is_empty()
            && config.get_hosts().iter().all(|host| !matches!(host, Host::Tcp(_)));
        config.ssl_mode(match mode {
            SslMode::Disable => tokio_postgres::config::SslMode::Disable,
            _ if only_sockets => tokio_postgres::config::SslMode::Disable,
            SslMode::Prefer => tokio_postgres::config::SslMode::Prefer,
            SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull => tokio_postgres::config::SslMode::Require,
        });
        let tls = client_config(&roots, mode == SslMode::VerifyFull)?;
        Ok(PgConnect { config, tls: MakeRustlsConnect::new(tls), mode, roots })
    }

    /// A clear sentence for a connection that failed in its TLS set-up; `None` for any other
    /// error.
    pub fn explain(&self, e: &tokio_postgres::Error) -> Option<String> {
        let source = std::error::Error::source(e)?;
        let tls = source
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
            .and_then(|inner| inner.downcast_ref::<rustls::Error>());
        let mode = self.mode;
        Some(match tls {
            Some(rustls::Error::InvalidCertificate(
                CertificateError::UnknownIssuer | CertificateError::BadSignature,
            )) => {
                format!("the server's TLS certificate is not signed by {} (sslmode={mode})", self.roots)
            }
            Some(rustls::Error::InvalidCertificate(
                why @ (CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. }),
            )) => format!(
                "the server's TLS certificate does not name the host connected to: {why} \
                 (sslmode={mode} checks the name; verify-ca does not)"
            ),
            Some(other) => format!("TLS with the server failed (sslmode={mode}): {other}"),
            // tokio-postgres's own TLS failures (a server refusing TLS) say so in its message.
            None if e.to_string().contains("TLS") => format!("cannot connect over TLS (sslmode={mode}): {source}"),
            None => return None,
        })
    }
}

/// The URL without the parameters read here (`sslmode`, `sslrootcert`), and their decoded
/// values. A string that is not a URL is handed on whole.
fn split_tls_params(url: &str) -> Result<(String, Option<String>, Option<String>), String> {
    let whole = || Ok((url.to_string(), None, None));
    let Some(authority) = ["postgres://", "postgresql://"].iter().find_map(|p| url.starts_with(p).then_some(p.len()))
    else {
        return whole();
    };
    // tokio-postgres reads the credentials up to the first '@': a '?' before it is a password's.
    let after_credentials = url[authority..].find('@').map_or(authority, |i| authority + i + 1);
    let Some(query) = url[after_credentials..].find('?').map(|i| after_credentials + i) else {
        return whole();
    };
    let decode = |s: &str| -> Result<String, String> {
        percent_encoding::percent_decode_str(s)
            .decode_utf8()
            .map(Cow::into_owned)
            .map_err(|e| format!("not a PostgreSQL URL: a parameter is not UTF-8 ({e})"))
    };
    let (mut mode, mut root, mut kept) = (None, None, Vec::new());
    for pair in url[query + 1..].split('&') {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        match decode(key)?.as_str() {
            "sslmode" => mode = Some(decode(value)?),
            "sslrootcert" => root = Some(decode(value)?),
            _ => kept.push(pair),
        }
    }
    let mut rest = url[..query].to_string();
    if !kept.is_empty() {
        rest.push('?');
        rest.push_str(&kept.join("&"));
    }
    Ok((rest, mode, root))
}

/// rustls's settings for `roots`: ring's algorithms, TLS 1.2 and 1.3, no client certificate.
fn client_config(roots: &Roots, check_name: bool) -> Result<ClientConfig, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let store = match roots {
        Roots::Unchecked => None,
        Roots::Public => Some(RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.to_vec() }),
        Roots::File(path) => Some(read_roots(path)?),
    };
    let webpki = store
        .map(|store| {
            WebPkiServerVerifier::builder_with_provider(Arc::new(store), provider.clone())
                .build()
                .map_err(|e| format!("cannot use the root certificates: {e}"))
        })
        .transpose()?;
    let verifier = Arc::new(Verifier { webpki, check_name, provider: provider.clone() });
    Ok(ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("cannot set up TLS: {e}"))?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth())
}

/// The certificates of a PEM file; an unreadable file, or one with none, is refused.
fn read_roots(path: &Path) -> Result<RootCertStore, String> {
    let unusable = |why: String| format!("sslrootcert {}: {why}", path.display());
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| unusable(e.to_string()))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| unusable(format!("not a PEM file: {e}")))?;
    let mut store = RootCertStore::empty();
    let (added, _ignored) = store.add_parsable_certificates(certs);
    if added == 0 {
        return Err(unusable("holds no usable certificate (PEM, -----BEGIN CERTIFICATE-----)".into()));
    }
    Ok(store)
}

/// The server's certificate checked as the mode asks: its chain against the roots (when there
/// are any), its name when `check_name`; the handshake's signature always.
#[derive(Debug)]
struct Verifier {
    webpki: Option<Arc<WebPkiServerVerifier>>,
    check_name: bool,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for Verifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let Some(webpki) = &self.webpki else { return Ok(ServerCertVerified::assertion()) };
        // webpki checks the name after the chain: a name error means the chain was good.
        match webpki.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) if !self.check_name => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.provider.signature_verification_algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.provider.signature_verification_algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokio_mode(c: &PgConnect) -> tokio_postgres::config::SslMode {
        c.config.get_ssl_mode()
    }

    #[test]
    fn the_tls_parameters_are_read_and_the_rest_handed_on() {
        let (rest, mode, root) = split_tls_params(
            "postgres://me:p%3Fw@db:5432/ledger?sslmode=verify-full&application_name=a&sslrootcert=%2Ftmp%2Fca%20x.pem",
        )
        .unwrap();
        assert_eq!(rest, "postgres://me:p%3Fw@db:5432/ledger?application_name=a");
        assert_eq!((mode.as_deref(), root.as_deref()), (Some("verify-full"), Some("/tmp/ca x.pem")));
        let (rest, mode, root) = split_tls_params("postgres://db/ledger?sslmode=require").unwrap();
        assert_eq!((rest.as_str(), mode.as_deref(), root), ("postgres://db/ledger", Some("require"), None));
        // A '?' in the password is the password's.
        let (rest, mode, _) = split_tls_params("postgres://me:a?sslmode=disable@db/x").unwrap();
        assert_eq!((rest.as_str(), mode), ("postgres://me:a?sslmode=disable@db/x", None));
        assert_eq!(split_tls_params("host=db sslmode=require").unwrap().0, "host=db sslmode=require");
    }

    #[test]
    fn modes_and_roots_follow_libpq() {
        let c = PgConnect::with_default_root("postgres://db/x", None).unwrap();
        assert_eq!(
            (c.mode, c.roots.clone(), tokio_mode(&c)),
            (SslMode::Prefer, Roots::Unchecked, tokio_postgres::config::SslMode::Prefer)
        );
        let c = PgConnect::with_default_root("postgres://db/x?sslmode=verify-ca", None).unwrap();
        assert_eq!(
            (c.mode, c.roots.clone(), tokio_mode(&c)),
            (SslMode::VerifyCa, Roots::Public, tokio_postgres::config::SslMode::Require)
        );
        let c = PgConnect::with_default_root("postgres://db/x?sslrootcert=system", None).unwrap();
        assert_eq!((c.mode, c.roots.clone()), (SslMode::VerifyFull, Roots::Public));
        let c = PgConnect::with_default_root("postgres://db/x?sslmode=disable&sslrootcert=/missing.pem", None).unwrap();
        assert_eq!((c.roots.clone(), tokio_mode(&c)), (Roots::Unchecked, tokio_postgres::config::SslMode::Disable));
        // No TLS over a Unix socket.
        let c = PgConnect::with_default_root("postgres://me@%2Frun%2Fpostgresql/x?sslmode=require", None).unwrap();
        assert_eq!(tokio_mode(&c), tokio_postgres::config::SslMode::Disable);
    }

    #[test]
    fn unusable_settings_are_refused_with_a_reason() {
        let refused =
            |url: &str| PgConnect::with_default_root(url, None).err().unwrap_or_else(|| panic!("{url} accepted"));
        assert!(refused("postgres://db/x?sslmode=allow").contains("sslmode=allow is not one of"));
        assert!(refused("postgres://db/x?sslmode=require&sslrootcert=system").contains("needs sslmode=verify-full"));
        let missing = refused("postgres://db/x?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem");
        assert!(missing.starts_with("sslrootcert /nonexistent/ca.pem: "), "{missing}");
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "not a certificate\n").unwrap();
        let url = format!("postgres://db/x?sslmode=verify-ca&sslrootcert={}", empty.display());
        assert!(refused(&url).contains("holds no usable certificate"), "{}", refused(&url));
        // The default file is read only when the URL names none, and must be usable too.
        assert!(PgConnect::with_default_root("postgres://db/x?sslmode=require", Some(empty)).is_err());
    }
}
