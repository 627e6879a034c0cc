//! The hub between a job and the pages that watch it: every message the pages get, in
//! order, with what a page that connects late must be sent first, and one bounded queue
//! per page.
//!
//! The job's thread only ever takes the hub's lock for a few pushes ([`Hub::publish`]); a
//! page's own thread takes it to pop what is waiting and writes to its socket without it.
//! A page that falls [`QUEUE`] messages behind is not waited for: its queue is dropped and
//! it starts over from the replay (the log and the newest of each superseded kind), which a
//! page folds into the same state as the live messages. Camera frames are coalesced: a
//! page that has not taken the last frame yet gets the newest in its place.
//!
//! Level: part of `view`; depends on nothing else of the crate. No printing.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Event streams (pages) served at once; one more is refused.
pub const MAX_STREAMS: usize = 8;
/// Messages waiting for one page before it is made to start over from the replay.
pub const QUEUE: usize = 1024;
/// Messages kept for pages that connect later (the oldest go first beyond it).
pub const LOG: usize = 8192;
/// Encoded camera frames kept for the pages to fetch.
pub const FRAMES_KEPT: usize = 8;

/// What a page that connects late must be sent of a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Keep {
    /// Every one, in order (a reading, a resolution, a plan, a stop).
    Log,
    /// Only the newest of its kind (progress counts, the cube after each action).
    Latest,
    /// Only the newest, and a slow page's pending one is replaced (camera frames).
    Frame,
}

#[derive(Clone, Debug)]
struct Msg {
    seq: u64,
    kind: &'static str,
    text: Arc<str>,
}

struct Sub {
    id: u64,
    queue: VecDeque<Msg>,
    /// Fell behind: start over from the replay.
    restart: bool,
    /// The last sequence number written to its socket.
    sent: u64,
}

#[derive(Default)]
struct State {
    next_seq: u64,
    hello: Option<Arc<str>>,
    log: VecDeque<Msg>,
    latest: BTreeMap<&'static str, Msg>,
    subs: Vec<Sub>,
    next_sub: u64,
    frames: VecDeque<(u64, Arc<Vec<u8>>)>,
    next_frame: u64,
    closed: bool,
    /// Pages made to start over because they fell behind.
    restarts: u64,
    /// The newest sequence number written to any page's socket, gone pages included.
    sent_to_any: u64,
}

/// What a page's thread gets next.
#[derive(Debug)]
pub enum Next {
    /// Messages to write, and the sequence number of the last.
    Msgs(Vec<Arc<str>>, u64),
    /// The page fell behind: everything again from the start.
    Restart(Vec<Arc<str>>, u64),
    /// Nothing within the wait.
    Idle,
    /// The hub is closed and this page has been sent everything.
    Closed,
}

/// See the module docs.
#[derive(Default)]
pub struct Hub {
    state: Mutex<State>,
    wake: Condvar,
    delivered: Condvar,
}

impl Hub {
    pub fn new() -> Hub {
        Hub::default()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A page thread that panicked leaves consistent data (every change is one push).
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The first message every page gets (it resets the page).
    pub fn set_hello(&self, text: String) {
        self.lock().hello = Some(text.into());
    }

    /// Sends a message to every page and keeps it for later ones as `keep` says; returns
    /// its sequence number.
    pub fn publish(&self, kind: &'static str, keep: Keep, text: String) -> u64 {
        let mut s = self.lock();
        s.next_seq += 1;
        let msg = Msg {
            seq: s.next_seq,
            kind,
            text: text.into(),
        };
        match keep {
            Keep::Log => {
                if s.log.len() >= LOG {
                    s.log.pop_front();
                }
                s.log.push_back(msg.clone());
            }
            Keep::Latest | Keep::Frame => {
                s.latest.insert(kind, msg.clone());
            }
        }
        let mut restarts = 0;
        for sub in s.subs.iter_mut().filter(|sub| !sub.restart) {
            if keep == Keep::Frame {
                if let Some(pending) = sub.queue.iter_mut().find(|m| m.kind == kind) {
                    *pending = msg.clone();
                    continue;
                }
            }
            if sub.queue.len() >= QUEUE {
                sub.queue.clear();
                sub.restart = true;
                restarts += 1;
            } else {
                sub.queue.push_back(msg.clone());
            }
        }
        s.restarts += restarts;
        let seq = msg.seq;
        drop(s);
        self.wake.notify_all();
        seq
    }

    /// Everything a page that connects now must be sent first, and the last sequence
    /// number in it.
    fn replay(s: &State) -> (Vec<Arc<str>>, u64) {
        let mut msgs: Vec<&Msg> = s.log.iter().chain(s.latest.values()).collect();
        msgs.sort_by_key(|m| m.seq);
        let last = msgs.last().map_or(0, |m| m.seq);
        let texts = s
            .hello
            .iter()
            .cloned()
            .chain(msgs.into_iter().map(|m| m.text.clone()))
            .collect();
        (texts, last)
    }

    /// A new page: its id and the replay, or `None` when [`MAX_STREAMS`] are served.
    pub fn subscribe(&self) -> Option<(u64, Vec<Arc<str>>, u64)> {
        let mut s = self.lock();
        if s.subs.len() >= MAX_STREAMS || s.closed {
            return None;
        }
        s.next_sub += 1;
        let id = s.next_sub;
        let (replay, last) = Hub::replay(&s);
        s.subs.push(Sub {
            id,
            queue: VecDeque::new(),
            restart: false,
            sent: 0,
        });
        Some((id, replay, last))
    }

    /// What page `id` should write next, waiting up to `wait` for it.
    pub fn next(&self, id: u64, wait: Duration) -> Next {
        let deadline = Instant::now() + wait;
        let mut s = self.lock();
        loop {
            let closed = s.closed;
            let Some(i) = s.subs.iter().position(|x| x.id == id) else {
                return Next::Closed;
            };
            if s.subs[i].restart {
                s.subs[i].restart = false;
                let (replay, last) = Hub::replay(&s);
                return Next::Restart(replay, last);
            }
            let sub = &mut s.subs[i];
            if !sub.queue.is_empty() {
                let last = sub.queue.back().map_or(0, |m| m.seq);
                let msgs = sub.queue.drain(..).map(|m| m.text).collect();
                return Next::Msgs(msgs, last);
            }
            if closed {
                return Next::Closed;
            }
            let now = Instant::now();
            if now >= deadline {
                return Next::Idle;
            }
            s = self
                .wake
                .wait_timeout(s, deadline - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// Page `id` has written everything up to `seq` to its socket.
    pub fn sent(&self, id: u64, seq: u64) {
        let mut guard = self.lock();
        let s = &mut *guard;
        if let Some(sub) = s.subs.iter_mut().find(|x| x.id == id) {
            sub.sent = sub.sent.max(seq);
            s.sent_to_any = s.sent_to_any.max(seq);
        }
        drop(guard);
        self.delivered.notify_all();
    }

    /// Page `id` is gone.
    pub fn unsubscribe(&self, id: u64) {
        self.lock().subs.retain(|x| x.id != id);
        self.delivered.notify_all();
    }

    /// Pages connected now.
    pub fn streams(&self) -> usize {
        self.lock().subs.len()
    }

    /// Whether a page has ever connected (it may be gone since).
    pub fn ever_subscribed(&self) -> bool {
        self.lock().next_sub > 0
    }

    /// Pages made to start over so far because they fell behind.
    pub fn restarts(&self) -> u64 {
        self.lock().restarts
    }

    /// Waits, at most `wait`, until every connected page has been sent every message
    /// published so far.
    pub fn drain(&self, wait: Duration) {
        let deadline = Instant::now() + wait;
        let mut s = self.lock();
        loop {
            let last = s.next_seq;
            if s.subs.iter().all(|x| x.sent >= last) {
                return;
            }
            let now = Instant::now();
            if now >= deadline {
                return;
            }
            s = self
                .delivered
                .wait_timeout(s, deadline - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// Waits, at most `wait`, until one page, connected now or later, has been sent every
    /// message published so far; whether one was.
    pub fn delivered_to_one(&self, wait: Duration) -> bool {
        let deadline = Instant::now() + wait;
        let mut s = self.lock();
        let last = s.next_seq;
        loop {
            if s.sent_to_any >= last {
                return true;
            }
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            s = self
                .delivered
                .wait_timeout(s, deadline - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// No more messages: every page's thread ends once it has written what is queued.
    pub fn close(&self) {
        self.lock().closed = true;
        self.wake.notify_all();
    }

    pub fn is_closed(&self) -> bool {
        self.lock().closed
    }

    /// Keeps an encoded camera frame (the oldest beyond [`FRAMES_KEPT`] go); its id.
    pub fn put_frame(&self, bytes: Vec<u8>) -> u64 {
        let mut s = self.lock();
        s.next_frame += 1;
        let id = s.next_frame;
        if s.frames.len() >= FRAMES_KEPT {
            s.frames.pop_front();
        }
        s.frames.push_back((id, Arc::new(bytes)));
        id
    }

    /// A kept frame.
    pub fn frame(&self, id: u64) -> Option<Arc<Vec<u8>>> {
        let s = self.lock();
        s.frames
            .iter()
            .find(|(k, _)| *k == id)
            .map(|(_, b)| b.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(n: &Next) -> Vec<String> {
        match n {
            Next::Msgs(m, _) | Next::Restart(m, _) => m.iter().map(|t| t.to_string()).collect(),
            _ => vec![],
        }
    }

    #[test]
    fn a_late_page_gets_the_log_and_the_newest_of_each_superseded_kind_in_order() {
        let hub = Hub::new();
        hub.set_hello("hello".into());
        hub.publish("a", Keep::Log, "a1".into());
        hub.publish("p", Keep::Latest, "p1".into());
        hub.publish("b", Keep::Log, "b1".into());
        hub.publish("p", Keep::Latest, "p2".into());
        let (_, replay, last) = hub.subscribe().unwrap();
        let replay: Vec<String> = replay.iter().map(|t| t.to_string()).collect();
        assert_eq!(replay, ["hello", "a1", "b1", "p2"]);
        assert_eq!(last, 4);
    }

    #[test]
    fn a_page_gets_what_is_published_after_it_connected_and_the_job_never_waits() {
        let hub = Hub::new();
        let (id, _, _) = hub.subscribe().unwrap();
        assert!(matches!(hub.next(id, Duration::ZERO), Next::Idle));
        hub.publish("a", Keep::Log, "a1".into());
        hub.publish("f", Keep::Frame, "f1".into());
        hub.publish("f", Keep::Frame, "f2".into());
        let n = hub.next(id, Duration::ZERO);
        assert_eq!(
            texts(&n),
            ["a1", "f2"],
            "the newer frame replaced the pending one"
        );
        // A page that never reads: its queue is bounded and it starts over.
        for k in 0..QUEUE + 10 {
            hub.publish("a", Keep::Log, format!("x{k}"));
        }
        assert_eq!(hub.restarts(), 1);
        let n = hub.next(id, Duration::ZERO);
        assert!(matches!(n, Next::Restart(..)));
        // The replay: the log and the newest frame, in the order they were published.
        assert_eq!(&texts(&n)[..3], ["a1", "f2", "x0"]);
        assert_eq!(texts(&n).len(), 2 + QUEUE + 10);
    }

    #[test]
    fn streams_are_bounded_and_a_closed_hub_ends_them_after_their_queue() {
        let hub = Hub::new();
        let ids: Vec<u64> = (0..MAX_STREAMS)
            .map(|_| hub.subscribe().unwrap().0)
            .collect();
        assert!(hub.subscribe().is_none());
        hub.unsubscribe(ids[0]);
        assert!(hub.subscribe().is_some());
        hub.publish("a", Keep::Log, "a1".into());
        hub.close();
        assert_eq!(texts(&hub.next(ids[1], Duration::ZERO)), ["a1"]);
        assert!(matches!(hub.next(ids[1], Duration::ZERO), Next::Closed));
    }

    #[test]
    fn drain_returns_once_every_page_was_sent_everything_or_at_its_deadline() {
        let hub = Arc::new(Hub::new());
        let (id, _, _) = hub.subscribe().unwrap();
        let seq = hub.publish("a", Keep::Log, "a1".into());
        let t = Instant::now();
        hub.drain(Duration::from_millis(50));
        assert!(t.elapsed() >= Duration::from_millis(50));
        let h = hub.clone();
        let writer = std::thread::spawn(move || {
            if let Next::Msgs(_, last) = h.next(id, Duration::from_secs(1)) {
                h.sent(id, last);
            }
        });
        hub.drain(Duration::from_secs(5));
        writer.join().unwrap();
        let t = Instant::now();
        hub.drain(Duration::from_secs(5));
        assert!(t.elapsed() < Duration::from_secs(1), "sent up to {seq}");
    }

    #[test]
    fn a_page_that_connects_late_and_leaves_still_counts_as_having_been_sent_everything() {
        let hub = Arc::new(Hub::new());
        hub.publish("a", Keep::Log, "a1".into());
        hub.publish("end", Keep::Log, "end".into());
        assert!(!hub.ever_subscribed());
        assert!(!hub.delivered_to_one(Duration::from_millis(20)));
        let h = hub.clone();
        let page = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            let (id, replay, last) = h.subscribe().unwrap();
            assert_eq!(replay.len(), 2);
            h.sent(id, last);
            h.unsubscribe(id);
        });
        let t = Instant::now();
        assert!(hub.delivered_to_one(Duration::from_secs(10)));
        assert!(t.elapsed() < Duration::from_secs(5));
        page.join().unwrap();
        assert!(hub.ever_subscribed());
        assert_eq!(hub.streams(), 0);
    }

    #[test]
    fn frames_are_kept_up_to_a_bound() {
        let hub = Hub::new();
        let ids: Vec<u64> = (0..FRAMES_KEPT + 2)
            .map(|k| hub.put_frame(vec![k as u8]))
            .collect();
        assert!(hub.frame(ids[0]).is_none());
        assert_eq!(
            hub.frame(ids[FRAMES_KEPT + 1]).unwrap().as_slice(),
            &[(FRAMES_KEPT + 1) as u8]
        );
    }
}
