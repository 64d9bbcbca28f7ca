//! Traces (docs/adr/0039-traces.md): when `OTEL_EXPORTER_OTLP_ENDPOINT` (or
//! `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set, the spans the commands, the save pipeline,
//! recall and the model calls open (`tracing`) are exported over OTLP/HTTP (protobuf) by
//! OpenTelemetry's SDK, batched on a thread of its own; unset, no subscriber is installed and a
//! span costs a check of a static. Spans carry ids, scopes, outcomes and counts, never a
//! memory's text.

use std::sync::OnceLock;

use bytes::Bytes;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_subscriber::layer::SubscriberExt;

/// The exporter, while traces are on: dropped (flushing what is batched) when the process ends.
pub struct Traces {
    provider: SdkTracerProvider,
}

impl Drop for Traces {
    fn drop(&mut self) {
        // What is batched is sent before the process exits; an unreachable collector costs at
        // most the exporter's timeout.
        if let Err(e) = self.provider.shutdown() {
            eprintln!("memledger: traces: {e}");
        }
    }
}

/// Whether the environment asks for traces: an OTLP endpoint is set, and the SDK is not
/// disabled (`OTEL_SDK_DISABLED=true`, `OTEL_TRACES_EXPORTER=none`).
fn wanted() -> bool {
    let set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty());
    let is = |name: &str, value: &str| std::env::var(name).is_ok_and(|v| v.trim().eq_ignore_ascii_case(value));
    (set("OTEL_EXPORTER_OTLP_ENDPOINT") || set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))
        && !is("OTEL_SDK_DISABLED", "true")
        && !is("OTEL_TRACES_EXPORTER", "none")
}

/// Install the exporter when the environment asks for traces; `None` otherwise (and when it
/// cannot be built, which is said on stderr: a command never fails for its traces).
pub fn init() -> Option<Traces> {
    if !wanted() {
        return None;
    }
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .with_http_client(Client::default())
        .build();
    let exporter = match exporter {
        Ok(exporter) => exporter,
        Err(e) => {
            eprintln!("memledger: traces are off: {e}");
            return None;
        }
    };
    let mut resource = Resource::builder();
    if std::env::var_os("OTEL_SERVICE_NAME").is_none() {
        resource = resource.with_service_name("memledger");
    }
    let provider = SdkTracerProvider::builder().with_batch_exporter(exporter).with_resource(resource.build()).build();
    let tracer = provider.tracer("memledger");
    let subscriber = tracing_subscriber::registry().with(tracing_opentelemetry::layer().with_tracer(tracer));
    if tracing::subscriber::set_global_default(subscriber).is_err() {
        return None;
    }
    Some(Traces { provider })
}

/// How long one export may take (OTLP's default).
const EXPORT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// The exporter's HTTP client: reqwest (the models' client, rustls), on a runtime of its own,
/// made on the SDK's export thread at its first request (never inside a command's runtime).
#[derive(Debug, Default)]
struct Client {
    inner: OnceLock<Result<(reqwest::Client, tokio::runtime::Runtime), String>>,
}

#[async_trait::async_trait]
impl opentelemetry_http::HttpClient for Client {
    async fn send_bytes(
        &self,
        request: http::Request<Bytes>,
    ) -> Result<http::Response<Bytes>, opentelemetry_http::HttpError> {
        let made = self.inner.get_or_init(|| {
            let runtime =
                tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
            let client = reqwest::Client::builder().timeout(EXPORT_TIMEOUT).build().map_err(|e| e.to_string())?;
            Ok((client, runtime))
        });
        let (client, runtime) = made.as_ref().map_err(|e| e.clone())?;
        let (parts, body) = request.into_parts();
        let mut call = client.request(parts.method, parts.uri.to_string()).body(body);
        for (name, value) in &parts.headers {
            call = call.header(name, value);
        }
        let (status, headers, body) = runtime.block_on(async {
            let response = call.send().await?;
            let (status, headers) = (response.status(), response.headers().clone());
            Ok::<_, reqwest::Error>((status, headers, response.bytes().await?))
        })?;
        let mut answer = http::Response::builder().status(status);
        for (name, value) in &headers {
            answer = answer.header(name, value);
        }
        Ok(answer.body(body)?)
    }
}
