//! Where a server lives, and how it is named without its secrets.

use std::fmt;

use crate::header::Header;
use crate::options::Options;
use crate::secrets::Secrets;

/// Where a server lives: what `lint --stdio -- CMD ARGS` and `lint --url URL` name.
#[derive(Debug, Clone)]
pub enum Target {
    /// A command started as a child process.
    Stdio {
        /// The program (looked up in `PATH` when it has no slash).
        program: String,
        /// Its arguments.
        args: Vec<String>,
    },
    /// A Streamable HTTP endpoint.
    Http {
        /// The endpoint URL (`http://` or `https://`).
        url: String,
        /// Headers sent with every request.
        headers: Vec<Header>,
    },
}

impl Target {
    /// The values to hide in everything printed about this target: its header values, a URL's
    /// password and query, the environment given in `options` and the further secrets listed
    /// there.
    pub fn secrets(&self, options: &Options) -> Secrets {
        let mut secrets = Secrets::new(options.env.iter().map(|(_, v)| v.clone()));
        for value in &options.secrets {
            secrets.add(value.clone());
        }
        if let Target::Http { url, headers } = self {
            for header in headers {
                secrets.add(header.value().to_string());
            }
            if let Some(password) = url_password(url) {
                secrets.add(password);
            }
            // The query as written (`api_key=…`), should a message quote the URL whole.
            if let Some((_, query)) = url.split_once('?') {
                secrets.add(query.split('#').next().unwrap_or_default().to_owned());
            }
        }
        secrets
    }
}

/// Shows the command line (shell-quoted) or the URL as [`shown_url`] reduces it, never header
/// values: suitable as the `file` of a diagnostic.
impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Stdio { program, args } => {
                write!(f, "{}", shell_quote(program))?;
                for arg in args {
                    write!(f, " {}", shell_quote(arg))?;
                }
                Ok(())
            }
            Target::Http { url, .. } => f.write_str(&shown_url(url)),
        }
    }
}

fn shell_quote(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// The password of `scheme://user:password@host`, if any.
fn url_password(url: &str) -> Option<String> {
    let rest = &url[url.find("://")? + 3..];
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    let userinfo = &authority[..authority.rfind('@')?];
    userinfo.split_once(':').map(|(_, pw)| pw.to_string())
}

/// `url` reduced to scheme, host, port and path: no user, password, query or fragment, which
/// may hold credentials (`?api_key=…`). How every URL given to the tool is shown.
pub fn shown_url(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let end = rest.find(['?', '#']).unwrap_or(rest.len());
    let rest = &rest[..end];
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let (authority, path) = rest.split_at(authority_end);
    let host = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    if scheme.is_empty() {
        format!("{host}{path}")
    } else {
        format!("{scheme}://{host}{path}")
    }
}
