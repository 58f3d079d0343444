//! The config loader on any text: `config::parse` never panics; an error's span lies inside the
//! text on character boundaries, and the excerpt the command line prints under it renders.
//! The loader's own source files are compiled in, as the binary compiles them.

#![no_main]

#[allow(dead_code)]
#[path = "../../crates/cli/src/config.rs"]
mod config;

#[allow(dead_code)]
#[path = "../../crates/cli/src/overrides.rs"]
mod overrides;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Err(config::ConfigError::Invalid {
        path,
        text,
        message,
        span,
    }) = config::parse(text, "mcp-recovery.toml")
    else {
        return;
    };
    let _ = format!("{path}{message}");
    let Some(span) = span else { return };
    assert!(
        span.start <= span.end && span.end <= text.len(),
        "span {span:?} outside {} bytes",
        text.len()
    );
    assert!(text.is_char_boundary(span.start) && text.is_char_boundary(span.end));
    let excerpt = config::ConfigExcerpt {
        path: &path,
        text: &text,
        message: &message,
        span,
    };
    let handler =
        miette::GraphicalReportHandler::new_themed(miette::GraphicalTheme::unicode_nocolor())
            .with_width(100);
    let mut out = String::new();
    let _ = handler.render_report(&mut out, &excerpt);
});
