//! The live-server response reader on any answers: a scripted Streamable HTTP server on
//! 127.0.0.1 replies to each request of the client with the next chunk of the input (chunks
//! are separated by NUL; a chunk starting with `e` is sent as `text/event-stream`, `s` followed
//! by three digits sets the status, anything else is a JSON body). `Connection::http` and
//! `list_tools` must never panic or hang, and a merged result always holds a `tools` array.

#![no_main]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, LazyLock, Mutex};
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use mcp_recovery_client::{Connection, Options};

/// The answers of the current run, in order.
type Script = Arc<Mutex<Vec<Vec<u8>>>>;

struct Server {
    url: String,
    script: Script,
}

static SERVER: LazyLock<Server> = LazyLock::new(|| {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("bind: {e}"));
    let port = listener
        .local_addr()
        .unwrap_or_else(|e| panic!("address: {e}"))
        .port();
    let script: Script = Arc::default();
    let answers = Arc::clone(&script);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            serve(stream, &answers);
        }
    });
    Server {
        url: format!("http://127.0.0.1:{port}/mcp"),
        script,
    }
});

/// Reads one request (headers, then `Content-Length` bytes) and answers it with the next chunk.
fn serve(stream: TcpStream, script: &Script) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    let mut reader = BufReader::new(&stream);
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        if line == "\r\n" {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; length.min(1 << 20)];
    let _ = reader.read_exact(&mut body);
    let chunk = {
        let mut answers = script.lock().unwrap_or_else(|e| e.into_inner());
        if answers.is_empty() {
            None
        } else {
            Some(answers.remove(0))
        }
    };
    let (status, kind, body) = match chunk.as_deref() {
        None => ("404 Not Found".to_owned(), "application/json", &[][..]),
        Some([b'e', rest @ ..]) => ("200 OK".to_owned(), "text/event-stream", rest),
        Some([b's', a, b, c, rest @ ..]) if [a, b, c].iter().all(|d| d.is_ascii_digit()) => (
            format!("{} Scripted", String::from_utf8_lossy(&[*a, *b, *c])),
            "application/json",
            rest,
        ),
        Some(other) => ("200 OK".to_owned(), "application/json", other),
    };
    let mut out = &stream;
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nMcp-Session-Id: s1\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = out.write_all(head.as_bytes());
    let _ = out.write_all(body);
    let _ = out.flush();
    let _ = stream.shutdown(std::net::Shutdown::Both);
}

fuzz_target!(|data: &[u8]| {
    let server = &*SERVER;
    {
        let mut answers = server.script.lock().unwrap_or_else(|e| e.into_inner());
        *answers = data.split(|&b| b == 0).take(64).map(<[u8]>::to_vec).collect();
    }
    let options = Options {
        timeout: Duration::from_secs(5),
        max_message_bytes: 1 << 20,
        max_pages: 32,
        ..Options::default()
    };
    let Ok(mut connection) = Connection::http(&server.url, Vec::new(), &options) else {
        return;
    };
    if let Ok(tools) = connection.list_tools() {
        assert!(tools["tools"].is_array(), "{tools}");
    }
    connection.close();
});
