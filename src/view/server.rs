//! The HTTP side of the view: tiny_http parses every request; this file checks the token
//! and routes. Each event stream gets a thread of its own (at most
//! [`MAX_STREAMS`](super::hub::MAX_STREAMS)) that writes Server-Sent Events from the hub;
//! every other request is answered at once on the serving thread.
//!
//! Level: part of `view`. No printing.

use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tiny_http::{Header, Method, Request, Response};

use super::history;
use super::hub::{Hub, Next};

const INDEX: &str = include_str!("assets/index.html");
const SCRIPT: &str = include_str!("assets/view.js");
const STYLE: &str = include_str!("assets/view.css");

/// A stream with nothing to say writes a comment this often, so a closed page is noticed.
const KEEP_ALIVE: Duration = Duration::from_secs(5);

/// What the request handlers share.
pub struct Shared {
    pub hub: Arc<Hub>,
    /// The path prefix every request must start with: `/TOKEN/`.
    pub prefix: String,
    /// `Host` values a request may carry (empty: any; a page on another name, as DNS
    /// rebinding makes, is refused even before the token is looked at).
    pub hosts: Vec<String>,
    /// Set by the Stop button (what Ctrl-C sets); `None`: no Stop.
    pub stop: Option<Arc<AtomicBool>>,
    /// Set with `stop` by the Stop button only (who stopped the command).
    pub stop_pressed: Option<Arc<AtomicBool>>,
    /// Set by the Save button; `None`: nothing to save.
    pub save: Option<Arc<AtomicBool>>,
    /// The run journals the history lists.
    pub journals: Option<PathBuf>,
}

fn header(name: &str, value: &str) -> Header {
    Header::from_bytes(name.as_bytes(), value.as_bytes()).expect("an ASCII header")
}

/// The headers of every answer: no caching, no sniffing, no framing, nothing from
/// elsewhere.
fn guarded<R: std::io::Read>(r: Response<R>, content_type: &str) -> Response<R> {
    r.with_header(header("Content-Type", content_type))
        .with_header(header("Cache-Control", "no-store"))
        .with_header(header("X-Content-Type-Options", "nosniff"))
        .with_header(header("Referrer-Policy", "no-referrer"))
        .with_header(header(
            "Content-Security-Policy",
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; \
             connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
        ))
}

fn text(status: u16, body: &str) -> Response<std::io::Cursor<Vec<u8>>> {
    guarded(
        Response::from_string(body).with_status_code(status),
        "text/plain; charset=utf-8",
    )
}

/// Compares without stopping at the first difference (the token is a secret).
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |d, (x, y)| d | (x ^ y)) == 0
}

/// Answers requests until the server is unblocked.
pub fn serve(server: Arc<tiny_http::Server>, shared: Arc<Shared>) {
    for req in server.incoming_requests() {
        if shared.hub.is_closed() {
            let _ = req.respond(text(503, "the view has ended"));
            continue;
        }
        handle(req, &shared);
    }
}

fn handle(req: Request, shared: &Arc<Shared>) {
    let url = req.url().to_string();
    let path = url.split(['?', '#']).next().unwrap_or("");
    let host_ok = shared.hosts.is_empty()
        || req
            .headers()
            .iter()
            .find(|h| h.field.equiv("Host"))
            .is_some_and(|h| shared.hosts.iter().any(|ok| ok == h.value.as_str()));
    let rest = match path.get(..shared.prefix.len()) {
        Some(p) if host_ok && same(p.as_bytes(), shared.prefix.as_bytes()) => {
            &path[shared.prefix.len()..]
        }
        _ => {
            let _ = req.respond(text(403, "forbidden: this page needs its token"));
            return;
        }
    };
    let get = *req.method() == Method::Get || *req.method() == Method::Head;
    let post = *req.method() == Method::Post;
    let r = match rest {
        "" if get => guarded(Response::from_string(INDEX), "text/html; charset=utf-8"),
        "view.js" if get => guarded(
            Response::from_string(SCRIPT),
            "text/javascript; charset=utf-8",
        ),
        "view.css" if get => guarded(Response::from_string(STYLE), "text/css; charset=utf-8"),
        "events" if get => return stream(req, shared),
        "stop" if post => match &shared.stop {
            Some(flag) => {
                if let Some(pressed) = &shared.stop_pressed {
                    pressed.store(true, Ordering::SeqCst);
                }
                flag.store(true, Ordering::SeqCst);
                text(200, "stopping")
            }
            None => text(404, "nothing to stop"),
        },
        "save" if post => match &shared.save {
            Some(flag) => {
                flag.store(true, Ordering::SeqCst);
                text(200, "saving")
            }
            None => text(404, "nothing to save"),
        },
        "journals" if get => match &shared.journals {
            Some(dir) => guarded(
                Response::from_string(history::list(dir).to_string()),
                "application/json",
            ),
            None => text(404, "no journal directory"),
        },
        r if get && r.starts_with("journal/") => {
            let name = &r["journal/".len()..];
            match shared
                .journals
                .as_ref()
                .map(|dir| history::replay(dir, name))
            {
                Some(Ok(events)) => guarded(
                    Response::from_string(events.to_string()),
                    "application/json",
                ),
                Some(Err(why)) => text(404, &why),
                None => text(404, "no journal directory"),
            }
        }
        r if get && r.starts_with("frame/") => {
            match r["frame/".len()..]
                .parse()
                .ok()
                .and_then(|id| shared.hub.frame(id))
            {
                Some(bytes) => guarded(Response::from_data(bytes.as_slice()), "image/jpeg"),
                None => text(404, "that frame is gone"),
            }
        }
        "" | "view.js" | "view.css" | "events" | "journals" | "stop" | "save" => {
            text(405, "method not allowed")
        }
        _ => text(404, "not found"),
    };
    let _ = req.respond(r);
}

/// One event stream: the replay, then live messages, on a thread of its own.
fn stream(req: Request, shared: &Arc<Shared>) {
    let Some((id, replay, last)) = shared.hub.subscribe() else {
        let _ = req.respond(
            text(503, "too many pages are open on this view")
                .with_header(header("Retry-After", "5")),
        );
        return;
    };
    let hub = shared.hub.clone();
    let spawned = std::thread::Builder::new()
        .name("view-stream".into())
        .spawn(move || {
            // The response is written here, not by tiny_http, so that each event is sent
            // as it comes: tiny_http would frame an endless body in chunks of 8 KiB.
            let mut w = req.into_writer();
            let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\
                        Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n\
                        Connection: close\r\n\r\nretry: 1000\n\n";
            let mut ok = w.write_all(head.as_bytes()).is_ok() && write(&mut *w, &replay);
            if ok {
                hub.sent(id, last);
            }
            while ok {
                ok = match hub.next(id, KEEP_ALIVE) {
                    Next::Msgs(msgs, last) => {
                        let ok = write(&mut *w, &msgs);
                        if ok {
                            hub.sent(id, last);
                        }
                        ok
                    }
                    Next::Restart(msgs, last) => {
                        let ok = write(&mut *w, &msgs);
                        if ok {
                            hub.sent(id, last);
                        }
                        ok
                    }
                    Next::Idle => w.write_all(b": keep-alive\n\n").is_ok() && w.flush().is_ok(),
                    Next::Closed => false,
                };
            }
            hub.unsubscribe(id);
        });
    if spawned.is_err() {
        shared.hub.unsubscribe(id);
    }
}

/// Writes messages as Server-Sent Events (one JSON text a `data:` line) and flushes.
fn write(w: &mut dyn Write, msgs: &[Arc<str>]) -> bool {
    let mut buf = Vec::new();
    for m in msgs {
        buf.extend_from_slice(b"data: ");
        buf.extend_from_slice(m.as_bytes());
        buf.extend_from_slice(b"\n\n");
    }
    w.write_all(&buf).is_ok() && w.flush().is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_comparison_is_exact() {
        assert!(same(b"/abc/", b"/abc/"));
        assert!(!same(b"/abd/", b"/abc/"));
        assert!(!same(b"/abc", b"/abc/"));
    }
}
