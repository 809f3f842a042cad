//! The fake GitHub and GitLab: what they hold (`Hub`) and the one HTTP server in this process
//! that answers both, GitHub's through the `gh` stand-in (gh.rs), GitLab's API directly
//! (gitlab_api.rs).

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex, MutexGuard};

/// A comment on a GitHub pull request.
pub struct Comment {
    pub id: u64,
    pub issue: u64,
    pub body: String,
    pub bot: bool,
}

/// A GitHub workflow run and the artifacts its jobs uploaded: name, then files.
pub struct Run {
    pub id: u64,
    pub head_sha: String,
    pub artifacts: BTreeMap<String, Vec<(String, Vec<u8>)>>,
}

/// A note on a GitLab merge request.
pub struct Note {
    pub id: u64,
    pub mr: u64,
    pub body: String,
}

/// A GitLab merge request.
pub struct Mr {
    pub iid: u64,
    pub state: String,
    pub merge_commit_sha: Option<String>,
    pub head_pipeline: Option<u64>,
}

/// A GitLab job and the artifacts it kept, by path.
pub struct GlJob {
    pub id: u64,
    pub pipeline: u64,
    pub name: String,
    pub status: String,
    pub artifacts: BTreeMap<String, Vec<u8>>,
}

/// Everything both forges hold.
#[derive(Default)]
pub struct Hub {
    next_id: u64,
    pub comments: Vec<Comment>,
    pub runs: Vec<Run>,
    pub notes: Vec<Note>,
    pub mrs: Vec<Mr>,
    pub jobs: Vec<GlJob>,
}

impl Hub {
    /// A new id, unique across everything the hub holds.
    pub fn id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }
}

pub struct Fake {
    pub url: String,
    hub: Arc<Mutex<Hub>>,
}

impl Fake {
    pub fn start() -> Fake {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let hub = Arc::new(Mutex::new(Hub {
            next_id: 5000,
            ..Hub::default()
        }));
        let shared = hub.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let hub = shared.clone();
                std::thread::spawn(move || answer(stream, &hub));
            }
        });
        Fake { url, hub }
    }

    pub fn hub(&self) -> MutexGuard<'_, Hub> {
        self.hub.lock().unwrap()
    }
}

pub struct Request {
    pub method: String,
    pub path: String,
    pub query: Vec<(String, String)>,
    pub headers: BTreeMap<String, String>,
    pub body: Vec<u8>,
}

impl Request {
    pub fn query(&self, key: &str) -> Option<&str> {
        param(&self.query, key)
    }
}

/// The value of `key` in a decoded form (query string).
pub fn param<'a>(pairs: &'a [(String, String)], key: &str) -> Option<&'a str> {
    pairs
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

/// `application/x-www-form-urlencoded` decoding.
fn decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < b.len() => {
                out.push(u8::from_str_radix(&s[i + 1..i + 3], 16).unwrap());
                i += 2;
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8(out).unwrap()
}

/// A form (query string, urlencoded body): its pairs, decoded, in order.
pub fn form(s: &str) -> Vec<(String, String)> {
    s.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (decode(k), decode(v))
        })
        .collect()
}

fn answer(mut stream: TcpStream, hub: &Mutex<Hub>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_string();
    let target = parts.next().unwrap_or("/").to_string();
    let mut headers = BTreeMap::new();
    loop {
        let mut h = String::new();
        reader.read_line(&mut h).unwrap();
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
        }
    }
    if headers
        .get("expect")
        .is_some_and(|v| v.eq_ignore_ascii_case("100-continue"))
    {
        stream.write_all(b"HTTP/1.1 100 Continue\r\n\r\n").unwrap();
    }
    let len = headers
        .get("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; len];
    reader.read_exact(&mut body).unwrap();
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    let req = Request {
        method,
        path: path.to_string(),
        query: form(query),
        headers,
        body,
    };
    let (status, bytes) = route(&req, &mut hub.lock().unwrap());
    let head = format!(
        "HTTP/1.1 {status} {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        if status < 300 { "OK" } else { "Error" },
        bytes.len()
    );
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(&bytes);
}

/// `POST /gh` is the `gh` stand-in; the rest, GitLab's API.
fn route(req: &Request, hub: &mut Hub) -> (u16, Vec<u8>) {
    if req.path == "/gh" {
        crate::gh::answer(req, hub)
    } else {
        crate::gitlab_api::answer(req, hub)
    }
}
