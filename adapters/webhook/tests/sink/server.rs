//! A real HTTP/1.1 server on 127.0.0.1 that records what it receives and answers by script.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// One request as the server saw it.
#[derive(Debug, Clone)]
pub struct Captured {
    pub method: String,
    pub path: String,
    pub headers: hyper::HeaderMap,
    pub body: Vec<u8>,
}

impl Captured {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

/// What the server does with the n-th request (counting from 0).
pub enum Reply {
    /// Answer with this status, headers and body.
    Respond {
        status: u16,
        headers: Vec<(&'static str, String)>,
        body: Vec<u8>,
    },
    /// Never answer (until the test ends).
    Hang,
}

impl Reply {
    pub fn status(status: u16, body: &str) -> Self {
        Self::Respond {
            status,
            headers: Vec::new(),
            body: body.as_bytes().to_vec(),
        }
    }

    pub fn with_header(self, name: &'static str, value: impl Into<String>) -> Self {
        match self {
            Self::Respond {
                status,
                mut headers,
                body,
            } => {
                headers.push((name, value.into()));
                Self::Respond {
                    status,
                    headers,
                    body,
                }
            }
            Self::Hang => Self::Hang,
        }
    }
}

type Script = dyn Fn(usize, &Captured) -> Reply + Send + Sync;

pub struct TestServer {
    pub addr: SocketAddr,
    connections: Arc<AtomicUsize>,
    requests: Arc<Mutex<Vec<Captured>>>,
    task: JoinHandle<()>,
}

impl TestServer {
    /// Listens on 127.0.0.1 (an ephemeral port) and answers with `script`.
    pub async fn start(script: impl Fn(usize, &Captured) -> Reply + Send + Sync + 'static) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind loopback");
        let addr = listener.local_addr().expect("local addr");
        let connections = Arc::new(AtomicUsize::new(0));
        let requests: Arc<Mutex<Vec<Captured>>> = Arc::default();
        let script: Arc<Script> = Arc::new(script);
        let task = tokio::spawn({
            let connections = connections.clone();
            let requests = requests.clone();
            async move {
                loop {
                    let Ok((stream, _)) = listener.accept().await else {
                        return;
                    };
                    connections.fetch_add(1, Ordering::SeqCst);
                    let requests = requests.clone();
                    let script = script.clone();
                    tokio::spawn(async move {
                        let service = service_fn(move |req: Request<Incoming>| {
                            let requests = requests.clone();
                            let script = script.clone();
                            async move { Ok::<_, Infallible>(answer(req, &requests, &*script).await) }
                        });
                        let _ = http1::Builder::new()
                            .serve_connection(TokioIo::new(stream), service)
                            .await;
                    });
                }
            }
        });
        Self {
            addr,
            connections,
            requests,
            task,
        }
    }

    /// `http://127.0.0.1:PORT{path}`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// TCP connections accepted so far.
    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }

    /// Requests received so far.
    pub fn requests(&self) -> Vec<Captured> {
        self.requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn answer(
    req: Request<Incoming>,
    requests: &Mutex<Vec<Captured>>,
    script: &Script,
) -> Response<Full<Bytes>> {
    let method = req.method().to_string();
    let path = req
        .uri()
        .path_and_query()
        .map_or("/".to_string(), |p| p.to_string());
    let headers = req.headers().clone();
    let body = req
        .into_body()
        .collect()
        .await
        .map(|b| b.to_bytes().to_vec())
        .unwrap_or_default();
    let captured = Captured {
        method,
        path,
        headers,
        body,
    };
    let index = {
        let mut all = requests.lock().unwrap_or_else(PoisonError::into_inner);
        all.push(captured.clone());
        all.len() - 1
    };
    match script(index, &captured) {
        Reply::Respond {
            status,
            headers,
            body,
        } => {
            let mut response = Response::builder().status(status);
            for (name, value) in headers {
                response = response.header(name, value);
            }
            response
                .body(Full::new(Bytes::from(body)))
                .expect("valid test response")
        }
        Reply::Hang => std::future::pending().await,
    }
}
