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
    /// The values to hide in everything printed about this target: its header values, the
    /// environment given in `options` and the further secrets listed there.
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
        }
        secrets
    }
}

/// Shows the command line (shell-quoted) or the URL (without any password), never header values:
/// suitable as the `file` of a diagnostic.
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
            Target::Http { url, .. } => f.write_str(&redact_url(url)),
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

/// Replaces the password of `scheme://user:password@host` with `***`.
pub(crate) fn redact_url(url: &str) -> String {
    let Some(scheme_end) = url.find("://") else {
        return url.to_string();
    };
    let rest = &url[scheme_end + 3..];
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..authority_end];
    match authority.rfind('@') {
        Some(at) => match authority[..at].split_once(':') {
            Some((user, _)) => {
                format!("{}{user}:***{}", &url[..scheme_end + 3], &rest[at..])
            }
            None => url.to_string(),
        },
        None => url.to_string(),
    }
}
