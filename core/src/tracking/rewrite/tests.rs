use proptest::prelude::*;

use super::*;

fn tracked(url: &str) -> Option<String> {
    (url.starts_with("http://") || url.starts_with("https://")).then(|| format!("T[{url}]"))
}

#[test]
fn rewrites_http_links_and_keeps_everything_else() {
    let html = concat!(
        "<p>Hi <a class=x href=\"https://a.example/?x=1&amp;y=2\">a</a> ",
        "<a href='mailto:me@example.com'>m</a> ",
        "<A HREF=https://b.example>b</A> ",
        "<a data-posthorn-no-track href=\"https://c.example\">c</a>",
        "<!-- <a href=\"https://comment.example\"> --> ",
        "<script>var s = '<a href=\"https://script.example\">';</script></p>"
    );
    let out = rewrite_html(html, None, &tracked);
    assert!(
        out.contains("href=\"T[https://a.example/?x=1&amp;y=2]\""),
        "{out}"
    );
    assert!(out.contains("href='mailto:me@example.com'"));
    assert!(out.contains("HREF=T[https://b.example]>"), "{out}");
    assert!(out.contains("href=\"https://c.example\""));
    assert!(out.contains("https://comment.example"));
    assert!(!out.contains("T[https://comment"));
    assert!(!out.contains("T[https://script"));
}

#[test]
fn pixel_goes_before_the_body_end_or_last() {
    let pixel = "<img src=\"p\">";
    let out = rewrite_html("<html><body>x</body></html>", Some(pixel), &tracked);
    assert_eq!(out, "<html><body>x<img src=\"p\"></body></html>");
    assert_eq!(rewrite_html("x", Some(pixel), &tracked), "x<img src=\"p\">");
}

#[test]
fn html_without_links_is_unchanged() {
    let html = "<div style=\"a>b\"><p>plain < text > here</p><img src=x></div>";
    assert_eq!(rewrite_html(html, None, &tracked), html);
}

proptest! {
    #[test]
    fn never_panics_and_keeps_text_without_links(html in "(<|>|a|href|=|\"|'|!--|-->|/| |é|http://x|script|style){0,60}") {
        let out = rewrite_html(&html, None, &tracked);
        if !out.contains("T[") {
            prop_assert_eq!(out, html);
        }
    }

    #[test]
    fn never_panics_on_any_text(html in any::<String>()) {
        let _ = rewrite_html(&html, Some("<img>"), &tracked);
    }
}
