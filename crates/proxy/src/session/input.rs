//! Every input a session reacts to, as one closed set.

use serde_json::Value;

use crate::event::{Credit, Event};
use crate::settings::Closing;
use crate::wire::{Line, error_response, oversized};

/// The bytes an input holds against its side's budget until it is handled (none for a line
/// that came unmetered).
pub(crate) type Held = Option<Credit>;

/// One thing the session reacts to; the event loop handles each in turn.
#[derive(Debug)]
pub(crate) enum Input {
    /// A message (or a batch) from the client, with its exact text.
    FromClient(Value, String, Held),
    /// A line from the client that is not JSON or is too long (why, and the id it leads with,
    /// when it is too long but that can be read).
    ClientGarbage(String, Option<Value>),
    /// The client closed its side.
    ClientClosed,
    /// A message from the server, with its exact text.
    FromUpstream(Value, String, Held),
    /// A line from the server that is not JSON (why).
    UpstreamGarbage(String),
    /// The server closed its side (why, when it said).
    UpstreamClosed(Option<String>),
    /// Nothing arrived in time: deadlines may have passed.
    Timeout,
    /// Every sender of events is gone.
    Disconnected,
    /// The proxy closes the session.
    Close(Closing),
}

impl Input {
    /// A line from the client (and the bytes it holds until handled).
    pub(crate) fn from_client(line: Line, held: Held) -> Input {
        match line {
            Line::Message(message, text) => Input::FromClient(message, text, held),
            Line::Garbage(reason) => Input::ClientGarbage(reason, None),
            Line::Oversized(id) => Input::ClientGarbage(oversized(), id),
            Line::Closed(_) => Input::ClientClosed,
        }
    }

    /// A line from the server (and the bytes it holds until handled).
    pub(crate) fn from_upstream(line: Line, held: Held) -> Input {
        match line {
            Line::Message(message, text) => Input::FromUpstream(message, text, held),
            Line::Garbage(reason) => Input::UpstreamGarbage(reason),
            // An answer too long to pass still ends its request, as an error saying why.
            Line::Oversized(Some(id)) => {
                let why = format!("mcp-recovery proxy: the server's answer: {}", oversized());
                let answer = error_response(&id, -32603, &why);
                let text = answer.to_string();
                Input::FromUpstream(answer, text, held)
            }
            Line::Oversized(None) => Input::UpstreamGarbage(oversized()),
            Line::Closed(reason) => Input::UpstreamClosed(reason),
        }
    }
}

impl From<Event> for Input {
    fn from(event: Event) -> Input {
        match event {
            Event::Client(line) => Input::from_client(line, None),
            Event::Server(line) => Input::from_upstream(line, None),
            Event::MeteredClient(line, credit) => Input::from_client(line, Some(credit)),
            Event::MeteredServer(line, credit) => Input::from_upstream(line, Some(credit)),
            Event::Close(closing) => Input::Close(closing),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_line_is_one_input() {
        let message = Line::Message(json!({"id": 1}), "{\"id\":1}".into());
        assert!(matches!(
            Input::from(Event::Client(message)),
            Input::FromClient(_, text, None) if text == "{\"id\":1}"
        ));
        assert!(matches!(
            Input::from(Event::Client(Line::Garbage("bad".into()))),
            Input::ClientGarbage(why, None) if why == "bad"
        ));
        assert!(matches!(
            Input::from(Event::Client(Line::Closed(Some("eof".into())))),
            Input::ClientClosed
        ));
        assert!(matches!(
            Input::from(Event::Server(Line::Closed(Some("exited".into())))),
            Input::UpstreamClosed(Some(why)) if why == "exited"
        ));
        assert!(matches!(
            Input::from(Event::Server(Line::Closed(None))),
            Input::UpstreamClosed(None)
        ));
        assert!(matches!(
            Input::from(Event::Server(Line::Garbage("x".into()))),
            Input::UpstreamGarbage(_)
        ));
        // An answer too long to pass ends its request with an error; without an id it cannot.
        let Input::FromUpstream(answer, _, None) =
            Input::from(Event::Server(Line::Oversized(Some(json!(5)))))
        else {
            panic!("an oversized answer with an id is an answer");
        };
        assert_eq!(answer["id"], 5);
        assert!(
            answer["error"]["message"]
                .as_str()
                .unwrap()
                .contains("64 MiB")
        );
        assert!(matches!(
            Input::from(Event::Server(Line::Oversized(None))),
            Input::UpstreamGarbage(why) if why.contains("64 MiB")
        ));
        assert!(matches!(
            Input::from(Event::Client(Line::Oversized(Some(json!(1))))),
            Input::ClientGarbage(why, Some(id)) if why.contains("64 MiB") && id == json!(1)
        ));
    }
}
