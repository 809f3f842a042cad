//! Paths in Unity Catalog volumes, `/Volumes/CATALOG/SCHEMA/VOLUME[/DIR…/FILE]`, parsed in one
//! place: the state backend, file locations, sdp-meta's checks and its importer each need the
//! volume a path lies in and what lies below it.

/// A path in a volume: the three names of the volume and the segments below it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VolumePath {
    pub catalog: String,
    pub schema: String,
    pub volume: String,
    /// The directories and file below the volume, in order (empty for the volume itself).
    pub rest: Vec<String>,
}

impl VolumePath {
    /// Parses `/Volumes/CATALOG/SCHEMA/VOLUME…`. One trailing `/` is allowed; an empty
    /// segment (a doubled `/`), `.` or `..` is not, as the Files API does not resolve them.
    pub fn parse(path: &str) -> Option<VolumePath> {
        let rest = path.strip_prefix("/Volumes/")?;
        let rest = rest.strip_suffix('/').unwrap_or(rest);
        let segments: Vec<&str> = rest.split('/').collect();
        if segments.len() < 3
            || segments
                .iter()
                .any(|s| s.is_empty() || *s == "." || *s == "..")
        {
            return None;
        }
        Some(VolumePath {
            catalog: segments[0].to_string(),
            schema: segments[1].to_string(),
            volume: segments[2].to_string(),
            rest: segments[3..].iter().map(|s| s.to_string()).collect(),
        })
    }

    /// The volume itself, by its full name `CATALOG.SCHEMA.VOLUME`; `None` for a name of
    /// other than three parts.
    pub fn of_volume(full_name: &str) -> Option<VolumePath> {
        let mut names = full_name.split('.').map(str::to_string);
        let (Some(catalog), Some(schema), Some(volume), None) =
            (names.next(), names.next(), names.next(), names.next())
        else {
            return None;
        };
        Some(VolumePath {
            catalog,
            schema,
            volume,
            rest: Vec::new(),
        })
    }

    /// The volume's own path, `/Volumes/CATALOG/SCHEMA/VOLUME`.
    pub fn volume_root(&self) -> String {
        format!("/Volumes/{}/{}/{}", self.catalog, self.schema, self.volume)
    }

    /// The volume's three names, as written.
    pub fn names(&self) -> [&str; 3] {
        [&self.catalog, &self.schema, &self.volume]
    }

    /// The whole path, normalized (no trailing `/`).
    pub fn path(&self) -> String {
        std::iter::once(self.volume_root())
            .chain(self.rest.iter().cloned())
            .collect::<Vec<_>>()
            .join("/")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_splits_into_its_volume_and_what_lies_below() {
        let p = VolumePath::parse("/Volumes/Main/raw/landing/in/a.csv").unwrap();
        assert_eq!(p.names(), ["Main", "raw", "landing"]);
        assert_eq!(p.rest, ["in", "a.csv"]);
        assert_eq!(p.volume_root(), "/Volumes/Main/raw/landing");
        assert_eq!(p.path(), "/Volumes/Main/raw/landing/in/a.csv");
        let v = VolumePath::parse("/Volumes/c/s/v/").unwrap();
        assert!(v.rest.is_empty());
        assert_eq!(v.path(), "/Volumes/c/s/v");
        assert_eq!(VolumePath::of_volume("c.s.v"), Some(v));
        assert_eq!(VolumePath::of_volume("c.s"), None);
        assert_eq!(VolumePath::of_volume("c.s.v.x"), None);
    }

    #[test]
    fn what_is_not_a_volume_path_is_refused() {
        for bad in [
            "/Volumes/c/s",
            "/Volumes/c//v/x",
            "/Volumes/c/s/v/../x",
            "/Volumes/c/s/v/./x",
            "/Volumes/c/s/v//",
            "Volumes/c/s/v",
            "/Workspace/c/s/v",
            "/Volumes/",
            "",
        ] {
            assert_eq!(VolumePath::parse(bad), None, "{bad}");
        }
    }
}
