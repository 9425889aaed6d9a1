use super::*;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};

/// A loopback server that answers every connection with `response`, then closes it.
fn answering(response: &'static [u8]) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut request = [0; 4096];
            let _ = stream.read(&mut request);
            let _ = stream.write_all(response);
        }
    });
    addr
}

async fn text_of(response: &'static [u8]) -> reqwest::Error {
    let url = format!("http://{}/", answering(response));
    let resp = reqwest::get(url).await.expect("a head");
    resp.text().await.expect_err("a body error")
}

#[tokio::test]
async fn a_body_cut_mid_way_is_retried_as_an_unexpected_eof() {
    let err = text_of(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n0123456789").await;
    assert!(err.is_decode(), "{err:?}");
    assert_eq!(err.decision(), Decision::Retry, "{err:?}");
    let chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nabc";
    assert_eq!(text_of(chunked).await.decision(), Decision::Retry);
}

#[tokio::test]
async fn a_malformed_or_undecodable_complete_body_is_not_retried() {
    let bad_chunks = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n";
    let err = text_of(bad_chunks).await;
    assert_eq!(err.decision(), Decision::Stop, "{err:?}");

    let url = format!(
        "http://{}/",
        answering(b"HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\nnot json")
    );
    let err = reqwest::get(url).await.unwrap().json::<u32>().await;
    let err = err.expect_err("not JSON");
    assert!(err.is_decode());
    assert_eq!(err.decision(), Decision::Stop, "{err:?}");
}

#[tokio::test]
async fn https_without_tls_is_not_retried() {
    let err = reqwest::get("https://127.0.0.1:1/")
        .await
        .expect_err("no TLS");
    assert!(
        err.is_connect(),
        "reqwest calls it a connect error: {err:?}"
    );
    assert_eq!(err.decision(), Decision::Stop, "{err:?}");
}

#[tokio::test]
async fn a_head_that_cannot_be_parsed_is_not_retried() {
    let status = answering(b"HTTP/1.1 2x0 OK\r\nContent-Length: 0\r\n\r\n");
    let err = reqwest::get(format!("http://{status}/"))
        .await
        .expect_err("bad");
    assert_eq!(err.decision(), Decision::Stop, "{err:?}");
    let header = answering(b"HTTP/1.1 200 OK\r\nBad Header: x\r\n\r\n");
    let err = reqwest::get(format!("http://{header}/"))
        .await
        .expect_err("bad");
    assert_eq!(err.decision(), Decision::Stop, "{err:?}");
}

#[tokio::test]
async fn a_connection_closed_before_the_head_is_retried() {
    let err = reqwest::get(format!("http://{}/", answering(b"")))
        .await
        .expect_err("no head");
    assert_eq!(err.decision(), Decision::Retry, "{err:?}");
}

#[tokio::test]
async fn check_keeps_the_server_s_word_and_decides_as_classify_response() {
    let cases: [(&'static [u8], Option<bool>, Decision); 5] = [
        (
            b"HTTP/1.1 503 Service Unavailable\r\nx-should-retry: true\r\nx-should-retry: false\r\nContent-Length: 0\r\n\r\n",
            Some(false),
            Decision::Stop,
        ),
        (
            b"HTTP/1.1 503 Service Unavailable\r\nx-envoy-overloaded: true\r\nContent-Length: 0\r\n\r\n",
            Some(false),
            Decision::Stop,
        ),
        (
            b"HTTP/1.1 409 Conflict\r\nstripe-should-retry: true\r\nRetry-After: 2\r\nContent-Length: 0\r\n\r\n",
            Some(true),
            Decision::RetryAfter(Duration::from_secs(2)),
        ),
        (
            b"HTTP/1.1 500 Internal Server Error\r\nstripe-should-retry: true\r\nstripe-should-retry: false\r\nContent-Length: 0\r\n\r\n",
            Some(false),
            Decision::Stop,
        ),
        (
            b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 4\r\n\r\nbusy",
            None,
            Decision::Retry,
        ),
    ];
    for (response, said, decision) in cases {
        let url = format!("http://{}/", answering(response));
        let resp = reqwest::get(url).await.expect("a head");
        let err = check(resp).await.expect_err("not a success");
        assert_eq!(err.server_says_retry, said, "{err}");
        assert_eq!(err.decision(), decision, "{err}");
        assert_eq!(Error::from(err).decision(), decision);
    }
    let said = StatusError {
        status: StatusCode::SERVICE_UNAVAILABLE,
        retry_after: None,
        server_says_retry: Some(false),
        body: "down".into(),
    };
    assert_eq!(
        said.to_string(),
        "HTTP 503 Service Unavailable (the server says not to retry): down"
    );
}

#[test]
fn each_message_is_printed_once_down_the_source_chain() {
    fn messages(e: &(dyn StdError + 'static)) -> Vec<String> {
        let mut out = vec![e.to_string()];
        let mut cause = e.source();
        while let Some(c) = cause {
            out.push(c.to_string());
            cause = c.source();
        }
        out
    }
    let inner = reqwest::Client::new().get("not a url").build().unwrap_err();
    let want = messages(&inner);
    let e = Error::from(inner);
    assert_eq!(messages(&e), want);
    assert!(want.len() >= 2, "{want:?}");
    for (i, m) in want.iter().enumerate() {
        assert!(!want[i + 1..].iter().any(|later| later.contains(m.as_str())));
    }
    let status = Error::from(StatusError {
        status: StatusCode::SERVICE_UNAVAILABLE,
        retry_after: None,
        server_says_retry: None,
        body: "down".into(),
    });
    assert_eq!(messages(&status), ["HTTP 503 Service Unavailable: down"]);
    assert_eq!(messages(&Error::from(TimedOut)), ["the attempt timed out"]);
}

#[test]
fn the_kept_text_is_bounded_and_never_ends_in_half_a_character() {
    assert_eq!(text(b"plain".to_vec()), "plain");
    assert_eq!(text("caf\u{e9}".as_bytes()[..4].to_vec()), "caf");
    assert_eq!(text("\u{1F600}".as_bytes()[..3].to_vec()), "");
    assert_eq!(text("a\u{1F600}".as_bytes().to_vec()), "a\u{1F600}");
    assert_eq!(text(vec![b'x', 0xFF, b'y']), "x\u{FFFD}y");
    let garbage = text(vec![0xFF; MAX_ERROR_BODY]);
    assert!(garbage.len() <= MAX_ERROR_BODY && garbage.starts_with('\u{FFFD}'));
}
