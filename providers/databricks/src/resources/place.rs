//! Where this provider's objects lie, as a type: a Unity Catalog securable, a file or
//! folder in a volume, a workspace object, a secret scope or secret, a path in cloud
//! storage. The engine compares places as core's [`Location`]s (a namespace and steps); a
//! [`Place`] converts to and from one, and its `Display` is how plans show it (a path or a
//! full name).
//!
//! Unity Catalog securables and the files in volumes share one namespace, their steps the
//! catalog, schema and volume names and then the path below the volume: a schema's or a
//! volume's delete takes the files inside it, so a file must lie inside them.

use crate::volume_path::VolumePath;
use brickform_core::location::Location;
use std::fmt;

/// The namespaces of core's locations, one per family of places that can hold one another.
const UNITY_CATALOG: &str = "uc";
const WORKSPACE: &str = "ws";
const SECRETS: &str = "secrets";
const STORAGE: &str = "storage";

/// Where an object of this provider lies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// A securable by the parts of its full name (`main`, `raw`, `landing`), lowercased:
    /// Unity Catalog names are case-insensitive.
    UnityCatalog(Vec<String>),
    /// A file or folder in a volume: the volume's names lowercased, the path below it as
    /// written (file names are case-sensitive).
    VolumeFile(VolumePath),
    /// A workspace object by the segments of its path, without the `/Workspace` prefix
    /// (`/Workspace/x` and `/x` are one object).
    Workspace(Vec<String>),
    /// A secret scope, or a secret in one. Scope names and keys are case-sensitive.
    Secret { scope: String, key: Option<String> },
    /// A path in cloud storage (`s3://bucket/landing`), without a trailing slash, so what
    /// lies under it is inside it.
    Storage(String),
}

impl Place {
    /// A Unity Catalog securable by its full name (`main.raw.landing`).
    pub fn unity_catalog(full_name: &str) -> Place {
        Place::UnityCatalog(
            full_name
                .to_lowercase()
                .split('.')
                .map(str::to_string)
                .collect(),
        )
    }

    /// A file or folder in a volume, by its path (`/Volumes/main/raw/landing/in/a.csv`);
    /// `None` for what is not a path in a volume.
    pub fn volume_path(path: &str) -> Option<Place> {
        let mut p = VolumePath::parse(path)?;
        for name in [&mut p.catalog, &mut p.schema, &mut p.volume] {
            *name = name.to_lowercase();
        }
        Some(Place::VolumeFile(p))
    }

    /// A workspace object by its path; `/Workspace/x` and `/x` are the same object.
    pub fn workspace(path: &str) -> Place {
        // `/WorkspaceX/…` is a folder of its own, not `/X/…`.
        let p = match path.strip_prefix("/Workspace") {
            Some(rest) if rest.is_empty() || rest.starts_with('/') => rest,
            _ => path,
        };
        Place::Workspace(
            p.split('/')
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect(),
        )
    }

    /// A secret scope (`key` `None`), or a secret in one.
    pub fn secret(scope: &str, key: Option<&str>) -> Place {
        Place::Secret {
            scope: scope.to_string(),
            key: key.map(str::to_string),
        }
    }

    /// A path in cloud storage, as an external location's url or a storage root names it.
    pub fn storage(url: &str) -> Place {
        Place::Storage(url.trim_end_matches('/').to_string())
    }

    /// A location as the user knows the object (see `Display`); a location of no place of
    /// this provider's as core writes it.
    pub fn shown(location: &Location) -> String {
        Place::try_from(location).map_or_else(|()| location.to_string(), |p| p.to_string())
    }
}

/// The steps of a storage url: the scheme with the bucket or account is one step (nothing
/// lies in `s3:` alone), then each segment of the path.
fn storage_steps(url: &str) -> Vec<String> {
    // Where the path begins: after the host of `scheme://host/…`.
    let host_end = match url.find("://") {
        Some(i) => match url[i + 3..].find('/') {
            Some(j) => i + 3 + j,
            None => return vec![url.to_string()],
        },
        None => return url.split('/').map(str::to_string).collect(),
    };
    std::iter::once(url[..host_end].to_string())
        .chain(url[host_end + 1..].split('/').map(str::to_string))
        .collect()
}

impl From<&Place> for Location {
    fn from(place: &Place) -> Location {
        match place {
            Place::UnityCatalog(parts) => Location::new(UNITY_CATALOG, parts.iter().cloned()),
            Place::VolumeFile(p) => Location::new(
                UNITY_CATALOG,
                p.names()
                    .into_iter()
                    .map(str::to_string)
                    .chain(p.rest.iter().cloned()),
            ),
            Place::Workspace(segments) => Location::new(WORKSPACE, segments.iter().cloned()),
            Place::Secret { scope, key } => {
                Location::new(SECRETS, std::iter::once(scope).chain(key).cloned())
            }
            Place::Storage(url) => Location::new(STORAGE, storage_steps(url)),
        }
    }
}

impl From<Place> for Location {
    fn from(place: Place) -> Location {
        Location::from(&place)
    }
}

/// The place a location of this provider's names; `Err` for one of no namespace of its own.
impl TryFrom<&Location> for Place {
    type Error = ();

    fn try_from(location: &Location) -> Result<Place, ()> {
        let steps = location.steps();
        Ok(match location.namespace() {
            // Below a volume's three names lie its files and folders.
            UNITY_CATALOG => match steps {
                [catalog, schema, volume, rest @ ..] if !rest.is_empty() => {
                    Place::VolumeFile(VolumePath {
                        catalog: catalog.clone(),
                        schema: schema.clone(),
                        volume: volume.clone(),
                        rest: rest.to_vec(),
                    })
                }
                _ => Place::UnityCatalog(steps.to_vec()),
            },
            WORKSPACE => Place::Workspace(steps.to_vec()),
            SECRETS => match steps {
                [scope] => Place::secret(scope, None),
                [scope, key] => Place::secret(scope, Some(key)),
                _ => return Err(()),
            },
            STORAGE => Place::Storage(steps.join("/")),
            _ => return Err(()),
        })
    }
}

/// How plans show a place: `main.raw.landing` for a securable (a volume too),
/// `/Volumes/main/raw/landing/in/a.csv` for a file in a volume, `/Shared/x` for a workspace
/// object, `secret KEY in scope SCOPE`, a storage url as it is.
impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Place::UnityCatalog(parts) => f.write_str(&parts.join(".")),
            // The volume itself is a securable, shown by its full name.
            Place::VolumeFile(p) if p.rest.is_empty() => f.write_str(&p.names().join(".")),
            Place::VolumeFile(p) => f.write_str(&p.path()),
            Place::Workspace(segments) => write!(f, "/{}", segments.join("/")),
            Place::Secret { scope, key: None } => write!(f, "secret scope {scope}"),
            Place::Secret {
                scope,
                key: Some(key),
            } => write!(f, "secret {key} in scope {scope}"),
            Place::Storage(url) => f.write_str(url),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn location(place: Place) -> Location {
        place.into()
    }

    #[test]
    fn places_nest_as_the_objects_do() {
        let file = location(Place::volume_path("/Volumes/Main/raw/Landing/In/A.csv").unwrap());
        assert_eq!(file.steps(), ["main", "raw", "landing", "In", "A.csv"]);
        assert!(file.is_within(&location(Place::unity_catalog("Main.Raw.landing"))));
        assert!(file.is_within(&location(Place::unity_catalog("main"))));
        assert_eq!(
            location(Place::volume_path("/Volumes/c/s/v").unwrap()),
            location(Place::unity_catalog("c.s.v"))
        );
        assert_eq!(Place::volume_path("/Volumes/main/raw"), None);
        assert_eq!(
            location(Place::workspace("/Workspace/Users/a/x/")),
            location(Place::workspace("/Users/a/x"))
        );
        assert!(
            location(Place::workspace("/Users/a/x"))
                .is_within(&location(Place::workspace("/Users/a")))
        );
        assert_eq!(
            location(Place::workspace("/WorkspaceX/a")).steps(),
            ["WorkspaceX", "a"]
        );
        let landing = location(Place::storage("s3://bucket/landing/"));
        assert!(location(Place::storage("s3://bucket/landing/cat")).is_within(&landing));
        assert!(!location(Place::storage("s3://bucket/landing2")).is_within(&landing));
        assert!(landing.is_within(&location(Place::storage("s3://bucket"))));
        assert!(
            location(Place::secret("app", Some("db")))
                .is_within(&location(Place::secret("app", None)))
        );
    }

    #[test]
    fn places_are_shown_as_paths_and_full_names() {
        for (path_or_name, place) in [
            (
                "/Volumes/main/raw/landing/In/A.csv",
                Place::volume_path("/Volumes/main/raw/landing/In/A.csv").unwrap(),
            ),
            ("main.raw.landing", Place::unity_catalog("main.raw.landing")),
            (
                "main.raw.landing",
                Place::volume_path("/Volumes/main/raw/landing").unwrap(),
            ),
            ("main.raw", Place::unity_catalog("main.raw")),
            ("/Users/a/x", Place::workspace("/Workspace/Users/a/x")),
            ("secret scope app", Place::secret("app", None)),
            (
                "secret db_password in scope app",
                Place::secret("app", Some("db_password")),
            ),
            (
                "s3://bucket/landing",
                Place::storage("s3://bucket/landing/"),
            ),
            (
                "abfss://c@a.dfs.core.windows.net",
                Place::storage("abfss://c@a.dfs.core.windows.net"),
            ),
        ] {
            assert_eq!(place.to_string(), path_or_name);
            // What the engine compares shows the same, read back from its location.
            assert_eq!(Place::shown(&location(place)), path_or_name);
        }
    }

    #[test]
    fn a_location_reads_back_as_its_place() {
        for place in [
            Place::volume_path("/Volumes/c/s/v/in/a.csv").unwrap(),
            Place::unity_catalog("c.s"),
            Place::workspace("/Shared/x"),
            Place::secret("app", Some("k")),
            Place::storage("s3://bucket/a/b"),
            Place::storage("s3://bucket"),
        ] {
            assert_eq!(Place::try_from(&location(place.clone())), Ok(place));
        }
        assert_eq!(Place::try_from(&Location::new("other", ["x"])), Err(()));
    }
}
