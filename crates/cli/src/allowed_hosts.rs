//! `--allow-host`: the hosts to which a value of this environment may be sent. A registry
//! `server.json` or a client config names variables of our environment by name; such a value
//! goes into the URL or a header of an HTTP server only when its host is allowed here, so that a
//! file from someone else cannot send our variables to a host of its choosing.

use ureq::http::Uri;

/// One host of `--allow-host`: `HOST` (any port) or `HOST:PORT` (that port only), in lower case.
#[derive(Debug, Clone)]
pub struct AllowedHost {
    host: String,
    port: Option<u16>,
}

/// Parses `--allow-host HOST[:PORT]` (an IPv6 address in brackets).
pub fn allowed_host(text: &str) -> Result<AllowedHost, String> {
    let (host, port) = match text.rfind(':') {
        Some(colon) if !text[colon..].contains(']') => (&text[..colon], Some(&text[colon + 1..])),
        _ => (text, None),
    };
    let port = port.map(|p| p.parse::<u16>().ok().filter(|p| *p != 0));
    let name = |c: char| c.is_ascii_alphanumeric() || "-._".contains(c);
    let bracketed = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .is_some_and(|h| {
            !h.is_empty() && h.chars().all(|c| c.is_ascii_hexdigit() || ":.".contains(c))
        });
    match port {
        Some(None) => Err("expected HOST or HOST:PORT, the port a number from 1 to 65535".into()),
        _ if !(bracketed || !host.is_empty() && host.chars().all(name)) => {
            Err("expected HOST or HOST:PORT".into())
        }
        _ => Ok(AllowedHost {
            host: host.to_ascii_lowercase(),
            port: port.flatten(),
        }),
    }
}

/// The hosts of `--allow-host`.
#[derive(Debug, Clone, Default)]
pub struct AllowedHosts(Vec<AllowedHost>);

impl AllowedHosts {
    /// The hosts given.
    pub fn new(hosts: &[AllowedHost]) -> Self {
        Self(hosts.to_vec())
    }

    /// Whether `url` is an `http://` or `https://` URL whose host (and port, when the allowed
    /// entry names one) is allowed; read as the HTTP client reads it.
    pub fn allows(&self, url: &str) -> bool {
        endpoint(url).is_some_and(|(host, port)| {
            self.0
                .iter()
                .any(|a| a.host == host && a.port.is_none_or(|p| p == port))
        })
    }
}

/// The host (lower case) and port of an `http://` or `https://` URL.
fn endpoint(url: &str) -> Option<(String, u16)> {
    let uri = url.parse::<Uri>().ok()?;
    let default = match uri.scheme_str()? {
        "http" => 80,
        "https" => 443,
        _ => return None,
    };
    let host = uri.host().filter(|h| !h.is_empty())?.to_ascii_lowercase();
    Some((host, uri.port_u16().unwrap_or(default)))
}

/// Why an HTTP server is not contacted: `what` (naming the variable) would take its value from
/// this environment and send it to the host of `url`, which is not allowed. The host is named
/// unless it holds one of `values` (secret).
pub fn refusal(what: &str, url: &str, values: &[String]) -> String {
    let host = endpoint(url)
        .map(|(host, port)| format!("{host}:{port}"))
        .filter(|host| {
            !values
                .iter()
                .any(|v| !v.is_empty() && host.contains(&v.to_ascii_lowercase()))
        });
    let to = match host {
        Some(host) => format!("{host}, which --allow-host does not name"),
        None => "the server's host, which --allow-host does not name".to_owned(),
    };
    format!("{what} would take its value from this environment and send it to {to}: not contacted")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_is_allowed_as_the_client_reads_it() {
        let hosts = ["API.example", "127.0.0.1:8080"].map(|h| allowed_host(h).unwrap());
        let allowed = AllowedHosts::new(&hosts);
        assert!(allowed.allows("https://api.example/mcp"));
        assert!(allowed.allows("http://api.EXAMPLE:9/mcp?x=1"));
        assert!(allowed.allows("http://127.0.0.1:8080/mcp"));
        assert!(!allowed.allows("http://127.0.0.1:8081/mcp"));
        assert!(!allowed.allows("http://127.0.0.1/mcp"));
        assert!(!allowed.allows("https://api.example@evil.example/mcp"));
        assert!(!allowed.allows("https://evil.example/api.example"));
        assert!(!allowed.allows("https://api.example.evil.example/"));
        assert!(!allowed.allows("ftp://api.example/"));
        assert!(!allowed.allows("not a url"));
        let v6 = AllowedHosts::new(&[allowed_host("[::1]:9").unwrap()]);
        assert!(v6.allows("http://[::1]:9/mcp") && !v6.allows("http://[::1]:8/mcp"));
        for wrong in ["u@h", "", "h/p", "h:x", "h:0", ":9", "::1", "[]"] {
            assert!(allowed_host(wrong).is_err(), "{wrong}");
        }
    }

    #[test]
    fn a_refusal_never_names_a_host_holding_a_value() {
        let told = refusal("x", "http://Secret.example/", &["SECRET".into()]);
        assert!(!told.to_lowercase().contains("secret"), "{told}");
        let told = refusal("x", "http://h.example/SECRET", &["SECRET".into()]);
        assert!(told.contains("h.example:80"), "{told}");
    }
}
