//! Go's URL handling, as the Argo Rollouts controller runs it on a plugin location.
//!
//! A port of Go 1.24's `net/url` (`ParseRequestURI`, `Parse` and what they call: scheme,
//! authority, user info, host, IP literal and escape rules), and of the checks `net/http`
//! makes on a request before it depends on the network: `http.NewRequest`, the missing host,
//! `removeEmptyPort`, the Host header's Punycode conversion (`x/net/idna`'s Punycode profile)
//! and the port the dialer accepts. Argo Rollouts v1.9.1 is built with Go 1.24; `net/url`
//! answers differ between Go releases, so `conformance/differential` compares this module
//! with Go 1.24.13 itself on a corpus of locations.
//!
//! Go strings are bytes: escapes may decode to any byte, and messages show invalid UTF-8 as
//! Go does (one U+FFFD per invalid byte).

use std::net::Ipv6Addr;

/// A URL as `parse` splits it (only the parts the controller uses).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Url {
    /// Lower case, as Go stores it.
    pub scheme: String,
    pub opaque: Vec<u8>,
    /// The host with its port, unescaped.
    pub host: Vec<u8>,
    /// Unescaped.
    pub path: Vec<u8>,
    /// As written, after `?`.
    pub raw_query: Vec<u8>,
    pub has_user: bool,
}

/// Why a URL is refused, in Go's words.
pub type UrlError = String;

/// `url.ParseRequestURI`: an absolute URI or an absolute path, no fragment.
pub fn parse_request_uri(raw: &str) -> Result<Url, UrlError> {
    parse(raw.as_bytes(), true)
}

/// `url.Parse`: a URL reference, with an optional `#fragment`.
pub fn parse_url(raw: &str) -> Result<Url, UrlError> {
    let bytes = raw.as_bytes();
    let (url, fragment) = match bytes.iter().position(|&c| c == b'#') {
        Some(at) => (&bytes[..at], Some(&bytes[at + 1..])),
        None => (bytes, None),
    };
    let parsed = parse(url, false)?;
    if let Some(fragment) = fragment.filter(|f| !f.is_empty()) {
        unescape(fragment, Mode::Fragment)?;
    }
    Ok(parsed)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Path,
    UserPassword,
    Host,
    Zone,
    Fragment,
}

fn contains_ctl_byte(s: &[u8]) -> bool {
    s.iter().any(|&b| b < b' ' || b == 0x7f)
}

/// `getScheme`: `scheme:` when the text starts with one.
fn get_scheme(raw: &[u8]) -> Result<(&[u8], &[u8]), UrlError> {
    for (i, &c) in raw.iter().enumerate() {
        match c {
            b'a'..=b'z' | b'A'..=b'Z' => {}
            b'0'..=b'9' | b'+' | b'-' | b'.' => {
                if i == 0 {
                    return Ok((b"", raw));
                }
            }
            b':' => {
                if i == 0 {
                    return Err("missing protocol scheme".to_owned());
                }
                return Ok((&raw[..i], &raw[i + 1..]));
            }
            _ => return Ok((b"", raw)),
        }
    }
    Ok((b"", raw))
}

/// `parse(rawURL, viaRequest)`.
fn parse(raw: &[u8], via_request: bool) -> Result<Url, UrlError> {
    if contains_ctl_byte(raw) {
        return Err("net/url: invalid control character in URL".to_owned());
    }
    if raw.is_empty() && via_request {
        return Err("empty url".to_owned());
    }
    let mut url = Url {
        scheme: String::new(),
        opaque: Vec::new(),
        host: Vec::new(),
        path: Vec::new(),
        raw_query: Vec::new(),
        has_user: false,
    };
    if raw == b"*" {
        url.path = b"*".to_vec();
        return Ok(url);
    }
    let (scheme, rest) = get_scheme(raw)?;
    url.scheme = String::from_utf8_lossy(scheme).to_ascii_lowercase();
    let question_marks = rest.iter().filter(|&&c| c == b'?').count();
    let rest: &[u8] = if rest.ends_with(b"?") && question_marks == 1 {
        &rest[..rest.len() - 1]
    } else {
        match rest.iter().position(|&c| c == b'?') {
            Some(at) => {
                url.raw_query = rest[at + 1..].to_vec();
                &rest[..at]
            }
            None => rest,
        }
    };
    if !rest.starts_with(b"/") {
        if !url.scheme.is_empty() {
            // Rootless paths are opaque (RFC 3986).
            url.opaque = rest.to_vec();
            return Ok(url);
        }
        if via_request {
            return Err("invalid URI for request".to_owned());
        }
        let segment = rest.split(|&c| c == b'/').next().unwrap_or_default();
        if segment.contains(&b':') {
            return Err("first path segment in URL cannot contain colon".to_owned());
        }
    }
    let mut rest = rest;
    if (!url.scheme.is_empty() || !via_request && !rest.starts_with(b"///"))
        && rest.starts_with(b"//")
    {
        let authority_and_path = &rest[2..];
        let (authority, path) = match authority_and_path.iter().position(|&c| c == b'/') {
            Some(at) => authority_and_path.split_at(at),
            None => (authority_and_path, &b""[..]),
        };
        let (has_user, host) = parse_authority(authority)?;
        url.has_user = has_user;
        url.host = host;
        rest = path;
    }
    url.path = unescape(rest, Mode::Path)?;
    Ok(url)
}

/// `parseAuthority`: optional user information, then the host.
fn parse_authority(authority: &[u8]) -> Result<(bool, Vec<u8>), UrlError> {
    let at = authority.iter().rposition(|&c| c == b'@');
    let host = parse_host(match at {
        Some(at) => &authority[at + 1..],
        None => authority,
    })?;
    let Some(at) = at else {
        return Ok((false, host));
    };
    let userinfo = &authority[..at];
    if !valid_userinfo(userinfo) {
        return Err("net/url: invalid userinfo".to_owned());
    }
    match userinfo.iter().position(|&c| c == b':') {
        None => {
            unescape(userinfo, Mode::UserPassword)?;
        }
        Some(colon) => {
            unescape(&userinfo[..colon], Mode::UserPassword)?;
            unescape(&userinfo[colon + 1..], Mode::UserPassword)?;
        }
    }
    Ok((true, host))
}

/// `validUserinfo` (it ranges over runes: any non-ASCII rune is refused).
fn valid_userinfo(s: &[u8]) -> bool {
    s.iter().all(|&c| {
        c.is_ascii_alphanumeric()
            || matches!(
                c,
                b'-' | b'.'
                    | b'_'
                    | b':'
                    | b'~'
                    | b'!'
                    | b'$'
                    | b'&'
                    | b'\''
                    | b'('
                    | b')'
                    | b'*'
                    | b'+'
                    | b','
                    | b';'
                    | b'='
                    | b'%'
                    | b'@'
            )
    })
}

/// `validOptionalPort`: empty, or `:` and digits.
fn valid_optional_port(port: &[u8]) -> bool {
    match port.split_first() {
        None => true,
        Some((b':', digits)) => digits.iter().all(u8::is_ascii_digit),
        Some(_) => false,
    }
}

/// `parseHost`: `host[:port]`, IP literals in brackets.
fn parse_host(host: &[u8]) -> Result<Vec<u8>, UrlError> {
    if let Some(open) = host.iter().rposition(|&c| c == b'[') {
        let Some(close) = host.iter().rposition(|&c| c == b']') else {
            return Err("missing ']' in host".to_owned());
        };
        let colon_port = host.get(close + 1..).unwrap_or_default();
        if !valid_optional_port(colon_port) {
            return Err(format!("invalid port {} after host", go_quote(colon_port)));
        }
        let colon_port = unescape(colon_port, Mode::Host)?;
        let hostname = host.get(open + 1..close).unwrap_or_default();
        let unescaped = match find(hostname, b"%25") {
            Some(zone) => {
                let mut part = unescape(&hostname[..zone], Mode::Host)?;
                part.extend(unescape(&hostname[zone..], Mode::Zone)?);
                part
            }
            None => unescape(hostname, Mode::Host)?,
        };
        if !is_ipv6_literal(&unescaped) {
            return Err("invalid host: not an IPv6 address".to_owned());
        }
        let mut out = b"[".to_vec();
        out.extend(&unescaped);
        out.push(b']');
        out.extend(colon_port);
        return Ok(out);
    }
    if let Some(colon) = host.iter().rposition(|&c| c == b':')
        && !valid_optional_port(&host[colon..])
    {
        return Err(format!(
            "invalid port {} after host",
            go_quote(&host[colon..])
        ));
    }
    unescape(host, Mode::Host)
}

/// `netip.ParseAddr` accepting an IPv6 address (with an optional non-empty zone), and not an
/// IPv4 one (`Is4`), which a bracketed host may not be.
fn is_ipv6_literal(text: &[u8]) -> bool {
    let (address, zone) = match text.iter().position(|&c| c == b'%') {
        Some(at) => (&text[..at], Some(&text[at + 1..])),
        None => (text, None),
    };
    if zone.is_some_and(<[u8]>::is_empty) {
        return false;
    }
    // ParseAddr tries IPv6 only when the text has a colon.
    address.contains(&b':')
        && std::str::from_utf8(address).is_ok_and(|a| a.parse::<Ipv6Addr>().is_ok())
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn hex(c: u8) -> Option<u8> {
    (c as char).to_digit(16).map(|d| d as u8)
}

/// `shouldEscape` for the modes `unescape` consults it in.
fn should_escape(c: u8, mode: Mode) -> bool {
    if c.is_ascii_alphanumeric() {
        return false;
    }
    if matches!(mode, Mode::Host | Mode::Zone)
        && matches!(
            c,
            b'!' | b'$'
                | b'&'
                | b'\''
                | b'('
                | b')'
                | b'*'
                | b'+'
                | b','
                | b';'
                | b'='
                | b':'
                | b'['
                | b']'
                | b'<'
                | b'>'
                | b'"'
        )
    {
        return false;
    }
    match c {
        b'-' | b'_' | b'.' | b'~' => false,
        b'$' | b'&' | b'+' | b',' | b'/' | b':' | b';' | b'=' | b'?' | b'@' => match mode {
            Mode::Path => c == b'?',
            Mode::UserPassword => matches!(c, b'@' | b'/' | b'?' | b':'),
            Mode::Fragment => false,
            Mode::Host | Mode::Zone => true,
        },
        _ => !(mode == Mode::Fragment && matches!(c, b'!' | b'(' | b')' | b'*')),
    }
}

/// `unescape`: `%XX` escapes must be well formed; a host may escape only non-ASCII bytes
/// (and `%25` in an IPv6 zone); a host or zone may only hold bytes it need not escape.
fn unescape(s: &[u8], mode: Mode) -> Result<Vec<u8>, UrlError> {
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        match s[i] {
            b'%' => {
                let (Some(high), Some(low)) = (
                    s.get(i + 1).copied().and_then(hex),
                    s.get(i + 2).copied().and_then(hex),
                ) else {
                    let end = (i + 3).min(s.len());
                    return Err(format!("invalid URL escape {}", go_quote(&s[i..end])));
                };
                if mode == Mode::Host && high < 8 && &s[i..i + 3] != b"%25" {
                    return Err(format!("invalid URL escape {}", go_quote(&s[i..i + 3])));
                }
                let byte = high << 4 | low;
                if mode == Mode::Zone
                    && &s[i..i + 3] != b"%25"
                    && byte != b' '
                    && should_escape(byte, Mode::Host)
                {
                    return Err(format!("invalid URL escape {}", go_quote(&s[i..i + 3])));
                }
                out.push(byte);
                i += 3;
            }
            c => {
                if matches!(mode, Mode::Host | Mode::Zone) && c < 0x80 && should_escape(c, mode) {
                    return Err(format!(
                        "invalid character {} in host name",
                        go_quote(&s[i..=i])
                    ));
                }
                out.push(c);
                i += 1;
            }
        }
    }
    Ok(out)
}

/// What `http.DefaultClient.Do(http.NewRequest(GET, location))` refuses before it sends a
/// byte (and then TLS and name resolution): `url.Parse`, a missing host, the Host header's
/// Punycode conversion, a port the dialer refuses. `None` when the request would go out.
pub fn http_request_problem(location: &str) -> Option<UrlError> {
    let url = match parse_url(location) {
        Ok(url) => url,
        Err(error) => return Some(error),
    };
    let host = remove_empty_port(&url.host);
    if host.is_empty() {
        return Some("http: no Host in request URL".to_owned());
    }
    if !host.is_ascii() && !punycode_host_port_ok(host) {
        return Some("the host cannot be converted to Punycode".to_owned());
    }
    // The dialer's address, JoinHostPort(Hostname(), Port()), then split again by the dialer:
    // a bracket outside an IPv6 literal is refused there.
    let hostname = hostname_of(host);
    if hostname.contains(&b'[') || hostname.contains(&b']') {
        return Some("dial: unexpected bracket in address".to_owned());
    }
    // The port: Port(), else the scheme's; net.LookupPort accepts 0 to 65535.
    let port = port_of(host);
    if !port.is_empty() && !port_in_range(port) {
        return Some(format!("dial: invalid port {}", go_quote(port)));
    }
    // The request line carries the query as written: a space there splits the line, and the
    // server cannot read the request.
    if url.raw_query.contains(&b' ') {
        return Some("the query holds a space, which breaks the request line".to_owned());
    }
    None
}

/// `URL.Hostname()`: the host without its port, and without the brackets of an IP literal.
fn hostname_of(host: &[u8]) -> &[u8] {
    let mut name = host;
    if let Some(colon) = name.iter().rposition(|&c| c == b':')
        && valid_optional_port(&name[colon..])
    {
        name = &name[..colon];
    }
    if name.starts_with(b"[") && name.ends_with(b"]") && name.len() >= 2 {
        name = &name[1..name.len() - 1];
    }
    name
}

/// `removeEmptyPort`: `host:` is `host`.
fn remove_empty_port(host: &[u8]) -> &[u8] {
    let colon = host.iter().rposition(|&c| c == b':');
    let bracket = host.iter().rposition(|&c| c == b']');
    if colon.map(|c| c as isize) > bracket.map(|b| b as isize) && host.ends_with(b":") {
        &host[..host.len() - 1]
    } else {
        host
    }
}

/// `URL.Port()`: the digits after the last colon, when they make a valid port.
fn port_of(host: &[u8]) -> &[u8] {
    match host.iter().rposition(|&c| c == b':') {
        Some(colon) if valid_optional_port(&host[colon..]) => &host[colon + 1..],
        _ => b"",
    }
}

/// `net.LookupPort` of decimal digits (`parsePort`, which saturates, then the range check).
fn port_in_range(digits: &[u8]) -> bool {
    let mut n: u32 = 0;
    for &d in digits {
        n = n.saturating_mul(10).saturating_add(u32::from(d - b'0'));
        if n > 65535 {
            return false;
        }
    }
    true
}

/// `net.SplitHostPort`.
fn split_host_port(hostport: &[u8]) -> Option<(&[u8], &[u8])> {
    let last_colon = hostport.iter().rposition(|&c| c == b':')?;
    let (host, j, k) = if hostport.first() == Some(&b'[') {
        let end = hostport.iter().position(|&c| c == b']')?;
        if end + 1 == hostport.len() || end + 1 != last_colon {
            return None;
        }
        (&hostport[1..end], 1, end + 1)
    } else {
        let host = &hostport[..last_colon];
        if host.contains(&b':') {
            return None;
        }
        (host, 0, 0)
    };
    if hostport[j..].contains(&b'[') || hostport[k..].contains(&b']') {
        return None;
    }
    Some((host, &hostport[last_colon + 1..]))
}

/// `httpguts.PunycodeHostPort` succeeds: `idna.ToASCII` (the Punycode profile) of the host
/// part fails only when a label starting with `xn--` does not decode, or one does not encode.
fn punycode_host_port_ok(hostport: &[u8]) -> bool {
    let host = split_host_port(hostport).map_or(hostport, |(host, _)| host);
    host.split(|&c| c == b'.').all(|label| {
        let runes = match label.strip_prefix(b"xn--") {
            Some(encoded) => match punycode::decode(encoded) {
                Some(runes) => runes,
                None => return false,
            },
            None => go_runes(label),
        };
        runes.iter().all(|&r| r < 0x80) || punycode::encode(&runes)
    })
}

/// The runes Go ranges over in a string: invalid UTF-8 is one U+FFFD per byte.
fn go_runes(bytes: &[u8]) -> Vec<u32> {
    let mut runes = Vec::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        runes.extend(chunk.valid().chars().map(u32::from));
        runes.extend(chunk.invalid().iter().map(|_| 0xFFFD));
    }
    runes
}

/// Bytes as Go's JSON and messages show them: invalid UTF-8 as one U+FFFD per byte.
pub fn go_lossy(bytes: &[u8]) -> String {
    go_runes(bytes)
        .into_iter()
        .filter_map(char::from_u32)
        .collect()
}

/// `%q` of a short piece, for messages.
fn go_quote(bytes: &[u8]) -> String {
    format!("{:?}", go_lossy(bytes))
}

/// RFC 3492 as x/net/idna implements it, with its overflow checks: whether decoding or
/// encoding succeeds is what matters here.
mod punycode {
    const BASE: i32 = 36;
    const DAMP: i32 = 700;
    const INITIAL_BIAS: i32 = 72;
    const INITIAL_N: i32 = 128;
    const SKEW: i32 = 38;
    const TMAX: i32 = 26;
    const TMIN: i32 = 1;

    fn madd(a: i32, b: i32, c: i32) -> Option<i32> {
        let p = i64::from(b) * i64::from(c);
        (p <= i64::from(i32::MAX) - i64::from(a)).then(|| a + p as i32)
    }

    fn decode_digit(x: u8) -> Option<i32> {
        match x {
            b'0'..=b'9' => Some(i32::from(x) - i32::from(b'0') + 26),
            b'A'..=b'Z' => Some(i32::from(x - b'A')),
            b'a'..=b'z' => Some(i32::from(x - b'a')),
            _ => None,
        }
    }

    fn adapt(delta: i32, points: i32, first: bool) -> i32 {
        let mut delta = if first { delta / DAMP } else { delta / 2 };
        delta += delta / points;
        let mut k = 0;
        while delta > ((BASE - TMIN) * TMAX) / 2 {
            delta /= BASE - TMIN;
            k += BASE;
        }
        k + (BASE - TMIN + 1) * delta / (delta + SKEW)
    }

    fn threshold(k: i32, bias: i32) -> i32 {
        if k <= bias {
            TMIN
        } else if k >= bias + TMAX {
            TMAX
        } else {
            k - bias
        }
    }

    /// `decode`: the runes, or `None` for Go's `punyError`.
    pub fn decode(encoded: &[u8]) -> Option<Vec<u32>> {
        if encoded.is_empty() {
            return Some(Vec::new());
        }
        let mut pos = encoded
            .iter()
            .rposition(|&c| c == b'-')
            .map_or(0, |at| at + 1);
        if pos == 1 {
            return None;
        }
        if pos == encoded.len() {
            return Some(super::go_runes(&encoded[..encoded.len() - 1]));
        }
        let mut output = if pos != 0 {
            super::go_runes(&encoded[..pos - 1])
        } else {
            Vec::new()
        };
        let (mut i, mut n, mut bias) = (0i32, INITIAL_N, INITIAL_BIAS);
        while pos < encoded.len() {
            let (old_i, mut w) = (i, 1i32);
            let mut k = BASE;
            loop {
                let digit = decode_digit(*encoded.get(pos)?)?;
                pos += 1;
                i = madd(i, digit, w)?;
                let t = threshold(k, bias);
                if digit < t {
                    break;
                }
                w = madd(0, w, BASE - t)?;
                k += BASE;
            }
            if output.len() >= 1024 {
                return None;
            }
            let x = output.len() as i32 + 1;
            bias = adapt(i - old_i, x, old_i == 0);
            n += i / x;
            i %= x;
            if !(0..=0x10FFFF).contains(&n) {
                return None;
            }
            output.insert(i as usize, n as u32);
            i += 1;
        }
        Some(output)
    }

    /// Whether `encode` succeeds.
    pub fn encode(runes: &[u32]) -> bool {
        let as_i32 = |r: u32| r as i32;
        // The bias only shapes the digits written, never whether encoding succeeds.
        let (mut delta, mut n) = (0i32, INITIAL_N);
        let b = runes.iter().filter(|&&r| r < 0x80).count() as i32;
        let mut remaining = runes.len() as i32 - b;
        let mut h = b;
        while remaining != 0 {
            let m = runes
                .iter()
                .map(|&r| as_i32(r))
                .filter(|&r| r >= n)
                .min()
                .unwrap_or(i32::MAX);
            let Some(next) = madd(delta, m - n, h + 1) else {
                return false;
            };
            delta = next;
            n = m;
            for &r in runes {
                let r = as_i32(r);
                if r < n {
                    delta += 1;
                    if delta < 0 {
                        return false;
                    }
                    continue;
                }
                if r > n {
                    continue;
                }
                delta = 0;
                h += 1;
                remaining -= 1;
            }
            delta += 1;
            n += 1;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn punycode_round_trips_known_labels() {
        // "bücher" is "xn--bcher-kva".
        let decoded = punycode::decode(b"bcher-kva").unwrap();
        let expected: Vec<u32> = "bücher".chars().map(u32::from).collect();
        assert_eq!(decoded, expected);
        assert!(punycode::encode(&expected));
        assert_eq!(punycode::decode(b"-abc"), None);
    }

    #[test]
    fn hosts_follow_go() {
        assert!(parse_request_uri("https://h%20x/p").is_err());
        assert!(parse_request_uri("https://h/p?q=%zz").is_ok());
        assert!(parse_request_uri("https://[1.2.3.4]/p").is_err());
        assert!(parse_request_uri("https://[fe80::1%25eth0]/p").is_ok());
        assert_eq!(
            http_request_problem("https://h:99999/p").as_deref(),
            Some("dial: invalid port \"99999\"")
        );
        assert_eq!(http_request_problem("https://h:/p"), None);
    }
}
