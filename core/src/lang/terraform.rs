//! The `terraform { … }` block of files written for Terraform. brickform reads it for what
//! has a meaning here and says what it does with each part, so a Terraform configuration
//! can be brought over without first deleting the block:
//!
//! - `required_providers`: an entry whose source names a provider brickform has (by the
//!   source's type, `NAMESPACE/TYPE`) is that provider, built in, so its version
//!   constraint is not used; any other entry is a provider brickform does not have.
//! - `required_version` constrains Terraform's version, not brickform's (that is
//!   `brickform { required_version }`): not used.
//! - `backend` and `cloud` name a place brickform does not keep its state in: an error,
//!   pointing at `brickform { backend … }`.
//! - anything else (`experiments`, `provider_meta`, …) has no meaning here: not used.

use super::load::Config;
use crate::diagnostics::{Diagnostic, Diagnostics};
use crate::source::Span;
use hcl_edit::Span as _;
use hcl_edit::expr::{Expression, ObjectKey};
use hcl_edit::structure::Structure;

/// What each `terraform` block of `config` means here, given the names of the providers
/// brickform has.
pub fn check(config: &Config, providers: &[&str]) -> Diagnostics {
    let mut diags = Diagnostics::new();
    for block in &config.settings.terraform {
        let file = block.body.file;
        let at = |r: Option<std::ops::Range<usize>>| r.map(|r| Span::new(file, r));
        let mut used = Vec::new();
        let mut unused = Vec::new();
        for s in block.body.body.iter() {
            match s {
                Structure::Block(b) if b.ident.as_str() == "required_providers" => {
                    for a in b.body.attributes() {
                        let name = a.key.as_str();
                        let source = source_of(&a.value);
                        let kind = source
                            .as_deref()
                            .map_or(name, |s| s.rsplit('/').next().unwrap_or(s));
                        if providers.contains(&kind) {
                            used.push(format!(
                                "\"{name}\" ({}) is brickform's built-in {kind} provider",
                                source.as_deref().unwrap_or(name)
                            ));
                            if kind != name {
                                diags.push(
                                    Diagnostic::warning("Provider known by another name")
                                        .at(at(a.key.span()))
                                        .detail(format!("brickform names providers by their type: write provider \"{kind}\" and {kind}_… resources, not \"{name}\".")),
                                );
                            }
                        } else {
                            diags.push(
                                Diagnostic::warning(format!(
                                    "Provider \"{name}\" is not available in brickform"
                                ))
                                .at(at(a.key.span()))
                                .detail(format!(
                                    "{} is not one of the providers brickform has ({}); resources of it cannot be managed here.",
                                    source.as_deref().unwrap_or(name),
                                    providers.join(", ")
                                )),
                            );
                        }
                    }
                }
                Structure::Block(b) if matches!(b.ident.as_str(), "backend" | "cloud") => {
                    let what = b.ident.as_str();
                    let label = b
                        .labels
                        .first()
                        .map(|l| format!(" \"{}\"", l.as_str()))
                        .unwrap_or_default();
                    diags.push(
                        Diagnostic::error(format!("Terraform {what}{label} is not where brickform keeps state"))
                            .at(at(b.ident.span()))
                            .detail("brickform keeps its own state where the backend of its brickform block says (next to the configuration when there is none), and never reads or writes Terraform's state.")
                            .hint("remove this block; to keep the state elsewhere, write brickform { backend \"TYPE\" { … } } (`brickform init` says where the state is)"),
                    );
                }
                Structure::Block(b) => unused.push(format!("the {} block", b.ident.as_str())),
                Structure::Attribute(a) if a.key.as_str() == "required_version" => unused.push(
                    "required_version (it constrains Terraform's version; brickform's is brickform { required_version })".into(),
                ),
                Structure::Attribute(a) => unused.push(a.key.as_str().to_string()),
            }
        }
        let mut detail =
            String::from("brickform reads this Terraform settings block for what applies here.");
        for u in &used {
            detail.push_str(&format!("\n  {u}; its version constraint is not used."));
        }
        for u in &unused {
            detail.push_str(&format!("\n  Not used: {u}."));
        }
        diags.push(
            Diagnostic::warning("Terraform settings block")
                .at(block.span.clone())
                .detail(detail)
                .hint("remove the block once the configuration is brickform's only"),
        );
    }
    diags
}

/// The `source` of a `required_providers` entry: `{ source = "…", version = "…" }`.
fn source_of(e: &Expression) -> Option<String> {
    let Expression::Object(o) = e else {
        return None;
    };
    o.iter().find_map(|(k, v)| {
        let key = match k {
            ObjectKey::Ident(id) => id.as_str(),
            ObjectKey::Expression(Expression::String(s)) => s.value().as_str(),
            _ => return None,
        };
        match (key, v.expr()) {
            ("source", Expression::String(s)) => Some(s.value().clone()),
            _ => None,
        }
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn checked(text: &str) -> Vec<String> {
        let dir = std::path::Path::new("/nonexistent");
        let (config, diags) = crate::lang::load::load_sources(
            dir,
            vec![("main.bf.hcl".into(), dir.join("main.bf.hcl"), text.into())],
        );
        assert!(!diags.has_errors(), "{diags:?}");
        check(&config, &["acme"])
            .0
            .iter()
            .map(|d| d.render_plain(&config.sources))
            .collect()
    }

    #[test]
    fn each_part_is_explained() {
        let out = checked(
            r#"
terraform {
  required_version = ">= 1.5"
  required_providers {
    acme = {
      source  = "acme-corp/acme"
      version = "~> 1.2"
    }
    aws = {
      source = "hashicorp/aws"
    }
  }
  experiments = []
}
"#,
        );
        let all = out.join("\n---\n");
        assert_eq!(out.len(), 2, "{all}");
        assert!(
            all.contains("Provider \"aws\" is not available in brickform"),
            "{all}"
        );
        assert!(
            all.contains("hashicorp/aws is not one of the providers brickform has (acme)"),
            "{all}"
        );
        assert!(all.contains("\"acme\" (acme-corp/acme) is brickform's built-in acme provider; its version constraint is not used"), "{all}");
        assert!(all.contains("Not used: required_version"), "{all}");
        assert!(all.contains("Not used: experiments"), "{all}");
        assert!(out.iter().all(|d| d.starts_with("Warning")), "{all}");
    }

    #[test]
    fn a_provider_under_another_local_name_is_pointed_at_its_type() {
        let out = checked(
            "terraform {\n  required_providers {\n    a = { source = \"x/acme\" }\n  }\n}\n",
        );
        let all = out.join("\n");
        assert!(all.contains("Provider known by another name"), "{all}");
        assert!(all.contains("main.bf.hcl:3"), "{all}");
    }

    #[test]
    fn a_terraform_backend_is_an_error_pointing_at_brickforms() {
        let out = checked("terraform {\n  backend \"s3\" {\n    bucket = \"b\"\n  }\n}\n");
        let all = out.join("\n");
        assert!(all.contains("Error"), "{all}");
        assert!(
            all.contains("Terraform backend \"s3\" is not where brickform keeps state"),
            "{all}"
        );
        assert!(all.contains("main.bf.hcl:2"), "{all}");
        assert!(all.contains("brickform { backend \"TYPE\""), "{all}");
        let out = checked("terraform {\n  cloud {\n    organization = \"o\"\n  }\n}\n");
        assert!(
            out.join("\n").contains("Terraform cloud is not where"),
            "{out:?}"
        );
    }
}
