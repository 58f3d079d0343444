//! `mcp-recovery audit export`: a verified journal as OpenTelemetry spans sent over OTLP/HTTP
//! (JSON encoding), or as CSV for a spreadsheet.

mod csv;
mod model;
mod otlp;
mod reader;

use std::io::{Read, Write};
use std::process::ExitCode;
use std::time::Duration;

use mcp_recovery_base::text::{REDACTED, escape_controls};
use mcp_recovery_journal::Broken;

use crate::Failure;
use crate::args::audit::{ExportArgs, ExportFormat};
use crate::inputs::Input;

/// Spans per request: the OpenTelemetry SDKs' default export batch.
const MAX_SPANS_PER_REQUEST: usize = 512;
/// Bytes of a collector's answer read (for `partialSuccess` or an error's reason).
const MAX_ANSWER_BYTES: u64 = 64 * 1024;

/// Runs `audit export`; `verify` checks the journal's bytes as `audit verify` does (with
/// `--key` and `--checkpoints`), giving the first fault.
pub fn run(
    args: &ExportArgs,
    verify: impl FnOnce(&Input, &[u8]) -> Result<Option<Broken>, Failure>,
) -> Result<ExitCode, Failure> {
    let csv = args.format == ExportFormat::Csv;
    if csv && args.otlp.is_some() {
        return Err(Failure::Usage(
            "--otlp sends spans: it cannot go with --format csv".into(),
        ));
    }
    if !csv && args.output.is_some() {
        return Err(Failure::Usage("--output needs --format csv".into()));
    }
    // Everything about the collector is checked before the journal is read.
    let collector = if csv {
        None
    } else {
        Some(Collector::from_args(args)?)
    };
    let input = Input::named(&args.journal);
    let shown = input.display();
    let bytes = input.read()?;
    let text = String::from_utf8_lossy(&bytes);
    if let Some(broken) = verify(&input, &bytes)? {
        let line = escape_controls(&broken.to_string()).into_owned();
        let mut stderr = std::io::stderr().lock();
        if !args.unverified {
            writeln!(
                stderr,
                "error: {shown}: broken at {line}: not exported (--unverified exports it anyway)"
            )?;
            return Ok(ExitCode::from(1));
        }
        writeln!(
            stderr,
            "warning: {shown}: broken at {line}: exported unverified"
        )?;
    }
    let (sessions, skipped, first) = reader::read(&text, args.unverified)
        .map_err(|e| Failure::Usage(format!("{shown}: {e}")))?;
    if let Some(first) = first {
        writeln!(
            std::io::stderr().lock(),
            "warning: {shown}: {skipped} line(s) left out, not records (the first: {})",
            escape_controls(&first)
        )?;
    }
    match collector {
        None => write_csv(&sessions, args, &shown),
        Some(collector) => {
            let (spans, requests) = collector.send(&sessions)?;
            writeln!(
                std::io::stdout().lock(),
                "{shown}: {spans} spans of {} sessions sent to {} in {requests} request(s)",
                sessions.len(),
                collector.shown
            )?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn write_csv(
    sessions: &[model::Session],
    args: &ExportArgs,
    shown: &str,
) -> Result<ExitCode, Failure> {
    let Some(path) = &args.output else {
        let mut out = std::io::BufWriter::new(std::io::stdout().lock());
        csv::write(sessions, &mut out)?;
        out.flush()?;
        return Ok(ExitCode::SUCCESS);
    };
    let failure = |source| Failure::WriteFile {
        path: escape_controls(&path.display().to_string()).into_owned(),
        source,
    };
    let mut replacing = crate::written::Replacing::start(path)?;
    let mut out = std::io::BufWriter::new(replacing.writer());
    let rows = csv::write(sessions, &mut out).map_err(failure)?;
    out.flush().map_err(failure)?;
    drop(out);
    replacing.commit()?;
    writeln!(
        std::io::stdout().lock(),
        "{shown}: {rows} rows written to {}",
        escape_controls(&path.display().to_string())
    )?;
    Ok(ExitCode::SUCCESS)
}

/// Where spans go, and how.
struct Collector {
    url: String,
    /// The URL without credentials, query or fragment, for messages.
    shown: String,
    headers: Vec<(String, String)>,
    timeout: Duration,
}

impl Collector {
    fn from_args(args: &ExportArgs) -> Result<Collector, Failure> {
        let env = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        let url = match (&args.otlp, env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")) {
            (Some(base), _) => traces_url(base),
            (None, Some(full)) => full.trim().to_owned(),
            (None, None) => match env("OTEL_EXPORTER_OTLP_ENDPOINT") {
                Some(base) => traces_url(&base),
                None => {
                    return Err(Failure::Usage(
                        "no collector: give --otlp URL, or set OTEL_EXPORTER_OTLP_ENDPOINT, or use --format csv".into(),
                    ));
                }
            },
        };
        // The environment's endpoint goes with the environment's protocol: JSON is all this
        // sends, and JSON to a gRPC or protobuf port would fail with a less clear error.
        let protocol = env("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
            .map(|p| ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", p))
            .or_else(|| {
                env("OTEL_EXPORTER_OTLP_PROTOCOL").map(|p| ("OTEL_EXPORTER_OTLP_PROTOCOL", p))
            });
        if let (None, Some((name, protocol))) = (&args.otlp, protocol)
            && protocol.trim() != "http/json"
        {
            return Err(Failure::Usage(format!(
                "{name} is {}: audit export sends OTLP over http/json only (give --otlp URL of an OTLP/HTTP endpoint)",
                escape_controls(&protocol)
            )));
        }
        let shown = escape_controls(&mcp_recovery_client::shown_url(&url)).into_owned();
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(Failure::Usage(format!(
                "the OTLP endpoint {shown} is not an http:// or https:// URL"
            )));
        }
        let mut headers: Vec<(String, String)> = Vec::new();
        for name in [
            "OTEL_EXPORTER_OTLP_HEADERS",
            "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
        ] {
            if let Some(list) = env(name) {
                for pair in list.split(',').filter(|p| !p.trim().is_empty()) {
                    let (key, value) = crate::live::parse_pair(pair.trim(), name, "K=V,K=V")?;
                    add_header(
                        &mut headers,
                        key.trim(),
                        &percent_decoded(value.trim()),
                        name,
                    )?;
                }
            }
        }
        for spec in &args.headers {
            let (key, value) = crate::live::parse_pair(spec, "--header", "K=V")?;
            add_header(&mut headers, &key, &value, "--header")?;
        }
        Ok(Collector {
            url,
            shown,
            headers,
            timeout: Duration::from_secs(args.timeout),
        })
    }

    /// POSTs the sessions' spans in batches; gives the number of spans and of requests.
    fn send(&self, sessions: &[model::Session]) -> Result<(usize, usize), Failure> {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(self.timeout))
            .http_status_as_error(false)
            // A redirect would carry the headers elsewhere.
            .max_redirects(0)
            .user_agent(concat!("mcp-recovery/", env!("CARGO_PKG_VERSION")))
            .build()
            .into();
        let (mut spans, mut requests) = (0, 0);
        let mut batch = Vec::with_capacity(MAX_SPANS_PER_REQUEST);
        let mut flush = |batch: &mut Vec<serde_json::Value>| -> Result<(), Failure> {
            if !batch.is_empty() {
                spans += batch.len();
                let body = otlp::request(std::mem::take(batch)).to_string();
                self.post(&agent, body.as_bytes())?;
                requests += 1;
            }
            Ok(())
        };
        otlp::each_span(sessions, |span| -> Result<(), Failure> {
            batch.push(span);
            if batch.len() == MAX_SPANS_PER_REQUEST {
                flush(&mut batch)?;
            }
            Ok(())
        })?;
        flush(&mut batch)?;
        Ok((spans, requests))
    }

    fn post(&self, agent: &ureq::Agent, body: &[u8]) -> Result<(), Failure> {
        let mut request = agent
            .post(&self.url)
            .header("Content-Type", "application/json");
        for (name, value) in &self.headers {
            request = request.header(name, value);
        }
        let mut response = request.send(body).map_err(|e| {
            self.failure(format!(
                "the request failed ({})",
                self.redacted(&e.to_string())
            ))
        })?;
        let status = response.status();
        let mut answer = String::new();
        // The answer only explains; a short or unreadable one is not a failure of its own.
        let _ = response
            .body_mut()
            .as_reader()
            .take(MAX_ANSWER_BYTES)
            .read_to_string(&mut answer);
        if !status.is_success() {
            let excerpt: String = answer.chars().take(200).collect();
            return Err(self.failure(format!(
                "HTTP {}{}",
                status.as_u16(),
                if excerpt.trim().is_empty() {
                    String::new()
                } else {
                    format!(": {}", self.redacted(excerpt.trim()))
                }
            )));
        }
        let rejected = mcp_recovery_model::json::from_str(&answer)
            .ok()
            .and_then(|v| {
                let n = &v["partialSuccess"]["rejectedSpans"];
                n.as_str()
                    .and_then(|s| s.parse::<u64>().ok())
                    .or_else(|| n.as_u64())
                    .filter(|&n| n > 0)
                    .map(|n| {
                        (
                            n,
                            v["partialSuccess"]["errorMessage"]
                                .as_str()
                                .map(str::to_owned),
                        )
                    })
            });
        if let Some((count, message)) = rejected {
            let why = message
                .map(|m| format!(": {}", self.redacted(&m)))
                .unwrap_or_default();
            return Err(self.failure(format!("the collector rejected {count} span(s){why}")));
        }
        Ok(())
    }

    fn failure(&self, reason: String) -> Failure {
        Failure::Usage(format!("OTLP export to {}: {reason}", self.shown))
    }

    /// `text` with every header value replaced by [`REDACTED`].
    fn redacted(&self, text: &str) -> String {
        let mut text = text.to_owned();
        for (_, value) in &self.headers {
            if !value.is_empty() {
                text = text.replace(value.as_str(), REDACTED);
            }
        }
        text
    }
}

/// `base/v1/traces`, as the OpenTelemetry exporter specification builds it from a base endpoint.
fn traces_url(base: &str) -> String {
    format!("{}/v1/traces", base.trim().trim_end_matches('/'))
}

/// Adds a header, replacing an earlier one of the same name; a value with an unsafe character
/// is refused without showing it.
fn add_header(
    headers: &mut Vec<(String, String)>,
    name: &str,
    value: &str,
    from: &str,
) -> Result<(), Failure> {
    if value.chars().any(mcp_recovery_base::text::is_unsafe_char) {
        return Err(Failure::Usage(format!(
            "{from}: the value of {name} holds a control or invisible character (the value is not shown, as it may hold a secret)"
        )));
    }
    headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
    headers.push((name.to_owned(), value.to_owned()));
    Ok(())
}

/// `%XX` escapes decoded (OTEL_EXPORTER_OTLP_HEADERS values are percent-encoded); anything
/// malformed is kept as written.
fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .filter(|h| h.iter().all(u8::is_ascii_hexdigit))
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::{percent_decoded, traces_url};

    #[test]
    fn endpoints_and_encoded_headers() {
        assert_eq!(traces_url("http://h:4318"), "http://h:4318/v1/traces");
        assert_eq!(
            traces_url("http://h:4318/base/"),
            "http://h:4318/base/v1/traces"
        );
        assert_eq!(percent_decoded("Basic%20abc%3D"), "Basic abc=");
        assert_eq!(percent_decoded("100%"), "100%");
        assert_eq!(percent_decoded("%zz"), "%zz");
    }
}
