//! Slack approvals: the Block Kit message a pending request is posted as, and the checks on an
//! interaction (a button press) that Slack sends back, signed as Slack documents it
//! (<https://api.slack.com/authentication/verifying-requests-from-slack>).

use hmac::{Hmac, Mac};
use mcp_recovery_base::text::{escape_controls, excerpt};
use serde_json::{Map, Value, json};
use sha2::Sha256;

/// How far (in seconds) an interaction's timestamp may be from now.
pub const MAX_AGE_SECS: u64 = 5 * 60;

/// The most characters of the arguments a message shows.
const MAX_ARGUMENT_CHARS: usize = 1500;

/// The signature headers of an interaction.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SlackHeaders {
    /// `X-Slack-Request-Timestamp`.
    pub timestamp: Option<String>,
    /// `X-Slack-Signature`.
    pub signature: Option<String>,
}

impl SlackHeaders {
    /// The headers of `request`.
    pub fn of(request: &tiny_http::Request) -> SlackHeaders {
        let header = |name: &str| {
            request
                .headers()
                .iter()
                .find(|h| h.field.as_str().as_str().eq_ignore_ascii_case(name))
                .map(|h| h.value.as_str().to_owned())
        };
        SlackHeaders {
            timestamp: header("X-Slack-Request-Timestamp"),
            signature: header("X-Slack-Signature"),
        }
    }
}

/// A button press: who, which button, on which request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Press {
    /// The Slack user id.
    pub user: String,
    /// `approve` or `deny`.
    pub verdict: &'static str,
    /// The request id the button carries.
    pub request: String,
}

/// Checks `body`'s signature at `now` (seconds since the epoch): the timestamp within
/// [`MAX_AGE_SECS`] of now, and `X-Slack-Signature` = `v0=` + the lowercase hex HMAC-SHA256 of
/// `v0:{timestamp}:{body}` keyed by `secret`, compared in constant time.
pub fn verify(secret: &[u8], headers: &SlackHeaders, body: &[u8], now: u64) -> Result<(), String> {
    let (Some(timestamp), Some(signature)) = (&headers.timestamp, &headers.signature) else {
        return Err("X-Slack-Request-Timestamp and X-Slack-Signature are required".into());
    };
    let at = (!timestamp.is_empty() && timestamp.len() <= 20)
        .then(|| timestamp.parse::<u64>().ok())
        .flatten()
        .filter(|_| timestamp.bytes().all(|b| b.is_ascii_digit()))
        .ok_or("X-Slack-Request-Timestamp is not a Unix time in seconds")?;
    if now.abs_diff(at) > MAX_AGE_SECS {
        return Err("X-Slack-Request-Timestamp is more than five minutes from now".into());
    }
    let digest = signature
        .strip_prefix("v0=")
        .and_then(lowercase_hex)
        .ok_or("X-Slack-Signature is not v0= and 64 lowercase hex digits")?;
    let mut mac = Hmac::<Sha256>::new_from_slice(secret)
        .map_err(|_| "the signing secret cannot key an HMAC".to_owned())?;
    mac.update(b"v0:");
    mac.update(timestamp.as_bytes());
    mac.update(b":");
    mac.update(body);
    mac.verify_slice(&digest)
        .map_err(|_| "the Slack signature does not verify".to_owned())
}

fn lowercase_hex(text: &str) -> Option<Vec<u8>> {
    let digit = |b: u8| match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        _ => None,
    };
    let bytes = text.as_bytes();
    if bytes.len() != 64 {
        return None;
    }
    bytes
        .chunks(2)
        .map(|pair| Some(digit(pair[0])? << 4 | digit(pair[1])?))
        .collect()
}

/// The button press of an interaction body (`payload=` and URL-encoded JSON, as Slack posts
/// `block_actions`).
pub fn parse(body: &[u8]) -> Result<Press, String> {
    let body = std::str::from_utf8(body).map_err(|_| "the body is not UTF-8".to_owned())?;
    let payload = body
        .split('&')
        .find_map(|pair| pair.strip_prefix("payload="))
        .ok_or("the body has no payload= field")?;
    let payload = form_decode(payload).ok_or("the payload is not URL-encoded UTF-8")?;
    let payload: Value =
        serde_json::from_str(&payload).map_err(|e| format!("the payload is not JSON: {e}"))?;
    if payload["type"] != "block_actions" {
        return Err("the payload is not a block_actions interaction".into());
    }
    let user = payload["user"]["id"]
        .as_str()
        .ok_or("the payload has no user.id")?;
    let action = match payload["actions"].as_array().map(Vec::as_slice) {
        Some([action]) => action,
        _ => return Err("the payload carries not exactly one action".into()),
    };
    let verdict = match action["action_id"].as_str() {
        Some("approve") => "approve",
        Some("deny") => "deny",
        _ => return Err("the action is neither approve nor deny".into()),
    };
    let request = action["value"]
        .as_str()
        .ok_or("the action carries no request id")?;
    Ok(Press {
        user: user.to_owned(),
        verdict,
        request: request.to_owned(),
    })
}

/// `application/x-www-form-urlencoded` decoding: `+` is a space, `%XX` a byte.
fn form_decode(text: &str) -> Option<String> {
    let mut bytes = Vec::with_capacity(text.len());
    let mut rest = text.as_bytes();
    while let Some((&first, tail)) = rest.split_first() {
        match first {
            b'+' => bytes.push(b' '),
            b'%' => {
                let pair = std::str::from_utf8(tail.get(..2)?).ok()?;
                bytes.push(u8::from_str_radix(pair, 16).ok()?);
                rest = &tail[2..];
                continue;
            }
            other => bytes.push(other),
        }
        rest = tail;
    }
    String::from_utf8(bytes).ok()
}

/// Text from the request as an approver reads it: [inert](escape_controls) (no control, bidi
/// or invisible character reaches the message), then Slack's mrkdwn escapes of `&`, `<` and `>`.
fn escape(text: &str) -> String {
    escape_controls(text)
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The arguments as a message shows them: an object's members shortest first (by the
/// characters of `"name":value`, members of one length as given), so that no long member pushes
/// the others out of what is shown; any other value as it is.
fn arguments_text(arguments: &Value) -> String {
    let Value::Object(members) = arguments else {
        return arguments.to_string();
    };
    let mut members: Vec<String> = members
        .iter()
        .map(|(name, value)| format!("{}:{value}", Value::from(name.as_str())))
        .collect();
    members.sort_by_key(|member| member.chars().count());
    format!("{{{}}}", members.join(","))
}

/// The Block Kit message for `request` (as `GET /approvals` lists it, arguments redacted): a
/// section with the tool, class, session, expiry and arguments (shortest members first, at
/// most [`MAX_ARGUMENT_CHARS`] characters of them, and a line saying so when they are cut),
/// and Approve and Deny buttons whose value is the request id.
pub fn message(request: &Map<String, Value>) -> Value {
    let text = |name: &str| escape(request.get(name).and_then(Value::as_str).unwrap_or("?"));
    let id = request
        .get("request")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let arguments = request
        .get("arguments")
        .map_or_else(String::new, arguments_text);
    let total = arguments.chars().count();
    let shortened = if total > MAX_ARGUMENT_CHARS {
        format!(
            "\n*Arguments shortened:* {MAX_ARGUMENT_CHARS} of {total} characters shown, the \
             longest members last; review them whole with `mcp-recovery approve` before deciding"
        )
    } else {
        String::new()
    };
    let section = format!(
        "*Approval requested:* {} ({})\n*Session:* {}\n*Expires:* {}\n*Request:* {}\n*Arguments:* {}{shortened}",
        text("tool"),
        text("class"),
        text("session"),
        text("expires"),
        escape(id),
        escape(&excerpt(&arguments, MAX_ARGUMENT_CHARS)).replace('`', "'")
    );
    let button = |label: &str, action: &str, style: &str| {
        json!({"type": "button", "text": {"type": "plain_text", "text": label},
            "action_id": action, "value": id, "style": style})
    };
    json!({
        "text": format!("Approval requested: {}", text("tool")),
        "blocks": [
            {"type": "section", "text": {"type": "mrkdwn", "text": section}},
            {"type": "actions", "block_id": "mcp-recovery-decision", "elements": [
                button("Approve", "approve", "primary"),
                button("Deny", "deny", "danger"),
            ]},
        ],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sign(secret: &[u8], timestamp: &str, body: &[u8]) -> String {
        let mut mac = Hmac::<Sha256>::new_from_slice(secret).unwrap();
        mac.update(format!("v0:{timestamp}:").as_bytes());
        mac.update(body);
        let bytes = mac.finalize().into_bytes();
        format!(
            "v0={}",
            bytes.iter().map(|b| format!("{b:02x}")).collect::<String>()
        )
    }

    #[test]
    fn signatures_are_checked_as_slack_documents_them() {
        // Slack's documented example: secret, timestamp, body and signature.
        let secret = b"8f742231b10e8888abcd99yyyzzz85a5";
        let body = b"token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c";
        let headers = |ts: &str, sig: &str| SlackHeaders {
            timestamp: Some(ts.into()),
            signature: Some(sig.into()),
        };
        let documented = "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503";
        assert_eq!(sign(secret, "1531420618", body), documented);
        let at = 1_531_420_618;
        assert_eq!(
            verify(secret, &headers("1531420618", documented), body, at),
            Ok(())
        );
        assert!(verify(secret, &headers("1531420618", documented), body, at + 301).is_err());
        assert!(verify(secret, &headers("1531420618", documented), body, at + 300).is_ok());
        assert!(verify(b"other", &headers("1531420618", documented), body, at).is_err());
        let upper = documented.to_uppercase().replace("V0=", "v0=");
        assert!(verify(secret, &headers("1531420618", &upper), body, at).is_err());
        assert!(verify(secret, &headers("+1531420618", documented), body, at).is_err());
        assert!(verify(secret, &SlackHeaders::default(), body, at).is_err());
    }

    #[test]
    fn a_press_is_read_from_the_form_encoded_payload() {
        let payload = r#"{"type":"block_actions","user":{"id":"U1 2"},"actions":[{"action_id":"deny","value":"ab%"}]}"#;
        let encoded: String = payload
            .bytes()
            .map(|b| match b {
                b' ' => "+".to_owned(),
                b if b.is_ascii_alphanumeric() => (b as char).to_string(),
                b => format!("%{b:02X}"),
            })
            .collect();
        let press = parse(format!("payload={encoded}").as_bytes()).unwrap();
        assert_eq!(
            press,
            Press {
                user: "U1 2".into(),
                verdict: "deny",
                request: "ab%".into()
            }
        );
        assert!(parse(b"payload=%7").is_err());
        assert!(parse(b"other=1").is_err());
    }

    #[test]
    fn messages_show_input_inert_and_escaped_for_mrkdwn() {
        use mcp_recovery_base::text::is_unsafe_char;

        let hostile = "\u{1b}]0;t\u{7}\u{1b}[2J\u{9b}\u{85}\u{202e}\u{2066}\u{200b}\u{2028}\r\n";
        let request = json!({
            "request": "r-1",
            "tool": format!("delete<&>{hostile}"),
            "class": format!("irreversible{hostile}"),
            "session": format!("s{hostile}"),
            "expires": "2030-01-01T00:00:00Z",
            "arguments": {"path": format!("/tmp/x{hostile}`"), "zz": "y".repeat(2000)},
        });
        let posted = message(request.as_object().unwrap());
        let section = posted["blocks"][0]["text"]["text"].as_str().unwrap();
        let fallback = posted["text"].as_str().unwrap();
        for text in [section, fallback] {
            for line in text.split('\n') {
                assert!(!line.chars().any(is_unsafe_char), "{line:?}");
            }
            assert!(
                text.contains("delete&lt;&amp;&gt;\\u{1b}]0;t\\u{7}"),
                "{text}"
            );
            assert!(text.contains("\\u{202e}\\u{2066}\\u{200b}\\u{2028}\\r\\n"));
        }
        // Only the section's own line breaks are left (and the line saying the arguments are
        // cut).
        assert_eq!(section.split('\n').count(), 6, "{section}");
        // JSON escapes the C0 controls of the arguments; the one escape takes the rest.
        assert!(
            section.contains("/tmp/x\\u001b]0;t\\u0007\\u001b[2J\\u{9b}\\u{85}\\u{202e}"),
            "{section}"
        );
        assert!(section.contains("\\u{2028}\\r\\n'"), "{section}");
        // The arguments are cut at 1500 characters, before they are escaped, and the message
        // says so.
        let (arguments, notice) = section
            .split("*Arguments:* ")
            .nth(1)
            .unwrap()
            .split_once('\n')
            .unwrap();
        assert!(arguments.ends_with('…'), "{arguments}");
        let shown = arguments_text(&request["arguments"]);
        let kept: String = shown.chars().take(MAX_ARGUMENT_CHARS).collect();
        assert_eq!(arguments, format!("{}…", escape(&kept).replace('`', "'")));
        let total = shown.chars().count();
        assert_eq!(
            notice,
            format!(
                "*Arguments shortened:* 1500 of {total} characters shown, the longest members \
                 last; review them whole with `mcp-recovery approve` before deciding"
            )
        );
        // Benign text is shown as before.
        let plain = json!({"request": "r-2", "tool": "put", "class": "compensable",
            "session": "s", "expires": "soon", "arguments": {"a": "b & c"}});
        let plain = message(plain.as_object().unwrap());
        assert_eq!(
            plain["blocks"][0]["text"]["text"],
            "*Approval requested:* put (compensable)\n*Session:* s\n*Expires:* soon\n\
             *Request:* r-2\n*Arguments:* {\"a\":\"b &amp; c\"}"
        );
    }

    /// A member padded to push others out of the message goes last: every short member is
    /// shown, and the message says the arguments are cut.
    #[test]
    fn a_padded_member_cannot_hide_the_others() {
        let request = json!({
            "request": "r-3", "tool": "transfer", "class": "irreversible", "session": "s",
            "expires": "soon",
            "arguments": {"memo": "x".repeat(5000), "to": "acct-9", "amount": 1_000_000,
                "nested": {"a": [1, 2]}, "currency": "EUR", "note": "ok"},
        });
        let posted = message(request.as_object().unwrap());
        let section = posted["blocks"][0]["text"]["text"].as_str().unwrap();
        let arguments = section.split("*Arguments:* ").nth(1).unwrap();
        assert!(
            arguments.starts_with(
                "{\"note\":\"ok\",\"to\":\"acct-9\",\"amount\":1000000,\"currency\":\"EUR\",\
                 \"nested\":{\"a\":[1,2]},\"memo\":\"xxx"
            ),
            "{arguments}"
        );
        assert!(
            section.contains("*Arguments shortened:* 1500 of 5092 characters shown"),
            "{section}"
        );
        // Arguments that fit are shown whole, shortest first, with no such line.
        let short = json!({"request": "r-4", "tool": "t", "class": "c", "session": "s",
            "expires": "soon", "arguments": {"bbb": 2, "a": 1, "cc": [3]}});
        let posted = message(short.as_object().unwrap());
        let section = posted["blocks"][0]["text"]["text"].as_str().unwrap();
        assert!(
            section.ends_with("*Arguments:* {\"a\":1,\"bbb\":2,\"cc\":[3]}"),
            "{section}"
        );
        assert!(!section.contains("shortened"), "{section}");
    }
}
