//! What an event may say of a request: its method, its scheme, host and port, and its path.
//!
//! Never its query string (`?token=…`), its fragment, the user info of its URL
//! (`user:password@`), a header or its body.
//!
//! A log is no place for a credential.

use core::fmt;

use http::Method;

/// A request as an event shows it: `METHOD scheme://host[:port]/path`.
///
/// Or as much of it as the request's target has: `GET /orders` for a relative URI.
///
/// ```text
/// POST https://api.example.com:8443/orders/7
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Described<'a> {
    method: &'a Method,
    target: Target<'a>,
}

/// The request's target, as its face holds it.
#[derive(Clone, Copy, Debug)]
enum Target<'a> {
    /// An `http::Request`'s URI (tower): it may lack a scheme and an authority.
    #[cfg(feature = "tower")]
    Uri(&'a http::Uri),
    /// A `reqwest::Request`'s URL (reqwest-middleware): always absolute.
    #[cfg(feature = "reqwest-middleware")]
    Url(&'a reqwest::Url),
}

impl<'a> Described<'a> {
    /// A request to `uri` by `method`.
    #[cfg(feature = "tower")]
    pub(crate) fn uri(method: &'a Method, uri: &'a http::Uri) -> Self {
        Described {
            method,
            target: Target::Uri(uri),
        }
    }

    /// `request`, whatever its body (never read).
    #[cfg(all(test, feature = "tower"))]
    pub(crate) fn request<B>(request: &'a http::Request<B>) -> Self {
        Described::uri(request.method(), request.uri())
    }

    /// A request to `url` by `method` (`reqwest::Method` is `http::Method`).
    #[cfg(feature = "reqwest-middleware")]
    pub(crate) fn url(method: &'a reqwest::Method, url: &'a reqwest::Url) -> Self {
        Described {
            method,
            target: Target::Url(url),
        }
    }

    /// `request`, whatever its headers and body (never read).
    #[cfg(feature = "reqwest-middleware")]
    pub(crate) fn reqwest(request: &'a reqwest::Request) -> Self {
        Described::url(request.method(), request.url())
    }
}

impl fmt::Display for Described<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.method.as_str())?;
        f.write_str(" ")?;
        match self.target {
            #[cfg(feature = "tower")]
            Target::Uri(uri) => {
                // `Uri` keeps no fragment.
                //
                // Its authority may hold user info; its host does not (an IPv6 host keeps its
                // brackets).
                if let Some(scheme) = uri.scheme_str() {
                    write!(f, "{scheme}://")?;
                }
                if let Some(authority) = uri.authority() {
                    f.write_str(authority.host())?;
                    if let Some(port) = authority.port() {
                        write!(f, ":{}", port.as_str())?;
                    }
                }
                f.write_str(uri.path())
            }
            #[cfg(feature = "reqwest-middleware")]
            Target::Url(url) => {
                let scheme = url.scheme();
                if url.cannot_be_a_base() {
                    // `data:…`, `mailto:…`: what follows the scheme is no path, and may be
                    // anything.
                    return write!(f, "{scheme}:");
                }
                write!(f, "{scheme}://{}", url.host_str().unwrap_or(""))?;
                // The port written in the URL, unless it is the scheme's own.
                if let Some(port) = url.port() {
                    write!(f, ":{port}")?;
                }
                f.write_str(url.path())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `shown` must never say: the secrets the tests' URLs carry.
    fn assert_keeps_secrets(shown: &str) {
        for secret in ["user", "password", "token", "secret", "frag", "?", "#", "@"] {
            assert!(!shown.contains(secret), "{secret} in {shown}");
        }
    }

    #[cfg(feature = "tower")]
    mod uri {
        use super::*;

        fn shown(method: Method, uri: &str) -> String {
            let uri: http::Uri = uri.parse().unwrap();
            let shown = Described::uri(&method, &uri).to_string();
            assert_keeps_secrets(&shown);
            shown
        }

        #[test]
        fn user_info_is_left_out() {
            assert_eq!(
                shown(Method::POST, "http://user:password@example.com/orders"),
                "POST http://example.com/orders"
            );
        }

        #[test]
        fn the_query_and_the_fragment_are_left_out() {
            assert_eq!(
                shown(Method::GET, "https://example.com/a/b?token=secret#frag"),
                "GET https://example.com/a/b"
            );
            assert_eq!(
                shown(Method::GET, "https://example.com?token=secret"),
                "GET https://example.com/"
            );
        }

        #[test]
        fn a_port_and_an_ipv6_host_are_kept() {
            assert_eq!(
                shown(Method::PUT, "http://example.com:8080/x?token=secret"),
                "PUT http://example.com:8080/x"
            );
            assert_eq!(
                shown(Method::DELETE, "http://[::1]:9000/x/7#frag"),
                "DELETE http://[::1]:9000/x/7"
            );
            assert_eq!(
                shown(Method::GET, "http://user:password@[2001:db8::1]/"),
                "GET http://[2001:db8::1]/"
            );
        }

        #[test]
        fn a_relative_uri_shows_its_path_alone() {
            assert_eq!(
                shown(Method::PATCH, "/orders/7?token=secret"),
                "PATCH /orders/7"
            );
            assert_eq!(shown(Method::GET, "/"), "GET /");
        }

        #[test]
        fn an_authority_form_shows_host_and_port() {
            assert_eq!(
                shown(Method::CONNECT, "example.com:443"),
                "CONNECT example.com:443"
            );
        }

        #[test]
        fn a_request_s_headers_and_body_are_never_read() {
            let request = http::Request::post("http://user:password@example.com/pay?token=secret")
                .header(http::header::AUTHORIZATION, "Bearer secret")
                .header("x-api-key", "secret")
                .body("card=secret")
                .unwrap();
            let shown = Described::request(&request).to_string();
            assert_keeps_secrets(&shown);
            assert_eq!(shown, "POST http://example.com/pay");
        }
    }

    #[cfg(feature = "reqwest-middleware")]
    mod url {
        use super::*;

        fn shown(method: Method, url: &str) -> String {
            let url = reqwest::Url::parse(url).unwrap();
            let shown = Described::url(&method, &url).to_string();
            assert_keeps_secrets(&shown);
            shown
        }

        #[test]
        fn user_info_is_left_out() {
            assert_eq!(
                shown(Method::POST, "https://user:password@example.com/orders"),
                "POST https://example.com/orders"
            );
            assert_eq!(
                shown(Method::POST, "https://user@example.com/orders"),
                "POST https://example.com/orders"
            );
        }

        #[test]
        fn the_query_and_the_fragment_are_left_out() {
            assert_eq!(
                shown(Method::GET, "https://example.com/a/b?token=secret#frag"),
                "GET https://example.com/a/b"
            );
            assert_eq!(
                shown(Method::GET, "https://example.com?token=secret"),
                "GET https://example.com/"
            );
        }

        #[test]
        fn a_port_and_an_ipv6_host_are_kept_the_scheme_s_own_port_is_not() {
            assert_eq!(
                shown(Method::PUT, "http://example.com:8080/x?token=secret"),
                "PUT http://example.com:8080/x"
            );
            assert_eq!(
                shown(Method::GET, "http://example.com:80/x"),
                "GET http://example.com/x"
            );
            assert_eq!(
                shown(Method::DELETE, "http://user:password@[::1]:9000/x/7#frag"),
                "DELETE http://[::1]:9000/x/7"
            );
        }

        #[test]
        fn an_opaque_url_shows_its_scheme_alone() {
            assert_eq!(
                shown(Method::GET, "data:text/plain,token=secret"),
                "GET data:"
            );
        }

        #[test]
        fn a_request_s_headers_and_body_are_never_read() {
            let url = reqwest::Url::parse("http://user:password@127.0.0.1:3000/pay?token=secret")
                .unwrap();
            let mut request = reqwest::Request::new(Method::POST, url);
            request.headers_mut().insert(
                http::header::AUTHORIZATION,
                http::HeaderValue::from_static("Bearer secret"),
            );
            *request.body_mut() = Some(reqwest::Body::from("card=secret"));
            let shown = Described::reqwest(&request).to_string();
            assert_keeps_secrets(&shown);
            assert_eq!(shown, "POST http://127.0.0.1:3000/pay");
        }
    }
}
