//! Plain-text alternatives generated from HTML bodies.

use std::cell::RefCell;
use std::rc::Rc;

use html2text::render::{TaggedLine, TextDecorator};

/// Column at which generated text wraps (RFC 5322 recommends lines under 78 characters).
const WRAP_COLUMNS: usize = 78;

/// Plain text for `html`: wrapped at 78 columns, links inline as `text (url)`, trimmed.
pub fn html_to_text(html: &str) -> String {
    let shown = Rc::new(RefCell::new(Vec::new()));
    let decorator = MailDecorator {
        open: Vec::new(),
        shown: Rc::clone(&shown),
    };
    // Mail layouts are nested tables: raw mode reads cells in order instead of drawing a grid.
    let rendered = html2text::config::with_decorator(decorator)
        .raw_mode(true)
        .allow_width_overflow()
        .no_link_wrapping()
        .string_from_read(html.as_bytes(), WRAP_COLUMNS);
    let Ok(text) = rendered else {
        return String::new();
    };
    let text = expand_links(&text, &shown.borrow());
    let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
    lines.join("\n").trim().to_owned()
}

/// Brackets a link's index in the wrapped text; private-use characters never met in mail.
const LINK_OPEN: char = '\u{E000}';
const LINK_CLOSE: char = '\u{E001}';

/// Replaces link markers with their URLs.
///
/// Markers go through wrapping instead of URLs so a long URL is never broken across lines.
/// A link whose text already is its URL is not repeated.
fn expand_links(text: &str, urls: &[String]) -> String {
    let mut out = String::with_capacity(text.len() + urls.iter().map(String::len).sum::<usize>());
    let mut rest = text;
    while let Some(start) = rest.find(LINK_OPEN) {
        let after = &rest[start + LINK_OPEN.len_utf8()..];
        let Some(end) = after.find(LINK_CLOSE) else {
            break;
        };
        let before = &rest[..start];
        let tail = &after[end + LINK_CLOSE.len_utf8()..];
        match after[..end].parse::<usize>().ok().and_then(|n| urls.get(n)) {
            Some(url) => {
                let text_before = before.strip_suffix('(').map(str::trim_end);
                match text_before {
                    Some(head) if head.ends_with(url.as_str()) => {
                        out.push_str(head);
                        rest = tail.strip_prefix(')').unwrap_or(tail);
                        continue;
                    }
                    _ => {
                        out.push_str(before);
                        out.push_str(url);
                    }
                }
            }
            None => out.push_str(before),
        }
        rest = tail;
    }
    out.push_str(rest);
    out
}

/// Renders links as `text (url)`, images as their alt text and everything else plainly.
#[derive(Clone)]
struct MailDecorator {
    /// Targets of the links currently open (each `None` when not worth showing).
    open: Vec<Option<String>>,
    /// Every target written out, shared with sub-block decorators.
    shown: Rc<RefCell<Vec<String>>>,
}

/// The part of an `href` worth showing to a reader, if any.
fn shown_target(url: &str) -> Option<String> {
    let url = url.trim();
    if let Some(address) = url.strip_prefix("mailto:") {
        let address = address.split('?').next().unwrap_or_default();
        return (!address.is_empty()).then(|| address.to_owned());
    }
    let lower = url.to_ascii_lowercase();
    if url.is_empty() || url.starts_with('#') || lower.starts_with("javascript:") {
        return None;
    }
    Some(url.to_owned())
}

impl TextDecorator for MailDecorator {
    type Annotation = ();

    fn decorate_link_start(&mut self, url: &str) -> (String, Self::Annotation) {
        self.open.push(shown_target(url));
        (String::new(), ())
    }

    fn decorate_link_end(&mut self) -> String {
        match self.open.pop().flatten() {
            Some(url) => {
                let mut shown = self.shown.borrow_mut();
                shown.push(url);
                format!(" ({LINK_OPEN}{}{LINK_CLOSE})", shown.len() - 1)
            }
            None => String::new(),
        }
    }

    fn decorate_em_start(&self) -> (String, Self::Annotation) {
        (String::new(), ())
    }

    fn decorate_em_end(&self) -> String {
        String::new()
    }

    fn decorate_strong_start(&self) -> (String, Self::Annotation) {
        (String::new(), ())
    }

    fn decorate_strong_end(&self) -> String {
        String::new()
    }

    fn decorate_strikeout_start(&self) -> (String, Self::Annotation) {
        (String::new(), ())
    }

    fn decorate_strikeout_end(&self) -> String {
        String::new()
    }

    fn decorate_code_start(&self) -> (String, Self::Annotation) {
        (String::new(), ())
    }

    fn decorate_code_end(&self) -> String {
        String::new()
    }

    fn decorate_preformat_first(&self) -> Self::Annotation {}

    fn decorate_preformat_cont(&self) -> Self::Annotation {}

    fn decorate_image(&mut self, _src: &str, title: &str) -> (String, Self::Annotation) {
        let title = title.trim();
        if title.is_empty() {
            (String::new(), ())
        } else {
            (format!("[{title}]"), ())
        }
    }

    fn header_prefix(&self, level: usize) -> String {
        "#".repeat(level) + " "
    }

    fn quote_prefix(&self) -> String {
        "> ".to_owned()
    }

    fn unordered_item_prefix(&self) -> String {
        "- ".to_owned()
    }

    fn ordered_item_prefix(&self, i: i64) -> String {
        format!("{i}. ")
    }

    fn make_subblock_decorator(&self) -> Self {
        MailDecorator {
            open: Vec::new(),
            shown: Rc::clone(&self.shown),
        }
    }

    fn finalise(&mut self, _urls: Vec<String>) -> Vec<TaggedLine<Self::Annotation>> {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paragraphs_and_headings() {
        let text = html_to_text("<h1>Welcome</h1><p>Hello <b>Ada</b>,</p><p>Thanks.</p>");
        assert_eq!(text, "# Welcome\n\nHello Ada,\n\nThanks.");
    }

    #[test]
    fn links_are_inline() {
        let text = html_to_text(r#"<p>Please <a href="https://x.test/c?a=1">confirm</a>.</p>"#);
        assert_eq!(text, "Please confirm (https://x.test/c?a=1).");
    }

    #[test]
    fn links_showing_their_own_url_are_not_repeated() {
        let text = html_to_text(r#"<a href="https://x.test/">https://x.test/</a>"#);
        assert_eq!(text, "https://x.test/");
    }

    #[test]
    fn long_urls_are_never_broken() {
        let url = format!("https://x.test/{}?a=1&b=2", "segment".repeat(20));
        let html = format!(
            "<p>{} <a href=\"{url}\">the link</a> and <a href=\"{url}\">{url}</a></p>",
            "word ".repeat(12)
        );
        let text = html_to_text(&html.replace('&', "&amp;"));
        assert_eq!(text.matches(url.as_str()).count(), 2, "{text}");
        assert!(
            text.contains(&format!("the link\n({url})"))
                || text.contains(&format!("the link ({url})")),
            "{text}"
        );
    }

    #[test]
    fn mailto_and_anchor_links() {
        let text = html_to_text(
            r##"<a href="mailto:a@x.test?subject=hi">write</a> <a href="#top">top</a>"##,
        );
        assert_eq!(text, "write (a@x.test) top");
    }

    #[test]
    fn layout_tables_read_in_order_without_borders() {
        let text = html_to_text(
            "<table><tr><td>Left</td><td>Right</td></tr></table><ul><li>one</li><li>two</li></ul>",
        );
        assert!(!text.contains('─') && !text.contains('|'), "{text}");
        let left = text.find("Left").expect("left");
        let right = text.find("Right").expect("right");
        assert!(left < right);
        assert!(text.contains("- one\n- two"), "{text}");
    }

    #[test]
    fn style_script_and_entities() {
        let text = html_to_text(
            "<html><head><style>p{color:red}</style><title>T</title></head>\
             <body><script>alert(1)</script><p>Fish &amp; chips &lt;3</p></body></html>",
        );
        assert_eq!(text, "Fish & chips <3");
    }

    #[test]
    fn long_paragraphs_wrap() {
        let text = html_to_text(&format!("<p>{}</p>", "word ".repeat(60)));
        assert!(text.lines().count() > 1);
        assert!(
            text.lines().all(|l| l.chars().count() <= WRAP_COLUMNS),
            "{text}"
        );
    }

    #[test]
    fn empty_and_plain_input() {
        assert_eq!(html_to_text(""), "");
        assert_eq!(html_to_text("just text"), "just text");
    }

    proptest::proptest! {
        #[test]
        fn never_panics(html in "(<[a-z/]{1,6}( href=\"[^\"]{0,20}\")?>|[^<]{0,20}){0,30}") {
            let _ = html_to_text(&html);
        }
    }
}
