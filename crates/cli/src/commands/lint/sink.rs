//! Where the reports of a `lint` run go: stdout in `--format`, and each `--output-file`.

use std::io::Write;
use std::path::PathBuf;

use crate::Failure;
use crate::args::lint::{LintArgs, OutputFile};
use crate::render::{self, Finding, Source, Style, Summary};
use crate::sources::SourceReport;

/// One report of the run: stdout or an `--output-file`.
pub struct Sink {
    renderer: Box<dyn render::Renderer>,
    out: Box<dyn Write>,
    /// The file, for errors (`None`: stdout).
    path: Option<PathBuf>,
}

impl Sink {
    /// Opens `--output-file` before linting, so a bad path fails the run at once.
    fn file(output: &OutputFile) -> Result<Self, Failure> {
        let file = std::fs::File::create(&output.path).map_err(|source| Failure::WriteFile {
            path: output.path.display().to_string(),
            source,
        })?;
        // Files never get colors, whatever the terminal.
        let style = Style {
            color: false,
            ..Style::detect()
        };
        Ok(Self {
            renderer: render::renderer(output.format, style),
            out: Box::new(std::io::BufWriter::new(file)),
            path: Some(output.path.clone()),
        })
    }

    /// Names the file in a write error.
    fn error(&self, source: std::io::Error) -> Failure {
        match &self.path {
            Some(path) => Failure::WriteFile {
                path: path.display().to_string(),
                source,
            },
            None => Failure::Write(source),
        }
    }

    pub fn document(
        &mut self,
        name: &str,
        source: Option<&Source<'_>>,
        findings: &[Finding],
    ) -> Result<(), Failure> {
        let result = render::document(&mut *self.renderer, &mut self.out, name, source, findings);
        result.map_err(|e| self.error(e))
    }

    pub fn source(&mut self, source: &SourceReport) -> Result<(), Failure> {
        let result = self.renderer.source(&mut self.out, source);
        result.map_err(|e| self.error(e))
    }

    pub fn finish(&mut self, summary: &Summary) -> Result<(), Failure> {
        let result = self
            .renderer
            .finish(&mut self.out, summary)
            .and_then(|()| self.out.flush());
        result.map_err(|e| self.error(e))
    }
}

/// Stdout in `--format`, then every `--output-file`, each opened before linting so that a bad
/// path fails the run at once.
pub fn open_all(args: &LintArgs) -> Result<Vec<Sink>, Failure> {
    let mut sinks = vec![Sink {
        renderer: render::renderer(args.format, Style::detect()),
        out: Box::new(std::io::stdout().lock()),
        path: None,
    }];
    for output in &args.output_files {
        sinks.push(Sink::file(output)?);
    }
    Ok(sinks)
}
