//! Where the reports of a `lint` run go: stdout in `--format`, and each `--output-file`.

use std::io::Write;
use std::path::PathBuf;

use crate::Failure;
use crate::args::lint::{LintArgs, OutputFile};
use crate::render::{self, Finding, Source, Style, Summary};
use crate::sources::SourceReport;
use crate::written::Replacing;

/// One report of the run: stdout or an `--output-file`.
pub struct Sink {
    renderer: Box<dyn render::Renderer>,
    out: Box<dyn Write>,
    /// The file, for errors (`None`: stdout).
    path: Option<PathBuf>,
    /// The file's replacement, put in place when the report is finished.
    replacing: Option<Replacing>,
}

/// Stdout, which a reader may close early (`lint … | head`): what follows is dropped and the run
/// goes on, so every `--output-file` is still written and the exit status still says what was
/// found.
struct Stdout {
    out: std::io::StdoutLock<'static>,
    closed: bool,
}

impl Stdout {
    fn absorb(&mut self, result: std::io::Result<usize>, len: usize) -> std::io::Result<usize> {
        match result {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(len)
            }
            other => other,
        }
    }
}

impl Write for Stdout {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        if self.closed {
            return Ok(bytes.len());
        }
        let result = self.out.write(bytes);
        self.absorb(result, bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if self.closed {
            return Ok(());
        }
        let result = self.out.flush().map(|()| 0);
        self.absorb(result, 0).map(|_| ())
    }
}

impl Sink {
    /// Starts `--output-file` before linting, so a bad path fails the run at once; the file is
    /// replaced only when its report is finished.
    fn file(output: &OutputFile) -> Result<Self, Failure> {
        let mut replacing = Replacing::start(&output.path)?;
        let file = replacing
            .writer()
            .try_clone()
            .map_err(|source| Failure::WriteFile {
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
            replacing: Some(replacing),
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
        result.map_err(|e| self.error(e))?;
        match self.replacing.take() {
            Some(replacing) => replacing.commit(),
            None => Ok(()),
        }
    }
}

/// Stdout in `--format`, then every `--output-file`, each opened before linting so that a bad
/// path fails the run at once.
pub fn open_all(args: &LintArgs) -> Result<Vec<Sink>, Failure> {
    let stdout = Stdout {
        out: std::io::stdout().lock(),
        closed: false,
    };
    let mut sinks = vec![Sink {
        renderer: render::renderer(args.format, Style::detect()),
        out: Box::new(stdout),
        path: None,
        replacing: None,
    }];
    for output in &args.output_files {
        sinks.push(Sink::file(output)?);
    }
    Ok(sinks)
}
