//! Ed25519 key pairs for signed journal checkpoints and approval decisions.
//!
//! A secret key file holds the 32-byte seed as 64 lowercase hex digits and a line break; its
//! public key file (the same path with `.pub` appended) holds the 32-byte public key the same
//! way. A key's id is the first 16 hex digits of the SHA-256 of its public key bytes. Signatures
//! are the 64 signature bytes in lowercase hex. `spec/journal.md` defines where they are used.

use std::io::Write;
use std::path::{Path, PathBuf};

use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};
use sha2::{Digest, Sha256};

use crate::hash::hex;

/// Why a key could not be made, read or used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KeyError {
    /// The file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The key file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file does not hold a key in the expected form.
    #[error("{path}: {reason}")]
    Malformed {
        /// The key file (or `-` for a key given as text).
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The operating system's random source failed.
    #[error("cannot draw a random key: {0}")]
    Random(String),
}

/// A secret signing key. Its bytes are never printed (`Debug` shows only the key id).
pub struct SecretKey(SigningKey);

/// A public key that verifies signatures.
#[derive(Clone, PartialEq, Eq)]
pub struct PublicKey(VerifyingKey);

impl std::fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SecretKey({})", self.public().id())
    }
}

impl std::fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PublicKey({})", self.id())
    }
}

/// The path of the public key beside a secret key file: `PATH.pub`.
pub fn public_path(secret: &Path) -> PathBuf {
    let mut path = secret.as_os_str().to_owned();
    path.push(".pub");
    PathBuf::from(path)
}

/// Draws a new key pair and writes it: `path` (the secret, created readable and writable by its
/// owner only) and `path.pub`. Neither file may exist already: a key is never overwritten.
pub fn generate(path: &Path) -> Result<PublicKey, KeyError> {
    let mut seed = [0u8; 32];
    getrandom::fill(&mut seed).map_err(|e| KeyError::Random(e.to_string()))?;
    let secret = SecretKey(SigningKey::from_bytes(&seed));
    let public = secret.public();
    let public_file = public_path(path);
    // A link counts as there, even one that leads nowhere: writing would follow it.
    if std::fs::symlink_metadata(&public_file).is_ok() {
        return Err(KeyError::Io {
            path: public_file,
            source: std::io::ErrorKind::AlreadyExists.into(),
        });
    }
    write_new(path, &hex(&seed), true)?;
    if let Err(error) = write_new(&public_file, &public.to_hex(), false) {
        // No secret without its public half: the secret just written is taken back.
        let _ = std::fs::remove_file(path);
        return Err(error);
    }
    Ok(public)
}

fn write_new(path: &Path, text: &str, secret: bool) -> Result<(), KeyError> {
    let io = |source| KeyError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(if secret { 0o600 } else { 0o644 });
    }
    #[cfg(not(unix))]
    let _ = secret;
    let mut file = options.open(path).map_err(io)?;
    file.write_all(format!("{text}\n").as_bytes())
        .and_then(|()| file.sync_all())
        .map_err(io)
}

fn read_key_bytes(path: &Path) -> Result<[u8; 32], KeyError> {
    let mut text = String::new();
    let file = std::fs::File::open(path).map_err(|source| KeyError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    // A key file is 65 bytes; reading a little more is enough to tell a wrong file.
    std::io::Read::read_to_string(&mut std::io::Read::take(file, 256), &mut text).map_err(
        |source| KeyError::Io {
            path: path.to_path_buf(),
            source,
        },
    )?;
    parse_key(text.trim_end_matches(['\n', '\r'])).map_err(|reason| KeyError::Malformed {
        path: path.to_path_buf(),
        reason,
    })
}

fn parse_key(text: &str) -> Result<[u8; 32], String> {
    let bytes = unhex(text).ok_or("a key is 64 hex digits")?;
    bytes
        .try_into()
        .map_err(|_| "a key is 64 hex digits".into())
}

impl SecretKey {
    /// Reads a secret key file. On Unix a file that others may read is refused.
    pub fn read(path: &Path) -> Result<SecretKey, KeyError> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let meta = std::fs::metadata(path).map_err(|source| KeyError::Io {
                path: path.to_path_buf(),
                source,
            })?;
            if meta.permissions().mode() & 0o077 != 0 {
                return Err(KeyError::Malformed {
                    path: path.to_path_buf(),
                    reason: "a secret key must be readable by its owner only (chmod 600)".into(),
                });
            }
        }
        Ok(SecretKey(SigningKey::from_bytes(&read_key_bytes(path)?)))
    }

    /// The public half.
    pub fn public(&self) -> PublicKey {
        PublicKey(self.0.verifying_key())
    }

    /// Signs `message`: 128 lowercase hex digits.
    pub fn sign(&self, message: &[u8]) -> String {
        hex(&self.0.sign(message).to_bytes())
    }
}

impl PublicKey {
    /// Reads a public key file.
    pub fn read(path: &Path) -> Result<PublicKey, KeyError> {
        let bytes = read_key_bytes(path)?;
        PublicKey::from_bytes(&bytes).map_err(|reason| KeyError::Malformed {
            path: path.to_path_buf(),
            reason,
        })
    }

    /// A public key written as 64 hex digits (as in a policy file).
    pub fn from_hex(text: &str) -> Result<PublicKey, String> {
        PublicKey::from_bytes(&parse_key(text)?)
    }

    /// A key of small order (the identity and the other points of order 2, 4 or 8, in any
    /// encoding) is refused: some verifiers accept any signature of any message under it.
    fn from_bytes(bytes: &[u8; 32]) -> Result<PublicKey, String> {
        let key = VerifyingKey::from_bytes(bytes).map_err(|_| "not an ed25519 public key")?;
        if key.is_weak() {
            return Err(
                "a weak ed25519 public key (a point of small order), which does not \
                        bind a signature to its signer"
                    .into(),
            );
        }
        // Another key plus a point of small order verifies some of that key's signatures.
        if !key.to_edwards().is_torsion_free() {
            return Err(
                "an ed25519 public key with a small-order component, which may verify \
                        signatures made by another key"
                    .into(),
            );
        }
        Ok(PublicKey(key))
    }

    /// The key as 64 lowercase hex digits.
    pub fn to_hex(&self) -> String {
        hex(self.0.as_bytes())
    }

    /// The key id: the first 16 hex digits of the SHA-256 of the key bytes.
    pub fn id(&self) -> String {
        let digest = Sha256::digest(self.0.as_bytes());
        hex(&digest[..8])
    }

    /// True when `signature` (hex) is this key's signature of `message` (strict verification:
    /// no malleable or small-order forms).
    pub fn verify(&self, message: &[u8], signature: &str) -> bool {
        let Some(bytes) = unhex(signature) else {
            return false;
        };
        let Ok(bytes) = <[u8; 64]>::try_from(bytes) else {
            return false;
        };
        self.0
            .verify_strict(message, &Signature::from_bytes(&bytes))
            .is_ok()
    }
}

/// Lowercase hex digits to bytes (`None` for anything else, uppercase included: one spelling).
fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    let digit = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    text.as_bytes()
        .chunks(2)
        .map(|pair| Some(digit(pair[0])? << 4 | digit(pair[1])?))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_generated_pair_signs_and_verifies_and_is_never_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k");
        let public = generate(&path).unwrap();
        assert_eq!(PublicKey::read(&public_path(&path)).unwrap(), public);
        let secret = SecretKey::read(&path).unwrap();
        assert_eq!(secret.public(), public);
        let signature = secret.sign(b"head");
        assert_eq!(signature.len(), 128);
        assert!(public.verify(b"head", &signature));
        assert!(!public.verify(b"head!", &signature));
        assert!(!public.verify(b"head", &signature.to_uppercase()));
        assert!(!public.verify(b"head", &signature[..126]));
        assert_eq!(public.id().len(), 16);
        assert!(!format!("{secret:?}").contains(&std::fs::read_to_string(&path).unwrap()[..8]));
        assert!(matches!(generate(&path), Err(KeyError::Io { .. })));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
            assert!(SecretKey::read(&path).is_err());
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_public_half_in_the_way_leaves_no_secret_behind() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k");
        // A link to nowhere where the public key would go: refused before anything is written.
        std::os::unix::fs::symlink(dir.path().join("nowhere"), public_path(&path)).unwrap();
        assert!(matches!(generate(&path), Err(KeyError::Io { .. })));
        assert!(std::fs::symlink_metadata(&path).is_err());
        assert!(std::fs::symlink_metadata(dir.path().join("nowhere")).is_err());
    }

    #[test]
    fn a_known_vector_matches_rfc_8032() {
        // RFC 8032, section 7.1, test 1 (the empty message).
        let seed = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60";
        let public = "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a";
        let key = SecretKey(SigningKey::from_bytes(&parse_key(seed).unwrap()));
        assert_eq!(key.public().to_hex(), public);
        assert_eq!(
            key.sign(b""),
            "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e06522490155\
             5fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"
        );
        assert!(PublicKey::from_hex("D75A").is_err());
        // The identity, in its canonical and a non-canonical encoding, and a point of order 8.
        for weak in [
            "0100000000000000000000000000000000000000000000000000000000000000",
            "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
            "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",
        ] {
            let refused = PublicKey::from_hex(weak).unwrap_err();
            assert!(refused.contains("small order"), "{weak}: {refused}");
        }
        assert!(PublicKey::from_hex(&public.to_uppercase()).is_err());
        // The test key plus the point of order 2: not of small order, yet not the key either.
        let mixed = "16a567fe7d4ef5482ab4012c369bf8c5f11e8d0c2559dcda50fde59708f8aee5";
        let refused = PublicKey::from_hex(mixed).unwrap_err();
        assert!(refused.contains("small-order component"), "{refused}");
    }
}
