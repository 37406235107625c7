//! The web page at `/`: plain files compiled into the binary, so a user builds nothing.

use axum::http::header;
use axum::response::IntoResponse;

const INDEX: &str = include_str!("page/index.html");
const SCRIPT: &str = include_str!("page/app.js");
const MARKDOWN: &str = include_str!("page/markdown.js");
const DIFF: &str = include_str!("page/diff.js");
const CHILDREN: &str = include_str!("page/children.js");
const STYLE: &str = include_str!("page/style.css");

/// Scripts only from this origin, no inline script, nothing framed: text the page shows
/// comes from models and tools and must never run.
const POLICY: &str = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'";

pub async fn index() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "text/html; charset=utf-8"), (header::CONTENT_SECURITY_POLICY, POLICY)], INDEX)
}

pub async fn script() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "text/javascript; charset=utf-8")], SCRIPT)
}

pub async fn markdown() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "text/javascript; charset=utf-8")], MARKDOWN)
}

pub async fn diff() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "text/javascript; charset=utf-8")], DIFF)
}

pub async fn children() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "text/javascript; charset=utf-8")], CHILDREN)
}

pub async fn style() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "text/css; charset=utf-8")], STYLE)
}
