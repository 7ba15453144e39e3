//! Rewrites Posthorn's placeholder sugar into plain MiniJinja before compiling.
//!
//! `{{ name ?? "friend" }}` becomes `{{ ((name) | fallback("friend")) }}` and `{{{ raw }}}`
//! becomes `{{ (raw) | fallback('') | safe }}` (so a null prints nothing, not "none"). Only the inside of `{{ }}` tags changes: text, comments,
//! statements and `{% raw %}` blocks are copied byte for byte, and no line breaks are added
//! or removed, so MiniJinja's line numbers still point at the user's source.

use std::borrow::Cow;

use super::RenderError;

/// Name of the filter the `??` sugar compiles to (also usable directly in templates).
pub(super) const FALLBACK_FILTER: &str = "fallback";

/// Returns `source` with the sugar rewritten, borrowing it when there is nothing to do.
pub(super) fn desugar(source: &str) -> Result<Cow<'_, str>, RenderError> {
    if !source.contains("??") && !source.contains("{{{") {
        return Ok(Cow::Borrowed(source));
    }
    let bytes = source.as_bytes();
    let mut out = String::with_capacity(source.len() + 64);
    let mut copied = 0; // source[..copied] is already in `out`
    let mut pos = 0;
    while let Some(found) = source[pos..].find('{') {
        let start = pos + found;
        let rest = &bytes[start..];
        if rest.starts_with(b"{#") {
            pos = find(source, start + 2, "#}").map_or(source.len(), |end| end + 2);
        } else if rest.starts_with(b"{%") {
            let Some(end) = tag_end(source, start + 2, "%}") else {
                break;
            };
            pos = end + 2;
            if tag_keyword(&source[start + 2..end]) == "raw" {
                pos = raw_block_end(source, pos);
            }
        } else if let Some(end) = triple_end(source, start) {
            let inner = &source[start + 3..end];
            let expr = fallback_chain(inner).unwrap_or(Cow::Borrowed(inner));
            if expr.trim().is_empty() {
                return Err(sugar_error(
                    source,
                    start,
                    "`{{{ }}}` needs a variable name",
                ));
            }
            check_operands(source, start, inner)?;
            out.push_str(&source[copied..start]);
            out.push_str("{{ (");
            out.push_str(&expr);
            out.push_str(") | ");
            out.push_str(FALLBACK_FILTER);
            out.push_str("('') | safe }}");
            pos = end + 3;
            copied = pos;
        } else if rest.starts_with(b"{{") {
            let Some(end) = tag_end(source, start + 2, "}}") else {
                break;
            };
            let inner = &source[start + 2..end];
            let (lead, body, trail) = split_whitespace_control(inner);
            check_operands(source, start, body)?;
            if let Some(expr) = fallback_chain(body) {
                out.push_str(&source[copied..start]);
                out.push_str("{{");
                out.push_str(lead);
                out.push_str(&expr);
                out.push_str(trail);
                out.push_str("}}");
                copied = end + 2;
            }
            pos = end + 2;
        } else {
            pos = start + 1;
        }
    }
    out.push_str(&source[copied..]);
    Ok(Cow::Owned(out))
}

/// For `{{{`, the index of the closing `}}}` when the tag is a complete triple mustache.
fn triple_end(source: &str, start: usize) -> Option<usize> {
    if !source.as_bytes()[start..].starts_with(b"{{{") {
        return None;
    }
    let end = tag_end(source, start + 3, "}}")?;
    (source.as_bytes().get(end + 2) == Some(&b'}')).then_some(end)
}

/// The index of `close` at or after `from`, skipping over quoted strings.
fn tag_end(source: &str, from: usize, close: &str) -> Option<usize> {
    let bytes = source.as_bytes();
    let mut i = from;
    while i < bytes.len() {
        match bytes[i] {
            quote @ (b'"' | b'\'') => i = skip_string(bytes, i, quote),
            _ if bytes[i..].starts_with(close.as_bytes()) => return Some(i),
            _ => i += 1,
        }
    }
    None
}

/// The index just past the string literal opening at `open` (or the end of input).
fn skip_string(bytes: &[u8], open: usize, quote: u8) -> usize {
    let mut i = open + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b if b == quote => return i + 1,
            _ => i += 1,
        }
    }
    bytes.len()
}

fn find(source: &str, from: usize, needle: &str) -> Option<usize> {
    source[from..].find(needle).map(|i| from + i)
}

/// The first word of a statement tag's inside, ignoring whitespace-control markers.
fn tag_keyword(inner: &str) -> &str {
    inner
        .trim_start_matches(['-', '+', '~'])
        .split_whitespace()
        .next()
        .unwrap_or("")
        .trim_end_matches(['-', '+', '~'])
}

/// The index just past the `{% endraw %}` that closes a raw block whose body starts at `from`.
fn raw_block_end(source: &str, from: usize) -> usize {
    let mut pos = from;
    while let Some(start) = find(source, pos, "{%") {
        let Some(end) = find(source, start + 2, "%}") else {
            break;
        };
        if tag_keyword(&source[start + 2..end]) == "endraw" {
            return end + 2;
        }
        pos = start + 2;
    }
    source.len()
}

/// Splits `{{- x -}}`'s inside into the leading marker, the expression and the trailing one.
fn split_whitespace_control(inner: &str) -> (&str, &str, &str) {
    let lead = if inner.starts_with(['-', '+']) { 1 } else { 0 };
    let body = &inner[lead..];
    let trail = if body.ends_with(['-', '+']) { 1 } else { 0 };
    let split = body.len() - trail;
    (&inner[..lead], &body[..split], &body[split..])
}

/// Byte offsets of each top-level `??` (outside strings and brackets).
fn fallback_operators(expr: &str) -> Vec<usize> {
    let bytes = expr.as_bytes();
    let mut found = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            quote @ (b'"' | b'\'') => {
                i = skip_string(bytes, i, quote);
                continue;
            }
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            b'?' if depth == 0 && bytes.get(i + 1) == Some(&b'?') => {
                found.push(i);
                i += 2;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    found
}

/// `a ?? b ?? c` as `((a) | fallback(b)) | fallback(c)`, or `None` without a top-level `??`.
///
/// Operands are copied untrimmed so any line breaks inside the tag survive.
fn fallback_chain(expr: &str) -> Option<Cow<'_, str>> {
    let ops = fallback_operators(expr);
    let (&first, _) = ops.split_first()?;
    let mut out = format!("(({})", &expr[..first]);
    for (n, &op) in ops.iter().enumerate() {
        let end = ops.get(n + 1).copied().unwrap_or(expr.len());
        out.push_str(" | ");
        out.push_str(FALLBACK_FILTER);
        out.push('(');
        out.push_str(&expr[op + 2..end]);
        out.push(')');
    }
    out.push(')');
    Some(Cow::Owned(out))
}

/// Refuses `{{ ?? "x" }}` and `{{ name ?? }}` with a message naming the line.
fn check_operands(source: &str, tag_start: usize, expr: &str) -> Result<(), RenderError> {
    let ops = fallback_operators(expr);
    let mut from = 0;
    for (n, &op) in ops.iter().enumerate() {
        let next = ops.get(n + 1).copied().unwrap_or(expr.len());
        if expr[from..op].trim().is_empty() || expr[op + 2..next].trim().is_empty() {
            return Err(sugar_error(
                source,
                tag_start,
                "`??` needs a value on both sides, as in {{ name ?? \"friend\" }}",
            ));
        }
        from = op + 2;
    }
    Ok(())
}

fn sugar_error(source: &str, at: usize, message: &str) -> RenderError {
    RenderError::Syntax {
        line: Some(source[..at].matches('\n').count() + 1),
        message: message.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sugar(source: &str) -> String {
        desugar(source).expect("desugars").into_owned()
    }

    #[test]
    fn plain_templates_are_borrowed_unchanged() {
        let source = "Hello {{ name }} {% if x %}y{% endif %}";
        assert!(matches!(desugar(source), Ok(Cow::Borrowed(s)) if s == source));
    }

    #[test]
    fn fallback_becomes_a_filter() {
        assert_eq!(
            sugar("Hi {{name ?? \"friend\"}}!"),
            "Hi {{((name ) | fallback( \"friend\"))}}!"
        );
    }

    #[test]
    fn chained_fallbacks_fold_left() {
        assert_eq!(
            sugar("{{a??b??'c'}}"),
            "{{((a) | fallback(b) | fallback('c'))}}"
        );
    }

    #[test]
    fn whitespace_control_markers_stay_outside() {
        assert_eq!(sugar("{{- a ?? 'x' -}}"), "{{-(( a ) | fallback( 'x' ))-}}");
    }

    #[test]
    fn strings_may_contain_braces_and_question_marks() {
        assert_eq!(
            sugar("{{ a ?? \"}} ?? {{\" }} tail ??"),
            "{{(( a ) | fallback( \"}} ?? {{\" ))}} tail ??"
        );
    }

    #[test]
    fn triple_mustache_is_safe() {
        assert_eq!(
            sugar("<p>{{{ body }}}</p>"),
            "<p>{{ ( body ) | fallback('') | safe }}</p>"
        );
        assert_eq!(
            sugar("{{{ body ?? '<b>x</b>' }}}"),
            "{{ ((( body ) | fallback( '<b>x</b>' ))) | fallback('') | safe }}"
        );
    }

    #[test]
    fn text_comments_statements_and_raw_blocks_are_untouched() {
        let source = "a ?? b {# {{ c ?? d }} #}{% set s = \"{{ e ?? f }}\" %}\
                      {% raw %}{{ g ?? h }}{{{ i }}}{% endraw %}{{ j ?? k }}";
        assert_eq!(
            sugar(source),
            "a ?? b {# {{ c ?? d }} #}{% set s = \"{{ e ?? f }}\" %}\
             {% raw %}{{ g ?? h }}{{{ i }}}{% endraw %}{{(( j ) | fallback( k ))}}"
        );
    }

    #[test]
    fn nested_question_marks_are_left_to_minijinja() {
        assert_eq!(sugar("{{ f(a ?? b) }}"), "{{ f(a ?? b) }}");
    }

    #[test]
    fn line_breaks_are_preserved() {
        let source = "1\n{{ a\n ?? 'b' }}\n{{{\nc\n}}}";
        assert_eq!(
            sugar(source).matches('\n').count(),
            source.matches('\n').count()
        );
    }

    #[test]
    fn missing_operands_are_syntax_errors_with_a_line() {
        for source in ["x\n{{ ?? 'a' }}", "x\n{{ a ?? }}", "x\n{{ a ?? ?? b }}"] {
            match desugar(source) {
                Err(RenderError::Syntax { line, .. }) => assert_eq!(line, Some(2), "{source}"),
                other => panic!("{source}: {other:?}"),
            }
        }
        assert!(desugar("{{{ }}}").is_err());
    }

    #[test]
    fn unterminated_tags_are_copied_for_minijinja_to_report() {
        assert_eq!(sugar("{{ a ?? 'b"), "{{ a ?? 'b");
        assert_eq!(sugar("{% if ?? "), "{% if ?? ");
    }
}
