//! `traces [N] [ROUNDS]`: what traces cost a save and a recall (docs/adr/0039-traces.md). Rounds
//! alternate on one store: off (the layer filtered out, an upper bound on a process without a
//! subscriber, as when `OTEL_EXPORTER_OTLP_ENDPOINT` is unset) and on (the OpenTelemetry layer and
//! SDK the binary installs, its batch processor handing every span to an exporter that drops it:
//! the cost in the process, not the network's). Each
//! round saves N fresh memories and recalls N questions; the figures are the medians per
//! operation over the rounds of each kind.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use memledger_engine::{Memledger, OpenOptions, SaveRequest};
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{SdkTracerProvider, SpanData, SpanExporter};
use tracing_subscriber::Layer as _;
use tracing_subscriber::layer::SubscriberExt;

use crate::corpus::Corpus;

/// An exporter that counts the spans it is handed and drops them.
#[derive(Debug, Default)]
struct Dropping(Arc<AtomicUsize>);

impl SpanExporter for Dropping {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        self.0.fetch_add(batch.len(), Ordering::Relaxed);
        Ok(())
    }
}

fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    xs[xs.len() / 2]
}

pub fn run(n: usize, rounds: usize, seed: u64) {
    // The binary's subscriber, installed once; the rounds turn its layer on and off. "Off" rounds
    // still ask, for each span, whether the layer is on (a process without
    // OTEL_EXPORTER_OTLP_ENDPOINT has no subscriber and never asks): their figure is an upper
    // bound on the cost of traces off.
    static ON: AtomicBool = AtomicBool::new(false);
    let exported = Arc::new(AtomicUsize::new(0));
    let provider = SdkTracerProvider::builder().with_batch_exporter(Dropping(exported.clone())).build();
    let layer = tracing_opentelemetry::layer().with_tracer(provider.tracer("memledger")).with_filter(
        tracing_subscriber::filter::DynFilterFn::new(|_, _| ON.load(Ordering::Relaxed))
            .with_callsite_filter(|_| tracing::subscriber::Interest::sometimes()),
    );
    tracing::subscriber::set_global_default(tracing_subscriber::registry().with(layer)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ml = Memledger::open(dir.path(), &OpenOptions::default()).unwrap();
    let mut corpus = Corpus::new(seed);
    // A store to save into and recall from: 5,000 memories first.
    let mut i = 0;
    let mut next = |corpus: &mut Corpus| {
        i += 1;
        let m = corpus.next_memory(i);
        SaveRequest {
            text: m.text,
            memory_type: Some(m.memory_type.into()),
            scope: Some(m.scope),
            ..Default::default()
        }
    };
    for _ in 0..5_000 {
        ml.save(next(&mut corpus), "bench:traces").unwrap();
    }

    let (mut off, mut on) = ((Vec::new(), Vec::new()), (Vec::new(), Vec::new()));
    println!("{rounds} rounds of each, alternated; {n} saves and {n} recalls a round, on a store of 5,000 memories");
    for round in 0..rounds * 2 {
        let traced = round % 2 == 1;
        let requests: Vec<SaveRequest> = (0..n).map(|_| next(&mut corpus)).collect();
        let questions: Vec<String> =
            requests.iter().map(|r| r.text.split(' ').take(5).collect::<Vec<_>>().join(" ")).collect();
        let work = || {
            let started = Instant::now();
            for r in requests {
                ml.save(r, "bench:traces").unwrap();
            }
            let saves = started.elapsed() / n as u32;
            let started = Instant::now();
            for q in &questions {
                ml.recall(q, None, None, 10).unwrap();
            }
            (saves, started.elapsed() / n as u32)
        };
        ON.store(traced, Ordering::Relaxed);
        let (save, recall) = work();
        ON.store(false, Ordering::Relaxed);
        let (saves, recalls) = if traced { &mut on } else { &mut off };
        saves.push(save);
        recalls.push(recall);
        println!(
            "  round {:>2} {:<3}  save {:>8.1?}  recall {:>8.1?}",
            round + 1,
            if traced { "on" } else { "off" },
            save,
            recall
        );
    }
    provider.force_flush().unwrap();
    let spans = exported.load(Ordering::Relaxed);
    println!("spans exported while on: {spans} ({:.1} per operation)", spans as f64 / (2 * n * rounds) as f64);
    println!("median per save:   off {:>8.1?}  on {:>8.1?}", median(off.0), median(on.0));
    println!("median per recall: off {:>8.1?}  on {:>8.1?}", median(off.1), median(on.1));
    let _ = provider.shutdown();
}
