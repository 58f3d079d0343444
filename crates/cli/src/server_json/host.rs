//! Where a `server.json` run finds what it needs: the environment, the programs on the PATH,
//! a Docker daemon, and the hosts of `--allow-host`.

use std::time::{Duration, Instant};

use crate::allowed_hosts::AllowedHosts;

/// How long `docker version` may take to say whether a daemon answers.
const DOCKER_PROBE: Duration = Duration::from_secs(10);

/// Where this run finds variables: the environment, and whether Docker can run containers.
pub struct Host<'a> {
    /// A variable of the environment.
    pub env: &'a dyn Fn(&str) -> Option<String>,
    /// Whether a Docker daemon answers (asked once, when an OCI package needs it).
    pub docker: &'a dyn Fn() -> bool,
    /// Whether a program (`npx`, `uvx`) is found on the PATH.
    pub installed: &'a dyn Fn(&str) -> bool,
    /// The hosts a remote may send values of the environment to (`--allow-host`).
    pub allowed: &'a AllowedHosts,
}

/// Whether a Docker daemon answers `docker version` within a few seconds.
pub fn docker_answers() -> bool {
    let child = std::process::Command::new("docker")
        .args(["version", "--format", "{{.Server.Version}}"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    let Ok(mut child) = child else {
        return false;
    };
    let deadline = Instant::now() + DOCKER_PROBE;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return status.success(),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(50)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return false;
            }
        }
    }
}

/// Whether `program` is an executable file in a directory of the PATH.
pub fn on_path(program: &str) -> bool {
    let Some(path) = std::env::var_os("PATH") else {
        return false;
    };
    std::env::split_paths(&path).any(|dir| {
        std::fs::metadata(dir.join(program)).is_ok_and(|meta| meta.is_file() && executable(&meta))
    })
}

#[cfg(unix)]
fn executable(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o111 != 0
}

#[cfg(not(unix))]
fn executable(_meta: &std::fs::Metadata) -> bool {
    true
}

/// The host of a real run: the process environment, the PATH, Docker asked at most once, and
/// the hosts of `--allow-host`.
pub fn with_real_host<R>(allowed: &AllowedHosts, f: impl FnOnce(&Host<'_>) -> R) -> R {
    let docker = std::cell::OnceCell::new();
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let docker_fn = || *docker.get_or_init(docker_answers);
    f(&Host {
        env: &env,
        docker: &docker_fn,
        installed: &on_path,
        allowed,
    })
}
