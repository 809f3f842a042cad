//! Type constraints of input variables (`type = map(string)`) and the conversions they
//! imply, with Terraform's rules: a string "5" converts to the number 5, a tuple to a list,
//! an object to a map, and a missing optional object attribute becomes its default or null.

use super::eval::to_number;
use crate::value::{Object, Value};
use hcl_edit::expr::{Expression as E, ObjectKey};
use std::sync::Arc;

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

/// Why an expression is not a type constraint; the detail of an "Invalid type
/// specification" diagnostic.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TypeSpecError {
    #[error(
        "The keyword \"{0}\" is not a valid type constraint; use string, number, bool, list(T), set(T), map(T), object({{…}}), tuple([…]) or any."
    )]
    UnknownKeyword(String),
    #[error("The {0}() type constructor takes exactly one argument.")]
    NotOneArgument(String),
    #[error("tuple() takes a list of types, such as tuple([string, number]).")]
    TupleArgument,
    #[error("Object type attribute names must be identifiers.")]
    AttributeName,
    #[error("object() takes an object of attribute types, such as object({{ name = string }}).")]
    ObjectArgument,
    #[error("optional() may only be used for an attribute of an object type.")]
    OptionalOutsideObject,
    #[error("\"{0}\" is not a type constructor.")]
    UnknownConstructor(String),
    #[error(
        "A type constraint must be a type keyword or constructor, such as string or list(string)."
    )]
    NotAType,
    #[error("optional() takes a type and an optional default.")]
    OptionalArguments,
    #[error("The default of optional() must be a literal value.")]
    DefaultNotLiteral,
    /// The default of `optional(T, d)` does not convert to `T`.
    #[error(transparent)]
    Default(#[from] ConvertError),
}

/// Why a value does not convert to a type. `path` is where in the value, empty at its root.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ConvertError {
    /// The value is of another type; `expected` is the wanted one as messages name it.
    #[error("{expected} required{}, got {got}", at(.path))]
    Mismatch {
        expected: String,
        got: &'static str,
        path: String,
    },
    #[error("a number is required{}, got string {}", at(.path), crate::value::quote(.got))]
    NotANumber { got: String, path: String },
    #[error("tuple of {expected} elements required{}, got {got}", at(.path))]
    TupleLength {
        expected: usize,
        got: usize,
        path: String,
    },
    #[error("attribute \"{name}\" is required{}", at(.path))]
    MissingAttribute { name: String, path: String },
    #[error("unexpected attribute \"{name}\"{}", at(.path))]
    UnexpectedAttribute { name: String, path: String },
}

impl TypeConstraint {
    /// Parses a type expression such as `list(object({ name = string, n = optional(number, 1) }))`.
    pub fn parse(e: &E) -> Result<TypeConstraint, TypeSpecError> {
        match e {
            E::Variable(v) => match v.as_str() {
                "any" => Ok(TypeConstraint::Any),
                "string" => Ok(TypeConstraint::String),
                "number" => Ok(TypeConstraint::Number),
                "bool" => Ok(TypeConstraint::Bool),
                "list" => Ok(TypeConstraint::List(Box::new(TypeConstraint::Any))),
                "map" => Ok(TypeConstraint::Map(Box::new(TypeConstraint::Any))),
                "set" => Ok(TypeConstraint::Set(Box::new(TypeConstraint::Any))),
                other => Err(TypeSpecError::UnknownKeyword(other.to_string())),
            },
            E::FuncCall(call) => {
                let name = call.name.name.as_str();
                let args: Vec<&E> = call.args.iter().collect();
                let one = |args: &[&E]| -> Result<TypeConstraint, TypeSpecError> {
                    match args {
                        [a] => TypeConstraint::parse(a),
                        _ => Err(TypeSpecError::NotOneArgument(name.to_string())),
                    }
                };
                match name {
                    "list" => Ok(TypeConstraint::List(Box::new(one(&args)?))),
                    "set" => Ok(TypeConstraint::Set(Box::new(one(&args)?))),
                    "map" => Ok(TypeConstraint::Map(Box::new(one(&args)?))),
                    "tuple" => match args.as_slice() {
                        [E::Array(items)] => Ok(TypeConstraint::Tuple(
                            items
                                .iter()
                                .map(TypeConstraint::parse)
                                .collect::<Result<_, _>>()?,
                        )),
                        _ => Err(TypeSpecError::TupleArgument),
                    },
                    "object" => match args.as_slice() {
                        [E::Object(o)] => {
                            let mut attrs = Vec::new();
                            for (k, v) in o.iter() {
                                let key = match k {
                                    ObjectKey::Ident(id) => id.as_str().to_string(),
                                    ObjectKey::Expression(E::String(s)) => s.value().clone(),
                                    _ => return Err(TypeSpecError::AttributeName),
                                };
                                let (t, opt) = parse_attr(v.expr())?;
                                attrs.push((key, t, opt));
                            }
                            Ok(TypeConstraint::Object(attrs))
                        }
                        _ => Err(TypeSpecError::ObjectArgument),
                    },
                    "optional" => Err(TypeSpecError::OptionalOutsideObject),
                    other => Err(TypeSpecError::UnknownConstructor(other.to_string())),
                }
            }
            _ => Err(TypeSpecError::NotAType),
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
    pub fn convert(&self, v: Value) -> Result<Value, ConvertError> {
        convert_at(self, v, &Path::Root)
    }
}

/// An object attribute's type; `optional(T)` → `Some(None)`, `optional(T, d)` → `Some(Some(d))`.
#[allow(clippy::type_complexity)]
fn parse_attr(e: &E) -> Result<(TypeConstraint, Option<Option<Value>>), TypeSpecError> {
    if let E::FuncCall(call) = e
        && call.name.name.as_str() == "optional"
    {
        let args: Vec<&E> = call.args.iter().collect();
        return match args.as_slice() {
            [t] => Ok((TypeConstraint::parse(t)?, Some(None))),
            [t, d] => {
                let ty = TypeConstraint::parse(t)?;
                let default = literal_value(d).ok_or(TypeSpecError::DefaultNotLiteral)?;
                let default = ty.convert(default)?;
                Ok((ty, Some(Some(default))))
            }
            _ => Err(TypeSpecError::OptionalArguments),
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

/// ` at PATH`, or nothing at the root.
fn at(path: &str) -> String {
    if path.is_empty() {
        String::new()
    } else {
        format!(" at {path}")
    }
}

/// A value of the wrong type at `path`.
fn mismatch(expected: impl Into<String>, got: &Value, path: &Path) -> ConvertError {
    ConvertError::Mismatch {
        expected: expected.into(),
        got: got.type_name(),
        path: path.to_string(),
    }
}

fn convert_at(t: &TypeConstraint, v: Value, path: &Path) -> Result<Value, ConvertError> {
    if matches!(v, Value::Unknown) || matches!(v, Value::Null) {
        return Ok(v);
    }
    match t {
        TypeConstraint::Any => Ok(v),
        TypeConstraint::String => match v {
            Value::String(_) => Ok(v),
            Value::Number(n) => Ok(Value::String(n.to_string())),
            Value::Bool(b) => Ok(Value::String(b.to_string())),
            other => Err(mismatch("string", &other, path)),
        },
        TypeConstraint::Number => match &v {
            Value::Number(_) => Ok(v),
            Value::String(s) => {
                to_number(&v)
                    .map(Value::from_f64)
                    .ok_or_else(|| ConvertError::NotANumber {
                        got: s.clone(),
                        path: path.to_string(),
                    })
            }
            other => Err(mismatch("number", other, path)),
        },
        TypeConstraint::Bool => match &v {
            Value::Bool(_) => Ok(v),
            Value::String(s) if s == "true" => Ok(Value::Bool(true)),
            Value::String(s) if s == "false" => Ok(Value::Bool(false)),
            other => Err(mismatch("bool", other, path)),
        },
        TypeConstraint::List(inner) | TypeConstraint::Set(inner) => {
            let Value::List(items) = v else {
                return Err(mismatch(format!("list of {}", inner.describe()), &v, path));
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
                return Err(mismatch(format!("map of {}", inner.describe()), &v, path));
            };
            let mut out = Object::with_capacity_and_hasher(o.len(), Default::default());
            for (k, item) in Arc::unwrap_or_clone(o) {
                let v = convert_at(inner, item, &Path::Key(path, &k))?;
                out.insert(k, v);
            }
            Ok(Value::object(out))
        }
        TypeConstraint::Tuple(ts) => {
            let Value::List(items) = v else {
                return Err(mismatch("tuple", &v, path));
            };
            if items.len() != ts.len() {
                return Err(ConvertError::TupleLength {
                    expected: ts.len(),
                    got: items.len(),
                    path: path.to_string(),
                });
            }
            let mut out = Vec::new();
            for (i, (t, item)) in ts.iter().zip(items).enumerate() {
                out.push(convert_at(t, item, &Path::Index(path, i))?);
            }
            Ok(Value::List(out))
        }
        TypeConstraint::Object(attrs) => {
            let Value::Object(o) = v else {
                return Err(mismatch("object", &v, path));
            };
            let mut o = Arc::unwrap_or_clone(o);
            let mut out = Object::default();
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
                        None => {
                            return Err(ConvertError::MissingAttribute {
                                name: k.clone(),
                                path: path.to_string(),
                            });
                        }
                    },
                }
            }
            if let Some(extra) = o.keys().next() {
                return Err(ConvertError::UnexpectedAttribute {
                    name: extra.clone(),
                    path: path.to_string(),
                });
            }
            Ok(Value::object(out))
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
        assert_eq!(
            err.to_string(),
            "a number is required at [0], got string \"x\""
        );
        let o = ty("object({ a = string, b = optional(number, 2) })")
            .convert(Value::object(Object::from_iter([(
                "a".to_string(),
                Value::from("x"),
            )])))
            .unwrap();
        assert_eq!(o.as_object().unwrap()["b"], Value::from(2i64));
        let err = ty("object({ a = string })")
            .convert(Value::Object(Default::default()))
            .unwrap_err();
        assert_eq!(err.to_string(), "attribute \"a\" is required");
        assert_eq!(
            ty("set(string)")
                .convert(Value::List(vec!["a".into(), "a".into()]))
                .unwrap(),
            Value::List(vec!["a".into()])
        );
    }
}
