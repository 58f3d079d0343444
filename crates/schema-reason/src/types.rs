//! Sets of JSON Schema types.

use std::fmt;
use std::ops::{BitAnd, BitOr};

use serde_json::Value;

/// A set of JSON Schema types (`integer` is a subset of `number`).
///
/// `number` is stored as "integral numbers" plus "other numbers", so intersecting `number` with
/// `integer` leaves `integer`, and a source typed `number` intersects a parameter typed `integer`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct TypeSet(u8);

const BIT_NULL: u8 = 1;
const BIT_BOOLEAN: u8 = 1 << 1;
const BIT_INTEGER: u8 = 1 << 2;
/// Numbers with a fractional part; never named alone (it is the rest of `number`).
const BIT_FRACTION: u8 = 1 << 3;
const BIT_STRING: u8 = 1 << 4;
const BIT_ARRAY: u8 = 1 << 5;
const BIT_OBJECT: u8 = 1 << 6;

impl TypeSet {
    /// The empty set.
    pub const NONE: Self = Self(0);
    /// `null`.
    pub const NULL: Self = Self(BIT_NULL);
    /// `boolean`.
    pub const BOOLEAN: Self = Self(BIT_BOOLEAN);
    /// `integer` (numbers with a zero fractional part).
    pub const INTEGER: Self = Self(BIT_INTEGER);
    /// `number` (includes `integer`).
    pub const NUMBER: Self = Self(BIT_INTEGER | BIT_FRACTION);
    /// `string`.
    pub const STRING: Self = Self(BIT_STRING);
    /// `array`.
    pub const ARRAY: Self = Self(BIT_ARRAY);
    /// `object`.
    pub const OBJECT: Self = Self(BIT_OBJECT);
    /// What a template can insert: `string`, `number` and `boolean`.
    pub const INSERTABLE: Self = Self(BIT_STRING | BIT_INTEGER | BIT_FRACTION | BIT_BOOLEAN);
    /// Every JSON type.
    pub const ANY: Self = Self(
        BIT_NULL | BIT_BOOLEAN | BIT_INTEGER | BIT_FRACTION | BIT_STRING | BIT_ARRAY | BIT_OBJECT,
    );

    /// The set named by a JSON Schema `type` name (`"string"`, `"integer"`, …).
    pub fn from_type_name(name: &str) -> Option<Self> {
        Some(match name {
            "null" => Self::NULL,
            "boolean" => Self::BOOLEAN,
            "integer" => Self::INTEGER,
            "number" => Self::NUMBER,
            "string" => Self::STRING,
            "array" => Self::ARRAY,
            "object" => Self::OBJECT,
            _ => return None,
        })
    }

    /// The set allowed by a `type` keyword value (a name or an array of names); `None` when it
    /// names something unknown.
    pub fn from_type_keyword(value: &Value) -> Option<Self> {
        match value {
            Value::String(name) => Self::from_type_name(name),
            Value::Array(names) => names.iter().try_fold(Self::NONE, |set, name| {
                name.as_str()
                    .and_then(Self::from_type_name)
                    .map(|t| set | t)
            }),
            _ => None,
        }
    }

    /// The type of one JSON value (`1.0` is an integer, as in JSON Schema).
    pub fn of_value(value: &Value) -> Self {
        match value {
            Value::Null => Self::NULL,
            Value::Bool(_) => Self::BOOLEAN,
            // Exactly, from the number's text: `1e400` is an integer, `1e-400` is not.
            Value::Number(_) if mcp_recovery_model::json_type_name(value) == "integer" => {
                Self::INTEGER
            }
            Value::Number(_) => Self(BIT_FRACTION),
            Value::String(_) => Self::STRING,
            Value::Array(_) => Self::ARRAY,
            Value::Object(_) => Self::OBJECT,
        }
    }

    /// Types in either set.
    pub fn union(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }

    /// Types in both sets (`number ∩ integer = integer`).
    pub fn intersection(self, other: Self) -> Self {
        Self(self.0 & other.0)
    }

    /// Types in `self` but not in `other`.
    pub fn difference(self, other: Self) -> Self {
        Self(self.0 & !other.0)
    }

    /// True when some value has a type in both sets.
    pub fn intersects(self, other: Self) -> bool {
        self.0 & other.0 != 0
    }

    /// True when every type of `other` is in `self`.
    pub fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }

    /// True for the empty set.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The JSON Schema names of the types, in display order (`number` absorbs `integer`).
    pub fn names(self) -> Vec<&'static str> {
        let mut names = Vec::new();
        if self.intersects(Self::STRING) {
            names.push("string");
        }
        if self.0 & BIT_FRACTION != 0 {
            names.push("number");
        } else if self.intersects(Self::INTEGER) {
            names.push("integer");
        }
        for (set, name) in [
            (Self::BOOLEAN, "boolean"),
            (Self::OBJECT, "object"),
            (Self::ARRAY, "array"),
            (Self::NULL, "null"),
        ] {
            if self.intersects(set) {
                names.push(name);
            }
        }
        names
    }
}

impl BitOr for TypeSet {
    type Output = Self;

    fn bitor(self, rhs: Self) -> Self {
        self.union(rhs)
    }
}

impl BitAnd for TypeSet {
    type Output = Self;

    fn bitand(self, rhs: Self) -> Self {
        self.intersection(rhs)
    }
}

impl fmt::Display for TypeSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names = self.names();
        if names.is_empty() {
            return f.write_str("nothing");
        }
        f.write_str(&names.join(" | "))
    }
}
