//! Domain lists shipped with the program for the offline verification checks.
//!
//! Disposable domains come from the `mailchecker` crate; the lists here are the ones it does
//! not cover. All entries are lower-case ASCII, without a trailing dot.

/// Email alias and forwarding services: the address hides a real mailbox behind a relay.
///
/// A domain matches when it equals an entry or is a sub-domain of one (addy.io and 33mail
/// hand out `anything@user.addy.io`).
pub const ALIAS_DOMAINS: &[&str] = &[
    // Sign in with Apple / Hide My Email relay.
    "privaterelay.appleid.com",
    // DuckDuckGo Email Protection.
    "duck.com",
    // Firefox Relay.
    "mozmail.com",
    "relay.firefox.com",
    // SimpleLogin.
    "simplelogin.com",
    "simplelogin.co",
    "simplelogin.fr",
    "aleeas.com",
    "slmail.me",
    "silomails.com",
    "8alias.com",
    "8shield.net",
    "dralias.com",
    // addy.io, formerly AnonAddy.
    "addy.io",
    "anonaddy.com",
    "anonaddy.me",
    // Proton Pass aliases.
    "passmail.net",
    "passmail.com",
    "passinbox.com",
    "passfwd.com",
    // Other forwarding services.
    "33mail.com",
    "burnermail.io",
    "erine.email",
];

/// Free personal mailbox providers, matched exactly.
pub const PERSONAL_DOMAINS: &[&str] = &[
    "gmail.com",
    "googlemail.com",
    "outlook.com",
    "hotmail.com",
    "live.com",
    "msn.com",
    "passport.com",
    "yahoo.com",
    "ymail.com",
    "rocketmail.com",
    "icloud.com",
    "me.com",
    "mac.com",
    "aol.com",
    "aim.com",
    "proton.me",
    "protonmail.com",
    "protonmail.ch",
    "pm.me",
    "tutanota.com",
    "tutanota.de",
    "tuta.io",
    "tuta.com",
    "gmx.com",
    "gmx.net",
    "gmx.de",
    "web.de",
    "t-online.de",
    "freenet.de",
    "mail.com",
    "email.com",
    "zoho.com",
    "zohomail.com",
    "fastmail.com",
    "fastmail.fm",
    "hey.com",
    "mail.ru",
    "bk.ru",
    "inbox.ru",
    "list.ru",
    "rambler.ru",
    "qq.com",
    "163.com",
    "126.com",
    "sina.com",
    "naver.com",
    "daum.net",
    "orange.fr",
    "wanadoo.fr",
    "free.fr",
    "laposte.net",
    "sfr.fr",
    "libero.it",
    "virgilio.it",
    "seznam.cz",
    "wp.pl",
    "o2.pl",
    "interia.pl",
    "comcast.net",
    "verizon.net",
    "att.net",
    "sbcglobal.net",
    "btinternet.com",
    "sky.com",
    "bigpond.com",
    "shaw.ca",
    "rogers.com",
    "uol.com.br",
    "bol.com.br",
    "rediffmail.com",
];

/// Personal providers that run the same service under many country domains
/// (`hotmail.fr`, `yahoo.co.jp`, `gmx.at`): matched on the first label of a domain whose
/// remaining labels look like a public suffix.
pub const PERSONAL_FAMILIES: &[&str] = &["hotmail", "outlook", "yahoo", "gmx", "yandex", "ya"];

/// Domains people mistype most often; the typo suggester proposes the nearest one.
pub const POPULAR_DOMAINS: &[&str] = &[
    "gmail.com",
    "googlemail.com",
    "yahoo.com",
    "hotmail.com",
    "outlook.com",
    "live.com",
    "icloud.com",
    "aol.com",
    "msn.com",
    "me.com",
    "mac.com",
    "protonmail.com",
    "proton.me",
    "gmx.com",
    "gmx.de",
    "gmx.net",
    "web.de",
    "t-online.de",
    "yandex.ru",
    "mail.ru",
    "ymail.com",
    "rocketmail.com",
    "comcast.net",
    "verizon.net",
    "sbcglobal.net",
    "hotmail.co.uk",
    "hotmail.fr",
    "yahoo.co.uk",
    "yahoo.fr",
    "btinternet.com",
    "orange.fr",
    "wanadoo.fr",
    "laposte.net",
    "libero.it",
    "zoho.com",
    "fastmail.com",
];

/// Misspelt top-level domains and their intended spelling.
///
/// Only misspellings that are not themselves delegated TLDs: `.co`, `.cm`, `.om` and `.bet`
/// are real, so they are left alone.
pub const TLD_TYPOS: &[(&str, &str)] = &[
    ("con", "com"),
    ("cmo", "com"),
    ("comm", "com"),
    ("coom", "com"),
    ("comn", "com"),
    ("cpm", "com"),
    ("xom", "com"),
    ("vom", "com"),
    ("ocm", "com"),
    ("cim", "com"),
    ("clm", "com"),
    ("cok", "com"),
    ("c0m", "com"),
    ("ney", "net"),
    ("nte", "net"),
    ("nett", "net"),
    ("ogr", "org"),
    ("rog", "org"),
    ("orgg", "org"),
    ("og", "org"),
];
