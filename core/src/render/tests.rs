use std::time::{Duration, Instant};

use proptest::prelude::*;
use serde_json::json;

use super::*;

fn html(source: &str, context: serde_json::Value) -> String {
    render(source, &context, Escape::Html).expect("renders")
}

fn plain(source: &str, context: serde_json::Value) -> String {
    render(source, &context, Escape::None).expect("renders")
}

#[test]
fn simple_and_spaced_placeholders() {
    let ctx = json!({"name": "Ada", "data": {"plan": "pro", "seats": 3}});
    assert_eq!(
        html("Hi {{name}}, {{ data.plan }} x{{data.seats}}", ctx),
        "Hi Ada, pro x3"
    );
}

#[test]
fn values_are_escaped_in_html_mode_only() {
    let ctx = json!({"x": "<script>alert('&')</script>"});
    let escaped = html("<p>{{ x }}</p>", ctx.clone());
    assert!(!escaped.contains("<script>"), "{escaped}");
    assert!(escaped.starts_with("<p>&lt;script&gt;"), "{escaped}");
    assert_eq!(plain("{{ x }}", ctx), "<script>alert('&')</script>");
}

#[test]
fn urls_keep_their_slashes_and_ampersands_are_escaped() {
    let ctx = json!({"u": "https://a.test/c?d=1&e=2"});
    assert_eq!(
        html("<a href=\"{{ u }}\">", ctx.clone()),
        "<a href=\"https://a.test/c?d=1&amp;e=2\">"
    );
    assert_eq!(plain("{{ u }}", ctx), "https://a.test/c?d=1&e=2");
}

#[test]
fn nulls_print_nothing_and_booleans_print_lowercase() {
    let ctx = json!({"n": null, "t": true, "f": false, "data": {"n": null}});
    assert_eq!(
        html("[{{ n }}][{{{ n }}}][{{ data.n }}]", ctx.clone()),
        "[][][]"
    );
    assert_eq!(plain("{{ t }} {{ f }}", ctx), "true false");
}

#[test]
fn triple_braces_insert_raw_html() {
    let ctx = json!({"x": "<b>bold</b>"});
    assert_eq!(html("<p>{{{x}}}</p>", ctx.clone()), "<p><b>bold</b></p>");
    assert_eq!(
        html("{{{ x }}}|{{ x | safe }}", ctx),
        "<b>bold</b>|<b>bold</b>"
    );
}

#[test]
fn fallback_applies_to_missing_null_and_empty() {
    let ctx = json!({"empty": "", "null": null, "set": "Ada", "zero": 0, "no": false});
    let source = "{{missing ?? \"friend\"}}|{{ empty ?? 'x' }}|{{null??'y'}}|{{ set ?? 'z' }}";
    assert_eq!(html(source, ctx.clone()), "friend|x|y|Ada");
    // Only absent values fall back: 0 and false are real values.
    assert_eq!(
        html("{{ zero ?? 1 }}|{{ no ?? 'x' }}", ctx.clone()),
        "0|false"
    );
    assert_eq!(html("{{ a.b.c ?? set ?? 'q' }}", ctx), "Ada");
}

#[test]
fn fallback_strings_may_contain_delimiters() {
    let ctx = json!({});
    assert_eq!(html("{{ n ?? \"}} ?? {{\" }}!", ctx.clone()), "}} ?? {{!");
    assert_eq!(plain("{{ n ?? 'it\\'s' }}", ctx.clone()), "it's");
    assert_eq!(html("{{{ n ?? '<i>x</i>' }}}", ctx), "<i>x</i>");
}

#[test]
fn fallback_values_are_escaped_too() {
    assert_eq!(html("{{ n ?? '<x>' }}", json!({})), "&lt;x&gt;");
}

#[test]
fn unknown_names_render_empty() {
    let ctx = json!({"data": {}});
    assert_eq!(
        html("[{{ nope }}][{{ data.nope }}][{{ a.b.c }}]", ctx.clone()),
        "[][][]"
    );
    assert_eq!(html("{% for x in nope %}{{x}}{% endfor %}ok", ctx), "ok");
}

#[test]
fn minijinja_statements_and_filters_work() {
    let ctx = json!({"vip": true, "items": ["a", "b"], "name": "ada"});
    let source =
        "{% if vip %}VIP {% endif %}{% for i in items %}{{ loop.index }}{{ i }} {% endfor %}\
                  {{ name | upper }}";
    assert_eq!(html(source, ctx), "VIP 1a 2b ADA");
}

#[test]
fn text_outside_tags_is_untouched() {
    let source = "Question?? {maybe} }} {{ '??' }} {% raw %}{{ a ?? b }}{% endraw %}\n";
    assert_eq!(
        plain(source, json!({})),
        "Question?? {maybe} }} ?? {{ a ?? b }}\n"
    );
}

#[test]
fn syntax_errors_carry_the_line() {
    let err = render("line one\nline two\n{{ name | }}", &json!({}), Escape::Html)
        .expect_err("dangling filter bar");
    match &err {
        RenderError::Syntax { line, message } => {
            assert_eq!(*line, Some(3), "{err}");
            assert!(!message.is_empty());
        }
        other => panic!("expected syntax error, got {other:?}"),
    }
    assert!(err.to_string().contains("line 3"), "{err}");
    assert!(matches!(
        validate("ok\n{{ }"),
        Err(RenderError::Syntax { line: Some(2), .. })
    ));
}

#[test]
fn validate_accepts_the_sugar_and_rejects_broken_sources() {
    assert_eq!(
        validate("Hi {{ name ?? 'x' }} {{{ raw }}} {% if a %}{% endif %}"),
        Ok(())
    );
    assert!(matches!(
        validate("{% for %}"),
        Err(RenderError::Syntax { .. })
    ));
    assert!(matches!(
        validate("{{ name ?? }}"),
        Err(RenderError::Syntax { line: Some(1), .. })
    ));
}

#[test]
fn validate_finds_unknown_filters_tests_and_functions() {
    for source in [
        "Hello {{ name | uppercase }}",
        "line one\n{% if name is fancy %}x{% endif %}",
        "{{ shout(name) }}",
    ] {
        assert!(
            matches!(validate(source), Err(RenderError::Syntax { .. })),
            "{source} should be refused"
        );
    }
    // Known ones, whatever the data; a failure that depends on the data is not refused.
    for source in [
        "{{ name | upper }} {% if name is defined %}{{ range(3) | join(',') }}{% endif %}",
        "{% for x in items %}{{ x.total / x.count }}{% endfor %}",
        "{{ data.a + 1 }}",
    ] {
        assert_eq!(validate(source), Ok(()), "{source}");
    }
}

#[test]
fn runaway_loops_run_out_of_fuel_quickly() {
    let started = Instant::now();
    let err = render(
        "{% for i in range(100000000) %}{{ i }}{% endfor %}",
        &json!({}),
        Escape::Html,
    )
    .expect_err("too much work");
    assert!(matches!(err, RenderError::Render { .. }), "{err:?}");
    let err = render(
        "{% for i in range(90000) %}{% for j in range(90000) %}x{% endfor %}{% endfor %}",
        &json!({}),
        Escape::Html,
    )
    .expect_err("too much work");
    assert!(matches!(err, RenderError::Render { .. }), "{err:?}");
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn deep_recursion_is_refused() {
    let source = "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}";
    assert!(matches!(
        render(source, &json!({}), Escape::Html),
        Err(RenderError::Render { .. })
    ));
}

#[test]
fn huge_output_is_refused() {
    let source = "{% for i in range(100) %}{{ 'x' * 1000000 }}{% endfor %}";
    match render(source, &json!({}), Escape::None) {
        Err(RenderError::Render { message, .. }) => {
            assert!(message.contains("larger"), "{message}")
        }
        other => panic!("expected output limit, got {other:?}"),
    }
}

#[test]
fn trailing_newline_is_kept() {
    assert_eq!(plain("Hi {{ n }}\n", json!({"n": 1})), "Hi 1\n");
}

#[test]
fn a_compiled_template_renders_many_contexts_with_the_same_rules() {
    let template =
        Template::compile("Hi {{ name ?? \"you\" }} {{{ raw }}}", Escape::Html).expect("compiles");
    for (ctx, expected) in [
        (json!({"name": "<Ada>", "raw": "<b>"}), "Hi &lt;Ada&gt; <b>"),
        (json!({"name": ""}), "Hi you "),
        (json!({}), "Hi you "),
    ] {
        assert_eq!(template.render(&ctx).as_deref(), Ok(expected));
        assert_eq!(
            render("Hi {{ name ?? \"you\" }} {{{ raw }}}", &ctx, Escape::Html).as_deref(),
            Ok(expected)
        );
    }
    let plain = Template::compile("{{ name }}", Escape::None).expect("compiles");
    assert_eq!(
        plain.render(&json!({"name": "<Ada>"})).as_deref(),
        Ok("<Ada>")
    );
}

#[test]
fn a_compiled_template_keeps_the_limits_and_reports_syntax_errors() {
    let err = Template::compile("line one\n{{ name ", Escape::Html).expect_err("broken");
    assert!(
        matches!(err, RenderError::Syntax { line: Some(2), .. }),
        "{err:?}"
    );
    let runaway = Template::compile(
        "{% for i in range(100000000) %}{{ i }}{% endfor %}",
        Escape::Html,
    )
    .expect("compiles");
    for _ in 0..2 {
        // Fuel is per render: the second render is refused for the same reason, not earlier.
        assert!(matches!(
            runaway.render(&json!({})),
            Err(RenderError::Render { .. })
        ));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn render_never_panics(source in ".{0,200}", value in ".{0,50}") {
        let ctx = json!({"name": value, "data": {"plan": value}});
        let _ = render(&source, &ctx, Escape::Html);
        let _ = render(&source, &ctx, Escape::None);
        let _ = validate(&source);
    }

    #[test]
    fn render_never_panics_on_template_like_sources(
        source in r"(\{\{\{?|\}\}\}?|\{%|%\}|\{#|#\}|\?\?|'|\x22|\\|-|name|data\.plan| |\n|[a-z(),|.]){0,40}",
        value in ".{0,20}",
    ) {
        let ctx = json!({"name": value});
        let _ = render(&source, &ctx, Escape::Html);
        let _ = validate(&source);
    }

    #[test]
    fn plain_values_render_verbatim(value in "[A-Za-z0-9 .,!?_-]{0,40}") {
        let ctx = json!({"name": value});
        let expected = format!("Hello {value}!");
        prop_assert_eq!(render("Hello {{name}}!", &ctx, Escape::Html), Ok(expected.clone()));
        prop_assert_eq!(render("Hello {{name}}!", &ctx, Escape::None), Ok(expected));
    }
}
