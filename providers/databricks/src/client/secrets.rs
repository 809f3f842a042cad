//! Where `brickform auth login` keeps tokens, behind a trait so tests never touch the real
//! OS keyring.

use std::collections::HashMap;
use std::sync::Mutex;

/// A per-host token store.
pub trait SecretStore: Send + Sync {
    /// The token stored for `host`, if any. Failures of the store read as "none": a broken
    /// keyring must not stop a run whose credentials come from elsewhere.
    fn get(&self, host: &str) -> Option<String>;
    fn set(&self, host: &str, token: &str) -> Result<(), SecretStoreError>;
    fn delete(&self, host: &str) -> Result<(), SecretStoreError>;
}

/// A token that could not be stored or removed.
#[derive(thiserror::Error)]
pub enum SecretStoreError {
    /// The OS keyring refused (no usable keyring, no permission, …).
    #[error("{source}; {}", KEYRING_HINT)]
    Keyring {
        #[source]
        source: keyring::Error,
    },
    /// The keyring took the token but does not give it back.
    #[error("the token could not be read back; {}", KEYRING_HINT)]
    NotReadBack,
    #[error("no secret store configured")]
    NoStore,
}

/// By hand, not derived: a keyring error's `Debug` may hold a stored credential's bytes
/// (`keyring::Error::BadEncoding`), its `Display` never does.
impl std::fmt::Debug for SecretStoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SecretStoreError::Keyring { source } => f
                .debug_struct("Keyring")
                .field("source", &format_args!("{source}"))
                .finish(),
            SecretStoreError::NotReadBack => f.write_str("NotReadBack"),
            SecretStoreError::NoStore => f.write_str("NoStore"),
        }
    }
}

impl From<keyring::Error> for SecretStoreError {
    fn from(source: keyring::Error) -> SecretStoreError {
        SecretStoreError::Keyring { source }
    }
}

/// The keyring service name every entry is stored under; the host is the entry's user.
const SERVICE: &str = "brickform";

/// The OS keyring: macOS Keychain, Windows Credential Manager, and on Linux the kernel keyutils
/// store. keyutils is chosen over Secret Service because it needs no D-Bus session, so it works
/// headless (servers, CI, containers); the price is that tokens last until reboot only.
pub struct KeyringStore;

/// What to tell the user when the keyring cannot be used: the usual cause on Linux containers
/// is a session keyring owned by another uid, fixed by joining a fresh session keyring.
pub const KEYRING_HINT: &str = "the OS keyring is unavailable here; set DATABRICKS_TOKEN or use a ~/.databrickscfg profile instead (in a container, running the command under `keyctl session -` gives it a usable session keyring)";

impl KeyringStore {
    fn entry(host: &str) -> Result<keyring::Entry, SecretStoreError> {
        Ok(keyring::Entry::new(SERVICE, host)?)
    }
}

impl SecretStore for KeyringStore {
    fn get(&self, host: &str) -> Option<String> {
        let entry = Self::entry(host).ok()?;
        match entry.get_password() {
            Ok(t) if !t.is_empty() => Some(t),
            Ok(_) | Err(keyring::Error::NoEntry) => None,
            Err(e) => {
                tracing::debug!(host, error = %e, "keyring lookup failed; {KEYRING_HINT}");
                None
            }
        }
    }

    fn set(&self, host: &str, token: &str) -> Result<(), SecretStoreError> {
        let entry = Self::entry(host)?;
        entry.set_password(token)?;
        // keyutils can accept a write it will not let us read back (EACCES surfaces as NoEntry
        // in keyring 3), so prove the round trip before telling the user it is stored.
        match Self::entry(host)?.get_password() {
            Ok(t) if t == token => Ok(()),
            _ => Err(SecretStoreError::NotReadBack),
        }
    }

    fn delete(&self, host: &str) -> Result<(), SecretStoreError> {
        match Self::entry(host)?.delete_credential() {
            Ok(()) | Err(keyring::Error::NoEntry) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }
}

/// An in-memory store for tests.
#[derive(Default)]
pub struct MemoryStore(Mutex<HashMap<String, String>>);

impl MemoryStore {
    pub fn new() -> MemoryStore {
        MemoryStore::default()
    }

    pub fn with(host: &str, token: &str) -> MemoryStore {
        let s = MemoryStore::default();
        s.lock().insert(host.to_string(), token.to_string());
        s
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, String>> {
        // A panic while holding this lock cannot leave the map half-updated, so a poisoned
        // lock is still safe to use.
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl std::fmt::Debug for MemoryStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let hosts: Vec<String> = self.lock().keys().cloned().collect();
        f.debug_struct("MemoryStore")
            .field("hosts", &hosts)
            .finish()
    }
}

impl SecretStore for MemoryStore {
    fn get(&self, host: &str) -> Option<String> {
        self.lock().get(host).cloned()
    }
    fn set(&self, host: &str, token: &str) -> Result<(), SecretStoreError> {
        self.lock().insert(host.to_string(), token.to_string());
        Ok(())
    }
    fn delete(&self, host: &str) -> Result<(), SecretStoreError> {
        self.lock().remove(host);
        Ok(())
    }
}

/// A store that never has anything, for callers that want no keyring at all.
pub struct NoStore;

impl SecretStore for NoStore {
    fn get(&self, _host: &str) -> Option<String> {
        None
    }
    fn set(&self, _host: &str, _token: &str) -> Result<(), SecretStoreError> {
        Err(SecretStoreError::NoStore)
    }
    fn delete(&self, _host: &str) -> Result<(), SecretStoreError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_store_round_trip_and_debug_hides_tokens() {
        let s = MemoryStore::new();
        assert_eq!(s.get("https://h"), None);
        s.set("https://h", "dapi-secret").unwrap();
        assert_eq!(s.get("https://h").as_deref(), Some("dapi-secret"));
        assert!(!format!("{s:?}").contains("dapi-secret"));
        s.delete("https://h").unwrap();
        assert_eq!(s.get("https://h"), None);
    }

    #[test]
    fn store_errors_never_show_a_stored_credential() {
        // A credential that is not UTF-8 comes back in the keyring error; its Debug shows it.
        let bytes = b"dapi-SECRET\xff".to_vec();
        let listed = format!("{bytes:?}");
        let listed = listed.trim_matches(['[', ']']);
        let raw = keyring::Error::BadEncoding(bytes.clone());
        assert!(format!("{raw:?}").contains(listed));
        let e = SecretStoreError::from(keyring::Error::BadEncoding(bytes));
        for shown in [e.to_string(), format!("{e:?}")] {
            assert!(
                !shown.contains(listed) && !shown.contains("SECRET"),
                "{shown}"
            );
        }
        assert!(e.to_string().ends_with(KEYRING_HINT));
        assert_eq!(
            SecretStoreError::NotReadBack.to_string(),
            format!("the token could not be read back; {KEYRING_HINT}")
        );
    }
}
