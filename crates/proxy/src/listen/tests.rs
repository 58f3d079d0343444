//! The listener against real sockets: stalled, trickling and surplus connections, and a
//! session that cannot start.

use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::Instant;

use super::http::is_loopback_host;
use super::*;
use crate::{Approver, Launch, Overlays, Policy};

/// A listener in front of a command that is never started (no session is opened).
fn listening(limits: Limits) -> SocketAddr {
    let listener = Listener {
        address: "127.0.0.1:0".parse().unwrap(),
        allow_remote: false,
        allowed_origins: Vec::new(),
        limits,
    };
    let settings = Settings {
        policy: Policy::default(),
        approver: Approver::Command("exit 1".into()),
        session: String::new(),
        upstream: String::new(),
        overlays: Overlays::default(),
        secrets: Default::default(),
        rollback_window: crate::DEFAULT_ROLLBACK_WINDOW,
        approvals: None,
    };
    let upstream = UpstreamSpec::Stdio(Launch {
        program: "/nonexistent".into(),
        ..Launch::default()
    });
    let (sender, bound) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = serve(&listener, &settings, None, &upstream, |address| {
            let _ = sender.send(address);
        });
    });
    bound.recv_timeout(Duration::from_secs(30)).unwrap()
}

/// A connection to `address` whose reads give up after 30 s.
fn connect(address: SocketAddr) -> TcpStream {
    let stream = TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    stream
}

#[test]
fn a_stalled_request_is_dropped_after_the_io_timeout() {
    let address = listening(Limits {
        io_timeout: Duration::from_millis(300),
        ..Limits::default()
    });
    let mut stream = connect(address);
    // Half a request head, then nothing: the proxy gives up on it.
    stream
        .write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        .unwrap();
    let started = Instant::now();
    let mut answer = String::new();
    let read = BufReader::new(stream).read_line(&mut answer);
    assert!(started.elapsed() < Duration::from_secs(20));
    assert!(
        read.is_ok_and(|n| n == 0) || answer.contains("408"),
        "{answer:?}"
    );
}

/// A body that stops coming, whether counted or chunked, is the client's stall too: the
/// connection is dropped and its place freed.
#[cfg(unix)]
#[test]
fn a_stalled_request_body_is_dropped_after_the_io_timeout() {
    let address = listening(Limits {
        io_timeout: Duration::from_millis(300),
        max_connections: 1,
        ..Limits::default()
    });
    let head = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n";
    for stalled in [
        format!("{head}Content-Length: 40\r\n\r\n{{\"jsonrpc\""),
        format!("{head}Transfer-Encoding: chunked\r\n\r\n"),
        format!("{head}Transfer-Encoding: chunked\r\n\r\n1"),
        format!("{head}Transfer-Encoding: chunked\r\n\r\n10\r\n{{\"json"),
        format!("{head}Transfer-Encoding: chunked\r\n\r\n2\r\n{{}}"),
        format!("{head}Transfer-Encoding: chunked\r\n\r\n2\r\n{{}}\r\n0\r\n"),
    ] {
        let started = Instant::now();
        // The one place is free again once the relay has seen the previous close.
        let answer = loop {
            assert!(started.elapsed() < Duration::from_secs(20), "{stalled:?}");
            let mut stream = connect(address);
            stream.write_all(stalled.as_bytes()).unwrap();
            let mut answer = String::new();
            let read = BufReader::new(stream).read_to_string(&mut answer);
            assert!(read.is_ok(), "{stalled:?}: {read:?}");
            if !answer.starts_with("HTTP/1.1 503") {
                break answer;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        assert!(started.elapsed() < Duration::from_secs(20), "{stalled:?}");
        assert!(
            answer.is_empty() || answer.contains("408"),
            "{stalled:?}: {answer:?}"
        );
    }
}

/// Clients trickling a request a byte at a time, each byte well within the I/O timeout,
/// are cut when the whole request is not in by the timeout, so they cannot keep every
/// place taken: a new client is served while they still trickle.
#[cfg(unix)]
#[test]
fn trickling_clients_are_cut_at_the_request_deadline() {
    let timeout = Duration::from_millis(1500);
    let address = listening(Limits {
        io_timeout: timeout,
        max_connections: 4,
        ..Limits::default()
    });
    let started = Instant::now();
    let request = b"GET /nowhere HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n\r\n";
    let tricklers: Vec<_> = (0..4)
        .map(|_| {
            let mut stream = connect(address);
            std::thread::spawn(move || {
                // One byte every 200 ms: the whole request would take over 14 s.
                for byte in request {
                    if stream.write_all(&[*byte]).is_err() {
                        return Instant::now();
                    }
                    std::thread::sleep(Duration::from_millis(200));
                }
                let mut answer = String::new();
                let _ = stream.read_to_string(&mut answer);
                assert!(
                    answer.is_empty(),
                    "a trickled request was answered: {answer}"
                );
                Instant::now()
            })
        })
        .collect();
    // Wait until all four hold a place: a fifth connection is refused.
    std::thread::sleep(Duration::from_millis(300));
    let ask = || {
        let mut stream = connect(address);
        let request = "GET /nowhere HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
        stream.write_all(request.as_bytes()).unwrap();
        let mut answer = String::new();
        let _ = BufReader::new(stream).read_to_string(&mut answer);
        answer
    };
    assert!(ask().starts_with("HTTP/1.1 503"));
    // Once the deadline has passed the places are free again, long before the tricklers
    // would finish.
    let served = loop {
        let answer = ask();
        if answer.starts_with("HTTP/1.1 404") {
            break started.elapsed();
        }
        assert!(
            started.elapsed() < Duration::from_secs(8),
            "no place came free: {answer}"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(served >= timeout, "served after {served:?}");
    for trickler in tricklers {
        let cut = trickler.join().unwrap().duration_since(started);
        assert!(cut < Duration::from_secs(8), "cut after {cut:?}");
    }
}

/// A request whose end the relay cannot tell is closed at once, never left waiting for an
/// answer the server may not give.
#[cfg(unix)]
#[test]
fn requests_it_cannot_frame_are_closed() {
    let address = listening(Limits::default());
    let head = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n";
    for request in [
        format!("{head}Transfer-Encoding: gzip\r\n\r\n{{}}"),
        format!("{head}Transfer-Encoding: identity\r\n\r\n{{}}"),
        format!("{head}Content-Length: 100\r\nContent-Length: 2\r\n\r\n{{}}"),
        format!("{head}Content-Length: two\r\n\r\n{{}}"),
        format!("{head}X-Long: {}", "a".repeat(70 * 1024)),
    ] {
        let started = Instant::now();
        let mut stream = connect(address);
        // The relay may close before it has read everything: a reset is a close too.
        let _ = stream.write_all(request.as_bytes());
        let mut answer = String::new();
        match BufReader::new(stream).read_to_string(&mut answer) {
            Ok(_) => assert!(answer.is_empty(), "{answer:?}"),
            Err(e) => assert!(
                !matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut),
                "{e}"
            ),
        }
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            &request[..80]
        );
    }
}

/// Connections beyond the cap get 503 with Retry-After at once; a closed one frees its
/// place.
#[cfg(unix)]
#[test]
fn connections_beyond_the_cap_are_answered_503() {
    let address = listening(Limits {
        max_connections: 2,
        ..Limits::default()
    });
    let ask = |mut stream: TcpStream| {
        let request = "GET /nowhere HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
        stream.write_all(request.as_bytes()).unwrap();
        let mut answer = String::new();
        let _ = BufReader::new(stream).read_to_string(&mut answer);
        answer
    };
    // Two connections held open, each proven admitted by an answer on it.
    let mut held = Vec::new();
    for _ in 0..2 {
        let mut stream = connect(address);
        stream
            .write_all(b"GET /nowhere HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            .unwrap();
        let mut line = String::new();
        BufReader::new(stream.try_clone().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert!(line.starts_with("HTTP/1.1 404"), "{line}");
        held.push(stream);
    }
    let refused = ask(connect(address));
    assert!(refused.starts_with("HTTP/1.1 503"), "{refused}");
    assert!(refused.contains("Retry-After: 1"), "{refused}");
    assert!(refused.contains("2 connections are open"), "{refused}");
    drop(held.pop());
    // The freed place is taken again once the relay has seen the close.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let answer = ask(connect(address));
        if answer.starts_with("HTTP/1.1 404") {
            break;
        }
        assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
        assert!(
            Instant::now() < deadline,
            "the closed connection's place was not freed"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A connection idle after its answer is closed after the I/O timeout.
#[test]
fn an_idle_connection_is_closed_after_the_io_timeout() {
    let address = listening(Limits {
        io_timeout: Duration::from_millis(300),
        ..Limits::default()
    });
    let mut stream = connect(address);
    stream
        .write_all(b"GET /nowhere HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .unwrap();
    let started = Instant::now();
    let mut answer = String::new();
    // Read to the end: the answer, then the close.
    BufReader::new(stream).read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 404"), "{answer}");
    assert!(started.elapsed() < Duration::from_secs(20));
}

/// A session that cannot start is an error answer, whether the request's body is counted or
/// chunked; a chunked one, once its last chunk and trailer are in, is waited on, not taken
/// for a stall.
#[test]
fn a_session_that_cannot_start_is_an_error_answer() {
    let address = listening(Limits {
        io_timeout: Duration::from_millis(300),
        ..Limits::default()
    });
    let head = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
                Connection: close\r\n";
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#;
    let (first, rest) = body.split_at(10);
    for request in [
        format!("{head}Content-Length: {}\r\n\r\n{body}", body.len()),
        format!(
            "{head}Transfer-Encoding: chunked\r\n\r\n\
             {:x}\r\n{first}\r\n{:x};ext=1\r\n{rest}\r\n0\r\n\r\n",
            first.len(),
            rest.len()
        ),
    ] {
        let mut stream = connect(address);
        stream.write_all(request.as_bytes()).unwrap();
        let mut answer = String::new();
        BufReader::new(stream).read_to_string(&mut answer).unwrap();
        assert!(answer.starts_with("HTTP/1.1 502"), "{answer}");
        assert!(answer.contains("cannot start the server"), "{answer}");
    }
}

#[test]
fn loopback_hosts() {
    for host in [
        "localhost",
        "LOCALHOST:3000",
        "127.0.0.1",
        "127.3.4.5:80",
        "[::1]",
        "[::1]:9",
    ] {
        assert!(is_loopback_host(host), "{host}");
    }
    for host in [
        "evil.test",
        "127.0.0.1.evil.test",
        "localhost.evil.test:80",
        "10.0.0.1",
        "[::2]",
        "",
    ] {
        assert!(!is_loopback_host(host), "{host}");
    }
}

#[test]
fn a_request_must_name_its_host_once() {
    let address = listening(Limits::default());
    let ask = |head: &str| {
        let mut stream = connect(address);
        stream.write_all(head.as_bytes()).unwrap();
        let mut answer = String::new();
        let _ = BufReader::new(stream).read_to_string(&mut answer);
        answer
    };
    for refused in [
        "GET /nowhere HTTP/1.1\r\nConnection: close\r\n\r\n",
        "GET /nowhere HTTP/1.1\r\nHost: 127.0.0.1\r\nhost: 127.0.0.1\r\nConnection: close\r\n\r\n",
        "GET /nowhere HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.test\r\nConnection: close\r\n\r\n",
    ] {
        let answer = ask(refused);
        assert!(answer.starts_with("HTTP/1.1 403"), "{refused:?}: {answer}");
        assert!(answer.contains("host not allowed"), "{answer}");
    }
    // HTTP/1.0 has no Host to require.
    let answer = ask("GET /nowhere HTTP/1.0\r\n\r\n");
    assert!(answer.contains(" 404 "), "{answer}");
}

/// Server messages no stream takes wait in a backlog bounded in bytes as well as in messages.
#[test]
fn the_backlog_is_bounded_in_bytes() {
    let mut routes = super::downstream::Routes::default();
    let big = "x".repeat(6 << 20);
    for _ in 0..10 {
        routes.route(big.clone());
    }
    let held: usize = routes.backlog.iter().map(String::len).sum();
    assert!(held <= super::config::BACKLOG_BYTES, "{held}");
    assert_eq!(routes.backlog.len(), 2);
    // One message larger than the bound is kept alone.
    routes.route("y".repeat(20 << 20));
    assert_eq!(routes.backlog.len(), 1);
    routes.route("z".into());
    assert_eq!(routes.backlog.len(), 1);
}

/// A stream's queue takes messages up to its bound in bytes (a first larger one alone), and
/// room again as the stream sends them.
#[test]
fn a_streams_queue_is_bounded_in_bytes() {
    let (outlet, inlet) = super::queue::queue();
    let big = "x".repeat(10 << 20);
    outlet.try_send(big.clone()).unwrap();
    assert!(outlet.try_send(big.clone()).is_err());
    outlet.try_send("small".into()).unwrap();
    assert_eq!(inlet.try_recv().unwrap().len(), big.len());
    outlet.try_send(big.clone()).unwrap();
    assert_eq!(inlet.try_recv().unwrap(), "small");
    // Alone, a message over the bound is taken.
    assert_eq!(inlet.try_recv().unwrap().len(), big.len());
    outlet.try_send("y".repeat(40 << 20)).unwrap();
    assert!(outlet.try_send("z".into()).is_err());
    // The answer to one of its requests is taken whatever the bytes queued.
    outlet.try_send_answer(big).unwrap();
}
