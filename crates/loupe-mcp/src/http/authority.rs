//! Strict `Host` and `Origin` checks against DNS rebinding (§11), before anything else reads a
//! request.
//!
//! One parser for both headers' authorities (`host[:port]`): the syntax `http::uri::Authority`
//! accepts, minus what a browser or an HTTP client never sends for a server it reached by name:
//! userinfo (`evil.com@localhost`), an empty or out-of-range port (`:0`, `:65536`), an empty
//! host. A request names exactly one `Host`; an `Origin`, when present, is exactly one
//! `http://` or `https://` origin with no path. The host must be one this server answers to.
//! Anything else is refused with 403 and a sentence saying which header was wrong and why; the
//! header's value is never echoed.

use std::str::FromStr;

use axum::http::uri::{Authority, Uri};
use axum::http::{HeaderMap, header};

/// Why a request was refused: the text of its 403.
pub(crate) type Refusal = String;

/// The host names a request may use (lower case; IPv6 addresses without brackets).
#[derive(Debug, Clone)]
pub(crate) struct AllowedHosts {
    names: Vec<String>,
}

impl AllowedHosts {
    pub(crate) fn new(names: impl IntoIterator<Item = String>) -> AllowedHosts {
        let mut names: Vec<String> = names.into_iter().map(|name| unbracketed(&name).to_ascii_lowercase()).collect();
        names.sort();
        names.dedup();
        AllowedHosts { names }
    }

    fn allows(&self, host: &str) -> bool {
        self.names.iter().any(|name| name == host)
    }

    /// `Ok` when `headers` (and an absolute-form request target's authority) name this server.
    pub(crate) fn check(&self, uri: &Uri, headers: &HeaderMap) -> Result<(), Refusal> {
        let mut hosts = headers.get_all(header::HOST).iter();
        let (Some(host), None) = (hosts.next(), hosts.next()) else {
            return Err(refusal("Host", "a request must carry exactly one Host header"));
        };
        let host = host.to_str().map_err(|_| refusal("Host", "it is not plain ASCII"))?;
        self.check_authority("Host", host)?;
        if let Some(target) = uri.authority() {
            self.check_authority("request target", target.as_str())?;
        }
        let mut origins = headers.get_all(header::ORIGIN).iter();
        match (origins.next(), origins.next()) {
            (None, _) => Ok(()),
            (Some(origin), None) => {
                let origin = origin.to_str().map_err(|_| refusal("Origin", "it is not plain ASCII"))?;
                self.check_origin(origin)
            }
            (Some(_), Some(_)) => Err(refusal("Origin", "a request may carry at most one Origin header")),
        }
    }

    fn check_origin(&self, origin: &str) -> Result<(), Refusal> {
        let uri = Uri::from_str(origin).map_err(|_| refusal("Origin", "it is not an origin (scheme://host[:port])"))?;
        if !matches!(uri.scheme_str(), Some("http" | "https")) {
            return Err(refusal("Origin", "its scheme is not http or https"));
        }
        // An origin is scheme and authority only: `Uri` reads "http://h" with path "/", and a
        // text with a path, a query or a fragment is not an origin.
        let authority = uri.authority().ok_or_else(|| refusal("Origin", "it names no host"))?;
        let bare = origin.len() == uri.scheme_str().map_or(0, str::len) + "://".len() + authority.as_str().len();
        if !bare {
            return Err(refusal("Origin", "an origin has no path, query or fragment"));
        }
        self.check_authority("Origin", authority.as_str())
    }

    fn check_authority(&self, header: &str, text: &str) -> Result<(), Refusal> {
        let host = parse_authority(text).map_err(|why| refusal(header, why))?;
        if self.allows(&host) {
            return Ok(());
        }
        Err(refusal(
            header,
            "it names a host this server does not answer to (loopback, the bind address, or a name given with \
             --allow-host)",
        ))
    }
}

/// The host of `host[:port]` (lower case, IPv6 without brackets), or why it is not one.
fn parse_authority(text: &str) -> Result<String, &'static str> {
    let authority = Authority::from_str(text).map_err(|_| "it is not a valid host[:port]")?;
    if text.contains('@') {
        return Err("it carries userinfo (`name@`), which names no server");
    }
    let host = authority.host();
    if host.is_empty() {
        return Err("it names no host");
    }
    let rest = &text[host.len()..];
    if let Some(port) = rest.strip_prefix(':') {
        let valid = !port.is_empty() && port.len() <= 5 && port.bytes().all(|byte| byte.is_ascii_digit());
        if !valid || !(1..=65535).contains(&port.parse::<u32>().unwrap_or(0)) {
            return Err("its port is not a number from 1 to 65535");
        }
    } else if !rest.is_empty() {
        return Err("it is not a valid host[:port]");
    }
    Ok(unbracketed(host).to_ascii_lowercase())
}

fn unbracketed(host: &str) -> &str {
    host.strip_prefix('[').and_then(|host| host.strip_suffix(']')).unwrap_or(host)
}

fn refusal(header: &str, why: &str) -> Refusal {
    format!(
        "loupe refused this request: its {header} is not accepted: {why}. A client on this machine reaches loupe \
         as http://127.0.0.1:PORT/mcp or http://localhost:PORT/mcp; another name needs `loupe serve --allow-host NAME`.\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn allowed() -> AllowedHosts {
        AllowedHosts::new(["localhost", "127.0.0.1", "::1", "dev.example.com"].map(str::to_owned))
    }

    fn check(pairs: &[(&str, &str)]) -> Result<(), Refusal> {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.append(axum::http::HeaderName::from_str(name).unwrap(), HeaderValue::from_str(value).unwrap());
        }
        allowed().check(&Uri::from_static("/mcp"), &headers)
    }

    #[test]
    fn hosts_this_server_answers_to_pass() {
        for host in
            ["127.0.0.1:8765", "localhost:1", "LOCALHOST:65535", "[::1]:8765", "localhost", "dev.example.com:443"]
        {
            assert_eq!(check(&[("host", host)]), Ok(()), "{host}");
        }
        for origin in ["http://localhost:3000", "https://127.0.0.1", "http://[::1]:9"] {
            assert_eq!(check(&[("host", "localhost:8765"), ("origin", origin)]), Ok(()), "{origin}");
        }
    }

    #[test]
    fn malformed_or_foreign_authorities_are_refused() {
        for host in [
            "evil.com@localhost:8765",
            "localhost:0",
            "localhost:65536",
            "localhost:99999",
            "localhost:",
            "localhost:+80",
            "evil.com",
            "localhost.evil.com:8765",
            "",
            ":8765",
        ] {
            let refused = check(&[("host", host)]).expect_err(host);
            assert!(refused.contains("its Host is not accepted") && !refused.contains("evil"), "{host}: {refused}");
        }
        assert!(check(&[]).unwrap_err().contains("exactly one Host"));
        assert!(check(&[("host", "localhost:1"), ("host", "localhost:1")]).unwrap_err().contains("exactly one Host"));
        for origin in [
            "http://evil.com@localhost:3000",
            "http://localhost:70000",
            "http://localhost:0",
            "ftp://localhost:3000",
            "null",
            "http://localhost:3000/path",
            "http://evil.com",
            "localhost:3000",
        ] {
            let refused = check(&[("host", "localhost:1"), ("origin", origin)]).expect_err(origin);
            assert!(refused.contains("Origin"), "{origin}: {refused}");
        }
        let two = check(&[("host", "localhost:1"), ("origin", "http://localhost"), ("origin", "http://localhost")]);
        assert!(two.unwrap_err().contains("at most one Origin"));
    }

    #[test]
    fn an_absolute_request_target_must_name_this_server_too() {
        let mut headers = HeaderMap::new();
        headers.insert(header::HOST, HeaderValue::from_static("localhost:8765"));
        let foreign = Uri::from_static("http://evil.com/mcp");
        assert!(allowed().check(&foreign, &headers).unwrap_err().contains("request target"));
        assert_eq!(allowed().check(&Uri::from_static("http://localhost:8765/mcp"), &headers), Ok(()));
    }
}
