//! A small keep-alive HTTP/1 client for the API of a `posthorn` process.

use std::time::Duration;

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::header::HeaderMap;
use hyper::{Method, Request};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;

/// Limit on one request, answer included.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(15);

/// A status, the headers and a JSON body (`Null` when empty or not JSON).
#[derive(Debug, Clone)]
pub struct Answer {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Value,
}

impl Answer {
    /// Whether the status is 2xx.
    pub fn ok(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The header `name` (case-insensitive), when present and readable as text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

/// Talks to one base URL (`http://127.0.0.1:port`).
#[derive(Clone)]
pub struct Api {
    client: Client<HttpConnector, Full<Bytes>>,
    base: String,
}

impl Api {
    pub fn new(port: u16) -> Api {
        let mut connector = HttpConnector::new();
        connector.set_nodelay(true);
        let client = Client::builder(TokioExecutor::new())
            .pool_max_idle_per_host(32)
            .pool_idle_timeout(Duration::from_secs(30))
            .build(connector);
        Api {
            client,
            base: format!("http://127.0.0.1:{port}"),
        }
    }

    /// One request; `Err` on a transport failure or time-out (no answer at all).
    pub async fn call(
        &self,
        method: Method,
        path: &str,
        token: Option<&str>,
        body: Option<&Value>,
    ) -> Result<Answer, String> {
        self.call_with_headers(method, path, token, body, &[]).await
    }

    /// [`Api::call`] with extra request headers (`(name, value)`).
    pub async fn call_with_headers(
        &self,
        method: Method,
        path: &str,
        token: Option<&str>,
        body: Option<&Value>,
        headers: &[(&str, &str)],
    ) -> Result<Answer, String> {
        let mut builder = Request::builder()
            .method(method.clone())
            .uri(format!("{}{path}", self.base));
        if let Some(token) = token {
            builder = builder.header("authorization", format!("Bearer {token}"));
        }
        for (name, value) in headers {
            builder = builder.header(*name, *value);
        }
        let bytes = match body {
            Some(body) => {
                builder = builder.header("content-type", "application/json");
                Bytes::from(body.to_string())
            }
            None => Bytes::new(),
        };
        let request = builder
            .body(Full::new(bytes))
            .map_err(|e| format!("building {method} {path}: {e}"))?;
        let exchange = async {
            let response = self
                .client
                .request(request)
                .await
                .map_err(|e| format!("{method} {path}: {e:?}"))?;
            let status = response.status().as_u16();
            let headers = response.headers().clone();
            let collected = response
                .into_body()
                .collect()
                .await
                .map_err(|e| format!("{method} {path}: reading the body: {e}"))?
                .to_bytes();
            let body = serde_json::from_slice(&collected).unwrap_or(Value::Null);
            Ok(Answer {
                status,
                headers,
                body,
            })
        };
        tokio::time::timeout(REQUEST_TIMEOUT, exchange)
            .await
            .map_err(|_| format!("{method} {path}: no answer within {REQUEST_TIMEOUT:?}"))?
    }

    /// A request that must be answered with `status`; panics with the body otherwise.
    pub async fn expect(
        &self,
        status: u16,
        method: Method,
        path: &str,
        token: Option<&str>,
        body: Option<&Value>,
    ) -> Value {
        let answer = self
            .call(method.clone(), path, token, body)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            answer.status, status,
            "{method} {path}: unexpected status; body: {}",
            answer.body
        );
        answer.body
    }
}
