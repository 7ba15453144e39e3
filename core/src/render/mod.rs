//! Template rendering: Posthorn's placeholders on top of MiniJinja, and HTML to plain text.
//!
//! Placeholders: `{{name}}`, `{{ data.plan }}`, `{{ name ?? "friend" }}` (fallback when the
//! value is missing, null or empty), `{{{raw}}}` (no escaping) and everything else MiniJinja
//! offers (`{% if %}`, `{% for %}`, filters). Unknown names render empty. Rendering is pure,
//! bounded in work (fuel), recursion depth and output size, and never panics.

mod sugar;
mod text;

use std::io;
use std::sync::LazyLock;

use minijinja::value::{Value, ValueKind};
use minijinja::{AutoEscape, Environment, ErrorKind, Output, State, UndefinedBehavior};

pub use text::html_to_text;

/// Instruction budget of one render; `range()` alone allows at most 100 000 items.
const FUEL: u64 = 50_000;
/// Nesting depth of blocks, loops and macro calls.
const RECURSION_LIMIT: usize = 64;
/// Largest rendered output accepted, in bytes.
pub const MAX_OUTPUT_BYTES: usize = 4 * 1024 * 1024;

/// How substituted values are escaped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Escape {
    /// HTML-escape values (bodies); `{{{ }}}` and `| safe` opt out.
    Html,
    /// Insert values as they are (subjects, plain text).
    None,
}

/// Why a template could not be compiled or rendered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RenderError {
    /// The template does not parse.
    #[error("template syntax error{}: {message}", on_line(*.line))]
    Syntax {
        /// 1-based line of the error, when known.
        line: Option<usize>,
        /// What is wrong, for humans.
        message: String,
    },
    /// The template parsed but failed while rendering (bad filter use, over a limit).
    #[error("template render error{}: {message}", on_line(*.line))]
    Render {
        /// 1-based line of the error, when known.
        line: Option<usize>,
        /// What went wrong, for humans.
        message: String,
    },
}

fn on_line(line: Option<usize>) -> String {
    line.map(|l| format!(" on line {l}")).unwrap_or_default()
}

static HTML_ENV: LazyLock<Environment<'static>> = LazyLock::new(|| environment(Escape::Html));
static PLAIN_ENV: LazyLock<Environment<'static>> = LazyLock::new(|| environment(Escape::None));

fn environment(mode: Escape) -> Environment<'static> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Chainable);
    env.set_fuel(Some(FUEL));
    env.set_recursion_limit(RECURSION_LIMIT);
    env.set_debug(false);
    env.set_keep_trailing_newline(true);
    env.add_filter(sugar::FALLBACK_FILTER, fallback);
    env.set_formatter(format_value);
    match mode {
        Escape::Html => env.set_auto_escape_callback(|_| AutoEscape::Html),
        Escape::None => env.set_auto_escape_callback(|_| AutoEscape::None),
    }
    env
}

/// `value`, or `default` when `value` is undefined, none or the empty string.
fn fallback(value: Value, default: Value) -> Value {
    if value.is_undefined() || value.is_none() || value.as_str() == Some("") {
        default
    } else {
        value
    }
}

/// Prints values the way mail readers expect: null as nothing, booleans as `true`/`false`,
/// and HTML escaping of `& < > " '` only (MiniJinja's default also turns `/` into `&#x2f;`,
/// which makes URLs in `href`s unreadable to link rewriters).
fn format_value(
    out: &mut Output<'_>,
    state: &State<'_, '_>,
    value: &Value,
) -> Result<(), minijinja::Error> {
    let write_failed = |_| minijinja::Error::from(ErrorKind::WriteFailure);
    if value.is_none() || value.is_undefined() {
        return Ok(());
    }
    if value.kind() == ValueKind::Bool {
        let text = if value.is_true() { "true" } else { "false" };
        return out.write_str(text).map_err(write_failed);
    }
    if state.auto_escape() != AutoEscape::Html || value.is_safe() {
        return minijinja::escape_formatter(out, state, value);
    }
    let owned;
    let text = match value.as_str() {
        Some(text) => text,
        None => {
            owned = value.to_string();
            &owned
        }
    };
    let mut rest = text;
    while let Some(at) = rest.find(['&', '<', '>', '"', '\'']) {
        out.write_str(&rest[..at]).map_err(write_failed)?;
        let entity = match rest.as_bytes()[at] {
            b'&' => "&amp;",
            b'<' => "&lt;",
            b'>' => "&gt;",
            b'"' => "&quot;",
            _ => "&#39;",
        };
        out.write_str(entity).map_err(write_failed)?;
        rest = &rest[at + 1..];
    }
    out.write_str(rest).map_err(write_failed)
}

/// Renders `source` with `context` as the top-level variables.
///
/// Compiles `source` on every call; to render one template for many contexts (a campaign
/// batch), compile it once with [`Template::compile`].
pub fn render(
    source: &str,
    context: &serde_json::Value,
    mode: Escape,
) -> Result<String, RenderError> {
    let source = sugar::desugar(source)?;
    let template = shared_environment(mode)
        .template_from_str(&source)
        .map_err(syntax_error)?;
    render_compiled(&template, context)
}

/// A template compiled once, to be rendered with many contexts.
#[derive(Debug, Clone)]
pub struct Template {
    env: Environment<'static>,
}

/// Name of the one template a [`Template`]'s environment holds.
const TEMPLATE_NAME: &str = "template";

impl Template {
    /// Compiles `source` for rendering with `mode`.
    pub fn compile(source: &str, mode: Escape) -> Result<Self, RenderError> {
        let source = sugar::desugar(source)?.into_owned();
        let mut env = shared_environment(mode).clone();
        env.add_template_owned(TEMPLATE_NAME, source)
            .map_err(syntax_error)?;
        Ok(Self { env })
    }

    /// Renders the template with `context` as the top-level variables.
    pub fn render(&self, context: &serde_json::Value) -> Result<String, RenderError> {
        let template = self.env.get_template(TEMPLATE_NAME).map_err(syntax_error)?;
        render_compiled(&template, context)
    }
}

fn shared_environment(mode: Escape) -> &'static Environment<'static> {
    match mode {
        Escape::Html => &HTML_ENV,
        Escape::None => &PLAIN_ENV,
    }
}

/// Renders a compiled template into a string, within [`MAX_OUTPUT_BYTES`].
fn render_compiled(
    template: &minijinja::Template<'_, '_>,
    context: &serde_json::Value,
) -> Result<String, RenderError> {
    let mut out = CappedBuffer::default();
    let result = template
        .render_captured_to(Value::from_serialize(context), &mut out)
        .map(drop);
    match result {
        Ok(()) => String::from_utf8(out.bytes).map_err(|_| RenderError::Render {
            line: None,
            message: "rendered output is not valid UTF-8".to_owned(),
        }),
        Err(_) if out.overflowed => Err(RenderError::Render {
            line: None,
            message: format!("rendered output is larger than {MAX_OUTPUT_BYTES} bytes"),
        }),
        Err(err) => Err(render_error(err)),
    }
}

/// Checks that `source` compiles, and that the filters, tests and functions it uses exist
/// (MiniJinja looks them up only when rendering). Those are found by a dry render with no
/// data, within the usual limits: one used only on a path that data would open (inside
/// `{% if contact.data.plan %}`) is not reached, and is reported when the template is sent.
pub fn validate(source: &str) -> Result<(), RenderError> {
    let source = sugar::desugar(source)?;
    let template = HTML_ENV.template_from_str(&source).map_err(syntax_error)?;
    let mut out = CappedBuffer::default();
    let dry = template.render_captured_to(Value::UNDEFINED, &mut out);
    let unknown = dry.err().filter(|err| {
        matches!(
            err.kind(),
            ErrorKind::UnknownFilter | ErrorKind::UnknownTest | ErrorKind::UnknownFunction
        )
    });
    // Any other failure depends on the data the template will be sent with.
    unknown.map_or(Ok(()), |err| Err(syntax_error(err)))
}

fn syntax_error(err: minijinja::Error) -> RenderError {
    RenderError::Syntax {
        line: err.line(),
        message: describe(&err),
    }
}

fn render_error(err: minijinja::Error) -> RenderError {
    let message = match err.kind() {
        ErrorKind::OutOfFuel => {
            "template does too much work (loops or recursion over the limit)".to_owned()
        }
        _ => describe(&err),
    };
    RenderError::Render {
        line: err.line(),
        message,
    }
}

fn describe(err: &minijinja::Error) -> String {
    match err.detail() {
        Some(detail) if err.kind() == ErrorKind::SyntaxError => detail.to_owned(),
        Some(detail) => format!("{}: {detail}", err.kind()),
        None => err.kind().to_string(),
    }
}

/// An output buffer that refuses to grow past [`MAX_OUTPUT_BYTES`].
#[derive(Default)]
struct CappedBuffer {
    bytes: Vec<u8>,
    overflowed: bool,
}

impl io::Write for CappedBuffer {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.bytes.len() + buf.len() > MAX_OUTPUT_BYTES {
            self.overflowed = true;
            return Err(io::Error::other("rendered output too large"));
        }
        self.bytes.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests;
