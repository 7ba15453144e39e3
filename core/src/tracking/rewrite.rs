//! Rewriting the links of an HTML body and adding the open pixel.
//!
//! A small scanner over tags rather than a parser: it finds `<a ...>` start tags outside
//! comments, `<script>` and `<style>`, reads their attributes with HTML's quoting rules, and
//! replaces only the `href` value, so everything else of the author's markup is kept byte
//! for byte. It never fails: input it does not understand is copied unchanged.

/// Attribute that keeps a link out of click tracking.
pub const NO_TRACK_ATTRIBUTE: &str = "data-posthorn-no-track";

/// An attribute of a start tag: name, and the byte range of its value within the HTML.
struct Attr<'a> {
    name: &'a str,
    value: Option<(usize, usize)>,
}

/// `html` with each trackable `<a href>` replaced by `rewrite(href)` (when it answers
/// `Some`) and `pixel` (an `<img>` tag) inserted before `</body>` or appended.
///
/// Links marked [`NO_TRACK_ATTRIBUTE`] are left alone; `rewrite` decides about the rest
/// (the caller skips `mailto:`, the unsubscribe link and other schemes). Values are
/// HTML-unescaped for `&amp;` before `rewrite` sees them and the result is escaped back.
pub fn rewrite_html(
    html: &str,
    pixel: Option<&str>,
    rewrite: &dyn Fn(&str) -> Option<String>,
) -> String {
    let bytes = html.as_bytes();
    let mut out = String::with_capacity(html.len() + 256);
    let mut copied = 0;
    let mut i = 0;
    while let Some(off) = html[i..].find('<') {
        let start = i + off;
        let rest = &html[start..];
        if rest.starts_with("<!--") {
            i = rest.find("-->").map_or(html.len(), |e| start + e + 3);
            continue;
        }
        let Some(name_len) = tag_name_len(&rest[1..]) else {
            i = start + 1;
            continue;
        };
        let name = &rest[1..1 + name_len];
        let (attrs, end) = scan_attrs(html, start + 1 + name_len);
        if name.eq_ignore_ascii_case("script") || name.eq_ignore_ascii_case("style") {
            // Raw text: skip to the closing tag.
            let close = format!("</{}", name.to_ascii_lowercase());
            let lower_rest = html[end..].to_ascii_lowercase();
            i = lower_rest.find(&close).map_or(html.len(), |e| end + e);
            continue;
        }
        if name.eq_ignore_ascii_case("a")
            && !attrs
                .iter()
                .any(|a| a.name.eq_ignore_ascii_case(NO_TRACK_ATTRIBUTE))
        {
            let href = attrs
                .iter()
                .find(|a| a.name.eq_ignore_ascii_case("href"))
                .and_then(|a| a.value);
            if let Some((from, to)) = href {
                let original = html[from..to].replace("&amp;", "&");
                if let Some(new) = rewrite(original.trim()) {
                    out.push_str(&html[copied..from]);
                    out.push_str(&new.replace('&', "&amp;").replace('"', "&quot;"));
                    copied = to;
                }
            }
        }
        i = end.max(start + 1);
        debug_assert!(bytes.len() >= i);
    }
    out.push_str(&html[copied..]);
    if let Some(pixel) = pixel {
        match out.to_ascii_lowercase().rfind("</body") {
            Some(at) => out.insert_str(at, pixel),
            None => out.push_str(pixel),
        }
    }
    out
}

/// Length of a tag name at the start of `s` (letters first, then letters, digits, `-`).
fn tag_name_len(s: &str) -> Option<usize> {
    let first = s.chars().next()?;
    if !first.is_ascii_alphabetic() {
        return None;
    }
    Some(
        s.find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
            .unwrap_or(s.len()),
    )
}

/// The attributes of a start tag whose name ends at `pos`, and the index after its `>`
/// (or the end of the input).
fn scan_attrs(html: &str, mut pos: usize) -> (Vec<Attr<'_>>, usize) {
    let b = html.as_bytes();
    let mut attrs = Vec::new();
    loop {
        while pos < b.len() && (b[pos].is_ascii_whitespace() || b[pos] == b'/') {
            pos += 1;
        }
        if pos >= b.len() {
            return (attrs, b.len());
        }
        if b[pos] == b'>' {
            return (attrs, pos + 1);
        }
        let name_start = pos;
        while pos < b.len()
            && !b[pos].is_ascii_whitespace()
            && !matches!(b[pos], b'=' | b'>' | b'/')
        {
            pos += 1;
        }
        // A lone `/` or `=` without a name: step over it.
        if pos == name_start {
            pos += 1;
            continue;
        }
        let name = &html[name_start..pos];
        let mut p = pos;
        while p < b.len() && b[p].is_ascii_whitespace() {
            p += 1;
        }
        if p < b.len() && b[p] == b'=' {
            p += 1;
            while p < b.len() && b[p].is_ascii_whitespace() {
                p += 1;
            }
            let (from, to, next) = match b.get(p) {
                Some(q @ (b'"' | b'\'')) => {
                    let from = p + 1;
                    let to = html[from..].find(*q as char).map_or(b.len(), |e| from + e);
                    (from, to, (to + 1).min(b.len()))
                }
                _ => {
                    let from = p;
                    let mut to = p;
                    while to < b.len() && !b[to].is_ascii_whitespace() && b[to] != b'>' {
                        to += 1;
                    }
                    (from, to, to)
                }
            };
            attrs.push(Attr {
                name,
                value: Some((from, to)),
            });
            pos = next;
        } else {
            attrs.push(Attr { name, value: None });
            pos = p;
        }
    }
}

#[cfg(test)]
mod tests;
