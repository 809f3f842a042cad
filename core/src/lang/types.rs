//! Type constraints of input variables (`type = map(string)`) and the conversions they
//! imply, with Terraform's rules: a string "5" converts to the number 5, a tuple to a list,
//! an object to a map, and a missing optional object attribute becomes its default or null.

use super::eval::to_number;
use crate::value::{Object, Value};
use hcl_edit::expr::{Expression as E, ObjectKey};

#[derive(Debug, Clone, PartialEq)]
pub enum TypeConstraint {
    Any,
    String,
    Number,
    Bool,
    List(Box<TypeConstraint>),
    Set(Box<TypeConstraint>),
    Map(Box<TypeConstraint>),
    Tuple(Vec<TypeConstraint>),
    /// Attributes with their types and, for `optional(T, default)`, optionality and default.
    Object(Vec<(String, TypeConstraint, Option<Option<Value>>)>),
}

impl TypeConstraint {
    /// Parses a type expression such as `list(object({ name = string, n = optional(number, 1) }))`.
    pub fn parse(e: &E) -> Result<TypeConstraint, String> {
        match e {
            E::Variable(v) => match v.as_str() {
                "any" => Ok(TypeConstraint::Any),
                "string" => Ok(TypeConstraint::String),
                "number" => Ok(TypeConstraint::Number),
                "bool" => Ok(TypeConstraint::Bool),
                "list" => Ok(TypeConstraint::List(Box::new(TypeConstraint::Any))),
                "map" => Ok(TypeConstraint::Map(Box::new(TypeConstraint::Any))),
                "set" => Ok(TypeConstraint::Set(Box::new(TypeConstraint::Any))),
                other => Err(format!(
                    "The keyword \"{other}\" is not a valid type constraint; use string, number, bool, list(T), set(T), map(T), object({{…}}), tuple([…]) or any."
                )),
            },
            E::FuncCall(call) => {
                let name = call.name.name.as_str();
                let args: Vec<&E> = call.args.iter().collect();
                let one = |args: &[&E]| -> Result<TypeConstraint, String> {
                    match args {
                        [a] => TypeConstraint::parse(a),
                        _ => Err(format!("The {name}() type constructor takes exactly one argument.")),
                    }
                };
                match name {
                    "list" => Ok(TypeConstraint::List(Box::new(one(&args)?))),
                    "set" => Ok(TypeConstraint::Set(Box::new(one(&args)?))),
                    "map" => Ok(TypeConstraint::Map(Box::new(one(&args)?))),
                    "tuple" => match args.as_slice() {
                        [E::Array(items)] => Ok(TypeConstraint::Tuple(
                            items.iter().map(TypeConstraint::parse).collect::<Result<_, _>>()?,
                        )),
                        _ => Err("tuple() takes a list of types, such as tuple([string, number]).".into()),
                    },
                    "object" => match args.as_slice() {
                        [E::Object(o)] => {
                            let mut attrs = Vec::new();
                            for (k, v) in o.iter() {
                                let key = match k {
                                    ObjectKey::Ident(id) => id.as_str().to_string(),
                                    ObjectKey::Expression(E::String(s)) => s.value().clone(),
                                    _ => return Err("Object type attribute names must be identifiers.".into()),
                                };
                                let (t, opt) = parse_attr(v.expr())?;
                                attrs.push((key, t, opt));
                            }
                            Ok(TypeConstraint::Object(attrs))
                        }
                        _ => Err("object() takes an object of attribute types, such as object({ name = string }).".into()),
                    },
                    "optional" => Err("optional() may only be used for an attribute of an object type.".into()),
                    other => Err(format!("\"{other}\" is not a type constructor.")),
                }
            }
            _ => Err("A type constraint must be a type keyword or constructor, such as string or list(string).".into()),
        }
    }

    pub fn describe(&self) -> String {
        match self {
            TypeConstraint::Any => "any".into(),
            TypeConstraint::String => "string".into(),
            TypeConstraint::Number => "number".into(),
            TypeConstraint::Bool => "bool".into(),
            TypeConstraint::List(t) => format!("list({})", t.describe()),
            TypeConstraint::Set(t) => format!("set({})", t.describe()),
            TypeConstraint::Map(t) => format!("map({})", t.describe()),
            TypeConstraint::Tuple(ts) => format!(
                "tuple([{}])",
                ts.iter()
                    .map(|t| t.describe())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            TypeConstraint::Object(attrs) => format!(
                "object({{{}}})",
                attrs
                    .iter()
                    .map(|(k, t, _)| format!("{k} = {}", t.describe()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }

    /// Converts a value to this type, or explains why it cannot be.
    pub fn convert(&self, v: Value) -> Result<Value, String> {
        convert_at(self, v, &Path::Root)
    }
}

/// An object attribute's type; `optional(T)` → `Some(None)`, `optional(T, d)` → `Some(Some(d))`.
#[allow(clippy::type_complexity)]
fn parse_attr(e: &E) -> Result<(TypeConstraint, Option<Option<Value>>), String> {
    if let E::FuncCall(call) = e
        && call.name.name.as_str() == "optional"
    {
        let args: Vec<&E> = call.args.iter().collect();
        return match args.as_slice() {
            [t] => Ok((TypeConstraint::parse(t)?, Some(None))),
            [t, d] => {
                let ty = TypeConstraint::parse(t)?;
                let default =
                    literal_value(d).ok_or("The default of optional() must be a literal value.")?;
                let default = ty.convert(default)?;
                Ok((ty, Some(Some(default))))
            }
            _ => Err("optional() takes a type and an optional default.".into()),
        };
    }
    Ok((TypeConstraint::parse(e)?, None))
}

/// Evaluates a literal (no references) expression.
fn literal_value(e: &E) -> Option<Value> {
    super::eval::Evaluator::new(&super::eval::Literal::PLAIN, std::path::Path::new("."))
        .eval(e)
        .ok()
}

/// Where in the converted value an error is, written out only for an error message: a
/// conversion that succeeds formats no paths.
enum Path<'a> {
    Root,
    /// `[i]` of a list or tuple.
    Index(&'a Path<'a>, usize),
    /// `["k"]` of a map.
    Key(&'a Path<'a>, &'a str),
    /// `.k` of an object (`k` at the root).
    Attr(&'a Path<'a>, &'a str),
}

impl std::fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Path::Root => Ok(()),
            Path::Index(p, i) => write!(f, "{p}[{i}]"),
            Path::Key(p, k) => write!(f, "{p}[{}]", crate::value::quote(k)),
            Path::Attr(Path::Root, k) => write!(f, "{k}"),
            Path::Attr(p, k) => write!(f, "{p}.{k}"),
        }
    }
}

fn at(path: &Path) -> String {
    let path = path.to_string();
    if path.is_empty() {
        path
    } else {
        format!(" at {path}")
    }
}

fn convert_at(t: &TypeConstraint, v: Value, path: &Path) -> Result<Value, String> {
    if matches!(v, Value::Unknown) || matches!(v, Value::Null) {
        return Ok(v);
    }
    match t {
        TypeConstraint::Any => Ok(v),
        TypeConstraint::String => match v {
            Value::String(_) => Ok(v),
            Value::Number(n) => Ok(Value::String(n.to_string())),
            Value::Bool(b) => Ok(Value::String(b.to_string())),
            other => Err(format!(
                "string required{}, got {}",
                at(path),
                other.type_name()
            )),
        },
        TypeConstraint::Number => match &v {
            Value::Number(_) => Ok(v),
            Value::String(s) => to_number(&v).map(Value::from_f64).ok_or_else(|| {
                format!(
                    "a number is required{}, got string {}",
                    at(path),
                    crate::value::quote(s)
                )
            }),
            other => Err(format!(
                "number required{}, got {}",
                at(path),
                other.type_name()
            )),
        },
        TypeConstraint::Bool => match &v {
            Value::Bool(_) => Ok(v),
            Value::String(s) if s == "true" => Ok(Value::Bool(true)),
            Value::String(s) if s == "false" => Ok(Value::Bool(false)),
            other => Err(format!(
                "bool required{}, got {}",
                at(path),
                other.type_name()
            )),
        },
        TypeConstraint::List(inner) | TypeConstraint::Set(inner) => {
            let Value::List(items) = v else {
                return Err(format!(
                    "list of {} required{}, got {}",
                    inner.describe(),
                    at(path),
                    v.type_name()
                ));
            };
            let mut out = Vec::with_capacity(items.len());
            for (i, item) in items.into_iter().enumerate() {
                out.push(convert_at(inner, item, &Path::Index(path, i))?);
            }
            if matches!(t, TypeConstraint::Set(_)) {
                let mut dedup: Vec<Value> = Vec::with_capacity(out.len());
                for v in out {
                    if !dedup.contains(&v) {
                        dedup.push(v);
                    }
                }
                out = dedup;
            }
            Ok(Value::List(out))
        }
        TypeConstraint::Map(inner) => {
            let Value::Object(o) = v else {
                return Err(format!(
                    "map of {} required{}, got {}",
                    inner.describe(),
                    at(path),
                    v.type_name()
                ));
            };
            let mut out = Object::with_capacity(o.len());
            for (k, item) in o {
                let v = convert_at(inner, item, &Path::Key(path, &k))?;
                out.insert(k, v);
            }
            Ok(Value::Object(out))
        }
        TypeConstraint::Tuple(ts) => {
            let Value::List(items) = v else {
                return Err(format!("tuple required{}, got {}", at(path), v.type_name()));
            };
            if items.len() != ts.len() {
                return Err(format!(
                    "tuple of {} elements required{}, got {}",
                    ts.len(),
                    at(path),
                    items.len()
                ));
            }
            let mut out = Vec::new();
            for (i, (t, item)) in ts.iter().zip(items).enumerate() {
                out.push(convert_at(t, item, &Path::Index(path, i))?);
            }
            Ok(Value::List(out))
        }
        TypeConstraint::Object(attrs) => {
            let Value::Object(mut o) = v else {
                return Err(format!(
                    "object required{}, got {}",
                    at(path),
                    v.type_name()
                ));
            };
            let mut out = Object::new();
            for (k, t, opt) in attrs {
                match o.swap_remove(k) {
                    Some(item) if !item.is_null() => {
                        out.insert(k.clone(), convert_at(t, item, &Path::Attr(path, k))?);
                    }
                    missing => match opt {
                        Some(Some(default)) => {
                            out.insert(k.clone(), default.clone());
                        }
                        Some(None) => {
                            out.insert(k.clone(), Value::Null);
                        }
                        None if missing.is_some() => {
                            out.insert(k.clone(), Value::Null);
                        }
                        None => return Err(format!("attribute \"{k}\" is required{}", at(path))),
                    },
                }
            }
            if let Some(extra) = o.keys().next() {
                return Err(format!("unexpected attribute \"{extra}\"{}", at(path)));
            }
            Ok(Value::Object(out))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ty(src: &str) -> TypeConstraint {
        TypeConstraint::parse(&src.parse::<E>().unwrap()).unwrap()
    }

    #[test]
    fn parses_and_describes() {
        assert_eq!(ty("list(map(string))").describe(), "list(map(string))");
        assert_eq!(
            ty("object({ a = string, b = optional(number, 2) })").describe(),
            "object({a = string, b = number})"
        );
        assert!(TypeConstraint::parse(&"strin".parse::<E>().unwrap()).is_err());
    }

    #[test]
    fn converts_like_terraform() {
        assert_eq!(
            ty("number").convert(Value::from("5")).unwrap(),
            Value::from(5i64)
        );
        assert_eq!(
            ty("string").convert(Value::from(5i64)).unwrap(),
            Value::from("5")
        );
        let err = ty("list(number)")
            .convert(Value::List(vec![Value::from("x")]))
            .unwrap_err();
        assert_eq!(err, "a number is required at [0], got string \"x\"");
        let o = ty("object({ a = string, b = optional(number, 2) })")
            .convert(Value::Object(Object::from_iter([(
                "a".to_string(),
                Value::from("x"),
            )])))
            .unwrap();
        assert_eq!(o.as_object().unwrap()["b"], Value::from(2i64));
        let err = ty("object({ a = string })")
            .convert(Value::Object(Object::new()))
            .unwrap_err();
        assert_eq!(err, "attribute \"a\" is required");
        assert_eq!(
            ty("set(string)")
                .convert(Value::List(vec!["a".into(), "a".into()]))
                .unwrap(),
            Value::List(vec!["a".into()])
        );
    }
}
