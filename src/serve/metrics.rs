//! The webhook's Prometheus metrics (`GET /metrics`, text exposition format), kept with
//! `prometheus-client`.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct RequestLabels {
    pub endpoint: &'static str,
    pub verdict: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct EndpointLabels {
    pub endpoint: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct RuleLabels {
    pub rule: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct ResultLabels {
    pub result: &'static str,
}

pub(crate) struct Metrics {
    registry: Registry,
    pub requests: Family<RequestLabels, Counter>,
    pub findings: Family<RuleLabels, Counter>,
    pub latency: Family<EndpointLabels, Histogram>,
    pub config_reloads: Family<ResultLabels, Counter>,
    pub certificate_reloads: Family<ResultLabels, Counter>,
    /// 1 while rules and config are loaded and reviews are answered.
    pub ready: Gauge,
    /// Reviews whose request head arrived and whose answer is not yet written: what a drain
    /// waits for.
    pub in_flight: Gauge,
}

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::with_prefix("winguard");
        let requests = Family::<RequestLabels, Counter>::default();
        registry.register(
            "admission_requests",
            "Admission reviews answered, by endpoint and verdict (allowed, exempt, warned, would-deny in audit mode, denied, patched, invalid)",
            requests.clone(),
        );
        let findings = Family::<RuleLabels, Counter>::default();
        registry.register(
            "admission_findings",
            "Admission reviews in which a rule found something, by rule (a rule counts once per review)",
            findings.clone(),
        );
        // 25 µs to ~0.8 s: a review is worked out in memory, with no I/O, so the buckets start in
        // microseconds; the API server gives up at the webhook's timeoutSeconds.
        let latency = Family::<EndpointLabels, Histogram>::new_with_constructor(|| {
            Histogram::new(exponential_buckets(0.000_025, 2.0, 16))
        });
        registry.register(
            "admission_duration_seconds",
            "Time to answer an admission review, body read to response",
            latency.clone(),
        );
        let config_reloads = Family::<ResultLabels, Counter>::default();
        registry.register(
            "config_reloads",
            "Reloads of the config file after it changed, by result (a failed one keeps the last good config)",
            config_reloads.clone(),
        );
        let certificate_reloads = Family::<ResultLabels, Counter>::default();
        registry.register(
            "certificate_reloads",
            "Reloads of the TLS certificate and key after they changed, by result",
            certificate_reloads.clone(),
        );
        let ready = Gauge::default();
        registry.register("ready", "1 once rules and config are loaded", ready.clone());
        let in_flight = Gauge::default();
        registry.register(
            "admission_requests_in_flight",
            "Admission reviews being read or answered now",
            in_flight.clone(),
        );
        Metrics {
            registry,
            requests,
            findings,
            latency,
            config_reloads,
            certificate_reloads,
            ready,
            in_flight,
        }
    }
}

/// Counts one review in [`Metrics::in_flight`] while it lives, however its handler returns.
pub(crate) struct InFlight(Gauge);

impl InFlight {
    pub(crate) fn enter(gauge: &Gauge) -> Self {
        gauge.inc();
        InFlight(gauge.clone())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.dec();
    }
}

impl Metrics {
    /// The text exposition format.
    pub(crate) fn encode(&self) -> String {
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }
}
