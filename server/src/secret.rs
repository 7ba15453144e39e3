//! Settings that can carry credentials, kept out of logs, errors and `--help`.
//!
//! A [`SecretUrl`] (a store, Redis or transport URL) prints with its password and
//! credential-like query values replaced by `***`; a [`Secret`] (a bearer token) prints as
//! `***` only. The clear value is reached through `expose`, at the one place that connects.

use std::convert::Infallible;
use std::fmt;
use std::str::FromStr;

/// What replaces a hidden value.
const MASK: &str = "***";

/// Query parameters whose values are credentials (PostgreSQL, Redis and SMTP URLs).
const SECRET_PARAMS: &[&str] = &[
    "password",
    "pass",
    "passwd",
    "sslpassword",
    "secret",
    "token",
    "auth",
];

/// A URL setting that may hold a password. `Display` and `Debug` redact it.
#[derive(Clone, PartialEq, Eq)]
pub struct SecretUrl(String);

impl SecretUrl {
    /// The clear value, for the adapter that connects with it.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// `text` (an error message, say) with every credential of this URL masked, for
    /// messages built by libraries that may echo what they were given.
    pub fn scrub(&self, text: &str) -> String {
        let mut out = text.replace(&self.0, &self.to_string());
        for secret in self.credentials() {
            if !secret.is_empty() {
                out = out.replace(&secret, MASK);
            }
        }
        out
    }

    /// The password and credential query values, as written and percent-decoded.
    fn credentials(&self) -> Vec<String> {
        let Ok(url) = url::Url::parse(&self.0) else {
            return self.userinfo_fallback().into_iter().collect();
        };
        let mut found: Vec<String> = url.password().map(str::to_string).into_iter().collect();
        for (name, value) in url.query_pairs() {
            if is_secret_param(&name) {
                found.push(value.into_owned());
            }
        }
        let decoded: Vec<String> = found
            .iter()
            .filter_map(|s| percent_decode(s))
            .filter(|d| !found.contains(d))
            .collect();
        found.extend(decoded);
        found
    }

    /// For a value that is not a URL: whatever sits between `://` and the last `@`.
    fn userinfo_fallback(&self) -> Option<String> {
        let start = self.0.find("://")? + 3;
        let at = self.0.rfind('@')?;
        (at > start).then(|| self.0[start..at].to_string())
    }
}

fn is_secret_param(name: &str) -> bool {
    SECRET_PARAMS.iter().any(|p| name.eq_ignore_ascii_case(p))
}

fn percent_decode(s: &str) -> Option<String> {
    let decoded = url::form_urlencoded::parse(format!("x={s}").as_bytes())
        .next()
        .map(|(_, v)| v.into_owned())?;
    (decoded != s).then_some(decoded)
}

impl FromStr for SecretUrl {
    type Err = Infallible;

    /// Never fails: a malformed value is reported later, redacted, by whoever uses it
    /// (clap would print a refused value in the clear).
    fn from_str(s: &str) -> Result<Self, Infallible> {
        Ok(SecretUrl(s.to_string()))
    }
}

impl fmt::Display for SecretUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match url::Url::parse(&self.0) {
            Ok(mut url) if url.has_host() || url.password().is_some() => {
                if url.password().is_some() {
                    let _ = url.set_password(Some(MASK));
                }
                let pairs: Vec<(String, String)> = url
                    .query_pairs()
                    .map(|(k, v)| {
                        let v = if is_secret_param(&k) {
                            MASK.to_string()
                        } else {
                            v.into_owned()
                        };
                        (k.into_owned(), v)
                    })
                    .collect();
                if !pairs.is_empty() {
                    url.query_pairs_mut().clear().extend_pairs(pairs);
                }
                f.write_str(url.as_str())
            }
            // `memory`, `file:DIR`: nothing secret in them.
            Ok(_) => f.write_str(&self.0),
            Err(_) => match self.userinfo_fallback() {
                Some(userinfo) => f.write_str(&self.0.replacen(&userinfo, MASK, 1)),
                None => f.write_str(&self.0),
            },
        }
    }
}

impl fmt::Debug for SecretUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SecretUrl({self})")
    }
}

/// A secret value (a bearer token). `Display` and `Debug` print `***`.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// The clear value.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl FromStr for Secret {
    type Err = Infallible;

    fn from_str(s: &str) -> Result<Self, Infallible> {
        Ok(Secret(s.to_string()))
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(MASK)
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(***)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn shown(raw: &str) -> String {
        raw.parse::<SecretUrl>()
            .map(|u| u.to_string())
            .unwrap_or_default()
    }

    #[test]
    fn passwords_are_masked_and_the_rest_kept() {
        assert_eq!(
            shown("postgres://app:s3cret@db.internal:5432/posthorn"),
            "postgres://app:***@db.internal:5432/posthorn"
        );
        assert_eq!(
            shown("redis://:hunter2@127.0.0.1:6379/0"),
            "redis://:***@127.0.0.1:6379/0"
        );
        assert_eq!(
            shown("smtps://user%40mail:p%40ss@smtp.example.com?tls=required"),
            "smtps://user%40mail:***@smtp.example.com?tls=required"
        );
        assert_eq!(
            shown("postgres://db/posthorn?password=s3cret&sslmode=require"),
            "postgres://db/posthorn?password=***&sslmode=require"
        );
    }

    #[test]
    fn values_without_credentials_are_unchanged() {
        for raw in [
            "memory",
            "file:./posthorn-data/outbox",
            "postgres://db:5432/x",
            "smtp://127.0.0.1:25",
        ] {
            assert_eq!(shown(raw), raw);
        }
    }

    #[test]
    fn malformed_values_still_hide_their_userinfo() {
        assert_eq!(
            shown("postgres://u:pw@host:notaport/db"),
            "postgres://***@host:notaport/db"
        );
    }

    #[test]
    fn scrub_hides_the_password_wherever_a_library_echoed_it() {
        let url: SecretUrl = "redis://:p%40ss@127.0.0.1:1/"
            .parse()
            .unwrap_or_else(|e| match e {});
        let message = "could not connect to redis://:p%40ss@127.0.0.1:1/ (auth p@ss refused)";
        let scrubbed = url.scrub(message);
        assert!(
            !scrubbed.contains("p%40ss") && !scrubbed.contains("p@ss"),
            "{scrubbed}"
        );
    }

    #[test]
    fn secrets_print_as_a_mask() {
        let token: Secret = "admin-token".parse().unwrap_or_else(|e| match e {});
        assert_eq!(format!("{token} {token:?}"), "*** Secret(***)");
    }

    proptest! {
        #[test]
        fn no_password_survives_display_or_debug(password in "[A-Za-z0-9!$&'()*+,;=._~-]{4,24}") {
            let raw = format!("postgres://user:{password}@127.0.0.1:5432/db");
            let url: SecretUrl = raw.parse().unwrap_or_else(|e| match e {});
            let encoded: String = url::form_urlencoded::byte_serialize(password.as_bytes()).collect();
            for printed in [url.to_string(), format!("{url:?}")] {
                prop_assert!(!printed.contains(&format!(":{password}@")), "{printed}");
                prop_assert!(!printed.contains(&format!(":{encoded}@")), "{printed}");
            }
        }
    }
}
