//! The review page at `/` (docs/review.md): plain HTML, CSS and JavaScript modules built into
//! the binary, so the page works offline and needs no CDN, no font and no build step. The files
//! hold no data; the page reads everything through the JSON API with the bearer token it was
//! opened with.

use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};

/// A file of the page: its path, media type and content.
struct Asset {
    path: &'static str,
    media: &'static str,
    body: &'static str,
}

const ASSETS: &[Asset] = &[
    Asset { path: "/", media: "text/html; charset=utf-8", body: include_str!("../ui/index.html") },
    Asset { path: "/ui/app.css", media: "text/css; charset=utf-8", body: include_str!("../ui/app.css") },
    Asset { path: "/ui/app.js", media: "text/javascript; charset=utf-8", body: include_str!("../ui/app.js") },
    Asset { path: "/ui/views.js", media: "text/javascript; charset=utf-8", body: include_str!("../ui/views.js") },
    Asset { path: "/ui/diff.js", media: "text/javascript; charset=utf-8", body: include_str!("../ui/diff.js") },
    Asset { path: "/ui/charts.js", media: "text/javascript; charset=utf-8", body: include_str!("../ui/charts.js") },
];

/// The page allows itself nothing from elsewhere: scripts, styles and calls from this origin.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
                   connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// Whether `path` is one of the page's files (served without the token: they hold no data).
pub fn is_asset(path: &str) -> bool {
    ASSETS.iter().any(|a| a.path == path)
}

/// The actor of decisions made on the page, from the server's default actor: `cli:ana` → `ui:ana`.
pub fn actor(default_actor: &str) -> String {
    let user = default_actor.split_once(':').map_or(default_actor, |(_, user)| user);
    format!("ui:{user}")
}

fn serve(asset: &'static Asset) -> Response {
    let mut response = asset.body.into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(asset.media));
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    // The files change with the binary: a browser asks again rather than keep an old page.
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// The page's routes (GET only).
pub fn router<S: Clone + Send + Sync + 'static>() -> axum::Router<S> {
    let mut router = axum::Router::new();
    for asset in ASSETS {
        router = router.route(asset.path, axum::routing::get(move || async move { serve(asset) }));
    }
    router
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_acts_as_ui_and_the_user() {
        assert_eq!(actor("cli:ana"), "ui:ana");
        assert_eq!(actor("ana"), "ui:ana");
        assert_eq!(actor("agent:claude:1"), "ui:claude:1");
    }

    #[test]
    fn every_module_the_page_imports_is_served() {
        for asset in ASSETS.iter().filter(|a| a.path.ends_with(".js") || a.path == "/") {
            for import in asset.body.split(['"', '\'']).filter(|s| s.starts_with("/ui/") || s.starts_with("./")) {
                let path = import.strip_prefix('.').map_or(import.to_string(), |p| format!("/ui{p}"));
                if path.ends_with(".js") || path.ends_with(".css") {
                    assert!(is_asset(&path), "{} refers to {path}, which is not served", asset.path);
                }
            }
        }
    }
}
