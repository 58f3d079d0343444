//! Static resolution of JSON Pointers against JSON Schemas (draft-07 and 2020-12).
//!
//! Answers, without any instance: can a value exist at this pointer, which JSON types can it have,
//! and is it always present. Anything the resolver cannot judge (remote `$ref`, unsupported
//! keywords) yields [`Knowledge::Unknown`], never a false "no".
//!
//! The walk treats every schema as a constraint on the value at the pointer: keywords of one
//! schema object, `$ref` and `allOf` are intersected, `anyOf`/`oneOf` branches are united. Type
//! sets are over-approximations (a keyword the resolver ignores can only narrow them), so two
//! type sets that do not intersect really cannot meet.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::ops::{BitAnd, BitOr};

use mcp_recovery_model::{JsonPointer, PointerReading, array_index};
use regex::{Regex, RegexBuilder};
use serde_json::{Map, Value};

/// A three-valued answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Knowledge {
    /// Certainly yes.
    Yes,
    /// Certainly no.
    No,
    /// Cannot be judged statically.
    Unknown,
}

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
            Value::Number(n) if n.is_i64() || n.is_u64() => Self::INTEGER,
            Value::Number(n) => match n.as_f64() {
                Some(f) if f.fract() == 0.0 => Self::INTEGER,
                _ => Self(BIT_FRACTION),
            },
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

/// What a schema allows at a pointer.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolution {
    /// Whether some valid instance has a value at the pointer.
    pub exists: Knowledge,
    /// JSON types the value may have; `None` when unknown or unconstrained.
    pub types: Option<TypeSet>,
    /// For arrays, the JSON types of the items; `None` when unknown or unconstrained (also when
    /// the value cannot be an array or no item can exist).
    pub item_types: Option<TypeSet>,
    /// Index of the first pointer token naming a property that is not `required`, when the
    /// value may be absent from a valid instance.
    pub optional_at: Option<usize>,
    /// When `exists` is [`Knowledge::No`]: index of the first pointer token that no valid
    /// instance can have; `None` when the schema admits no value at all.
    pub fails_at: Option<usize>,
}

/// Resolves `pointer` against `schema` (the root schema, used for local `$ref`s), reading its
/// tokens as RFC 6901 does: a token that is an index may select an array item.
pub fn resolve(schema: &Value, pointer: &JsonPointer) -> Resolution {
    resolve_as(schema, pointer, PointerReading::Pointer)
}

/// Resolves `pointer` against `schema` under `reading`: under [`PointerReading::Names`] every
/// token selects an object member only, as a compensate-carrier JSONPath of name selectors does,
/// so a path through an array selects nothing.
pub fn resolve_as(schema: &Value, pointer: &JsonPointer, reading: PointerReading) -> Resolution {
    // The extra "any item" step, used only for the second walk, gives the item types.
    let mut steps: Vec<Step<'_>> = pointer
        .tokens()
        .iter()
        .map(|token| match reading {
            PointerReading::Pointer => Step::Key(token),
            PointerReading::Names => Step::Member(token),
        })
        .collect();
    let len = steps.len();
    steps.push(Step::AnyItem);

    let mut walker = Walker::new(schema, steps.get(..len).unwrap_or(&[]));
    let out = walker.walk(schema, schema, 0, 0);
    if out.exists == Knowledge::No {
        return Resolution {
            exists: Knowledge::No,
            types: None,
            item_types: None,
            optional_at: None,
            fails_at: out.fails_at,
        };
    }

    let may_be_array = out.types.is_none_or(|t| t.intersects(TypeSet::ARRAY));
    let item_types = if may_be_array {
        walker.restart(&steps);
        let items = walker.walk(schema, schema, 0, 0);
        if items.exists == Knowledge::No {
            None
        } else {
            items.types
        }
    } else {
        None
    };

    Resolution {
        exists: out.exists,
        types: out.types,
        item_types,
        optional_at: first_bit(out.optional, len),
        fails_at: None,
    }
}

/// Resolves a pointer given in its RFC 6901 text form; a malformed pointer selects nothing.
pub fn resolve_str(schema: &Value, pointer: &str) -> Resolution {
    match JsonPointer::parse(pointer) {
        Ok(pointer) => resolve(schema, &pointer),
        Err(_) => Resolution {
            exists: Knowledge::No,
            types: None,
            item_types: None,
            optional_at: None,
            fails_at: None,
        },
    }
}

/// The properties an object schema declares (for a tool's `inputSchema`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ObjectShape<'a> {
    /// Declared property names, merged across `allOf`/`anyOf`/`oneOf`/`$ref`, in first-seen
    /// order without duplicates.
    pub properties: Vec<&'a str>,
    /// `patternProperties` patterns, merged the same way.
    pub patterns: Vec<&'a str>,
    /// Names every valid instance certainly has (`required` of the schema and of every
    /// `allOf`/`$ref` part; of `anyOf`/`oneOf` only when all branches require it).
    pub required: Vec<&'a str>,
    /// `additionalProperties: false` applies and no `patternProperties` admits other names.
    pub additional_forbidden: bool,
    /// False when some part could not be judged (remote `$ref`, cycle, `if`/`then`/`else`,
    /// `dependentSchemas`, depth cap): more names may be declared than listed.
    pub complete: bool,
}

impl ObjectShape<'_> {
    /// Whether `name` is declared by `properties` or matched by a pattern.
    pub fn declares(&self, name: &str) -> Knowledge {
        if self.properties.contains(&name) {
            return Knowledge::Yes;
        }
        let mut unsure = !self.complete;
        for pattern in &self.patterns {
            match compile(pattern).map(|re| re.is_match(name)) {
                Some(true) => return Knowledge::Yes,
                Some(false) => {}
                None => unsure = true,
            }
        }
        if unsure {
            Knowledge::Unknown
        } else {
            Knowledge::No
        }
    }
}

/// The declared shape of the object schema `schema_at`, a node inside `root` (which local
/// `$ref`s refer to).
pub fn object_shape<'a>(root: &'a Value, schema_at: &'a Value) -> ObjectShape<'a> {
    let mut walker = Walker::new(root, &[]);
    let mut shape = walker.shape(schema_at, root, 0);
    shape.additional_forbidden &= shape.patterns.is_empty();
    shape
}

/// The schemas that all apply to the value at `pointer` (intersected), for validating a
/// constant against them; `None` when the pointer passes through a union (`anyOf`/`oneOf`), a
/// remote or cyclic `$ref`, or anything else that makes the set unsure. An empty list means
/// the value is unconstrained; a `false` entry means no value is allowed there.
///
/// Local `$ref` targets and `allOf` parts are listed as well, before the schema holding them,
/// so that parts free of `$ref` can be compiled alone; `$ref`s inside the returned schemas still
/// refer to `root`.
pub fn subschemas_at<'a>(root: &'a Value, pointer: &JsonPointer) -> Option<Vec<&'a Value>> {
    let steps: Vec<Step<'_>> = pointer.tokens().iter().map(|t| Step::Key(t)).collect();
    let mut walker = Walker::new(root, &steps);
    let mut found = Vec::new();
    walker
        .collect(root, root, 0, 0, &mut found)
        .then_some(found)
}

/// Recursion cap: deeper schemas (or `$ref` chains) make the answer unknown.
const MAX_DEPTH: usize = 128;
/// Work cap per walk, so that schemas that fan out (`allOf` of `$ref`s of `allOf`s…) stay cheap.
const MAX_VISITS: usize = 20_000;
/// Pointer positions tracked for presence; beyond this, presence is unknown.
const MASK_BITS: usize = 128;

/// Keywords that constrain sub-values in ways the resolver does not model: where the walk passes
/// through them, existence is at best unknown.
const UNMODELED: [&str; 12] = [
    "not",
    "if",
    "then",
    "else",
    "dependentSchemas",
    "dependencies",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
    "contains",
    "$dynamicRef",
    "$recursiveRef",
];

/// Keywords that may make a property required conditionally.
const CONDITIONAL_REQUIRED: [&str; 6] = [
    "if",
    "then",
    "else",
    "dependentSchemas",
    "dependentRequired",
    "dependencies",
];

/// One pointer step: `Key` selects an object member or, when it is an index, an array item
/// (RFC 6901); `Member` selects an object member only (a JSONPath name selector); `AnyItem`
/// stands for every index of an array (used for item types).
#[derive(Debug, Clone, Copy)]
enum Step<'p> {
    Key(&'p str),
    Member(&'p str),
    AnyItem,
}

/// The answer for the rest of the pointer from one schema node.
#[derive(Debug, Clone, Copy)]
struct Out {
    exists: Knowledge,
    /// Over-approximation of the final value's types; `None` = any.
    types: Option<TypeSet>,
    /// For `No`: first step that cannot exist; `None` = this schema admits no value at all.
    fails_at: Option<usize>,
    /// Bit `k`: step `k` is certainly present when its parent is.
    present: u128,
    /// Bit `k`: step `k` may be absent although its parent is present (known, not guessed).
    optional: u128,
}

fn bit(k: usize) -> u128 {
    if k < MASK_BITS { 1 << k } else { 0 }
}

/// Bits `k` and above.
fn bits_from(k: usize) -> u128 {
    if k < MASK_BITS { u128::MAX << k } else { 0 }
}

fn first_bit(mask: u128, len: usize) -> Option<usize> {
    let index = mask.trailing_zeros() as usize;
    (index < len.min(MASK_BITS)).then_some(index)
}

impl Out {
    /// Cannot be judged.
    fn unknown() -> Self {
        Self {
            exists: Knowledge::Unknown,
            types: None,
            fails_at: None,
            present: 0,
            optional: 0,
        }
    }

    /// The schema admits no value (the `false` schema).
    fn unsatisfiable() -> Self {
        Self {
            exists: Knowledge::No,
            types: Some(TypeSet::NONE),
            fails_at: None,
            present: u128::MAX,
            optional: 0,
        }
    }

    /// Step `k` can never be present; later steps are vacuously present.
    fn absent(k: usize) -> Self {
        Self {
            exists: Knowledge::No,
            types: Some(TypeSet::NONE),
            fails_at: Some(k),
            present: bits_from(k + 1),
            optional: bit(k),
        }
    }

    /// Anything goes from step `i` to the end (the `true` schema).
    fn anything(i: usize, len: usize) -> Self {
        Self {
            exists: Knowledge::Yes,
            types: None,
            fails_at: None,
            present: 0,
            optional: bits_from(i) & !bits_from(len),
        }
    }

    /// The value at the pointer exists with these types.
    fn value(types: Option<TypeSet>) -> Self {
        Self {
            exists: Knowledge::Yes,
            types,
            fails_at: None,
            present: 0,
            optional: 0,
        }
    }

    /// Both constraints apply.
    fn and(self, other: Self) -> Self {
        use Knowledge::{No, Unknown, Yes};
        let exists = match (self.exists, other.exists) {
            (No, _) | (_, No) => No,
            (Unknown, _) | (_, Unknown) => Unknown,
            (Yes, Yes) => Yes,
        };
        let fails_at = match (self.exists, other.exists) {
            (No, No) => self.fails_at.zip(other.fails_at).map(|(a, b)| a.min(b)),
            (No, _) => self.fails_at,
            (_, No) => other.fails_at,
            _ => None,
        };
        let types = match (self.types, other.types) {
            (Some(a), Some(b)) => Some(a & b),
            (a, b) => a.or(b),
        };
        let present = self.present | other.present;
        Self {
            exists,
            types,
            fails_at,
            present,
            optional: self.optional & other.optional & !present,
        }
    }

    /// Either constraint applies.
    fn or(self, other: Self) -> Self {
        use Knowledge::{No, Unknown, Yes};
        let exists = match (self.exists, other.exists) {
            (Yes, _) | (_, Yes) => Yes,
            (Unknown, _) | (_, Unknown) => Unknown,
            (No, No) => No,
        };
        let fails_at = match (self.fails_at, other.fails_at) {
            _ if exists != No => None,
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        let types = match (self.types, other.types) {
            (Some(a), Some(b)) => Some(a | b),
            _ => None,
        };
        let present = self.present & other.present;
        Self {
            exists,
            types,
            fails_at,
            present,
            optional: (self.optional | other.optional) & !present,
        }
    }

    /// Existence at best unknown (an unmodeled keyword may forbid the path).
    fn unsure(mut self) -> Self {
        if self.exists == Knowledge::Yes {
            self.exists = Knowledge::Unknown;
        }
        self
    }

    /// Marks step `k` present (required) or known-optional, unless the answer is already `No`.
    fn with_presence(mut self, k: usize, present: bool) -> Self {
        if self.exists != Knowledge::No {
            if present {
                self.present |= bit(k);
                self.optional &= !bit(k);
            } else {
                self.optional |= bit(k);
                self.present &= !bit(k);
            }
        }
        self
    }

    /// A child answer seen from its parent at step `i`: a child that admits nothing means the
    /// step itself cannot be present.
    fn through(self, i: usize) -> Self {
        if self.exists == Knowledge::No && self.fails_at.is_none() {
            Self::absent(i)
        } else {
            self
        }
    }
}

struct Walker<'a, 'p> {
    steps: &'p [Step<'p>],
    /// Draft-04 to draft-07 ignore the siblings of `$ref`.
    ref_overrides_siblings: bool,
    /// `$ref` targets being followed, with the step they were entered at (cycle detection).
    active: Vec<(&'a Value, usize)>,
    visits: usize,
    regexes: HashMap<&'a str, Option<Regex>>,
}

/// Compiles a `patternProperties` pattern; `None` when the pattern cannot be judged.
fn compile(pattern: &str) -> Option<Regex> {
    // ECMA-262 constructs the `regex` crate lacks (look-around, back-references) fail here and
    // make the answer unknown; size limits keep hostile patterns cheap.
    RegexBuilder::new(pattern)
        .size_limit(1 << 20)
        .dfa_size_limit(1 << 20)
        .build()
        .ok()
}

fn is_trivial(schema: &Value) -> bool {
    match schema {
        Value::Bool(b) => *b,
        Value::Object(map) => map.is_empty(),
        _ => false,
    }
}

fn lists_string(value: Option<&Value>, name: &str) -> bool {
    value
        .and_then(Value::as_array)
        .is_some_and(|names| names.iter().any(|n| n.as_str() == Some(name)))
}

/// Decodes `%XX` escapes of a URI fragment; `None` when they do not form UTF-8.
fn percent_decode(text: &str) -> Option<Cow<'_, str>> {
    if !text.contains('%') {
        return Some(Cow::Borrowed(text));
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut k = 0;
    while let Some(&b) = bytes.get(k) {
        if b == b'%' {
            let hex = bytes.get(k + 1..k + 3)?;
            let digit = |h: u8| (h as char).to_digit(16);
            let (hi, lo) = (digit(*hex.first()?)?, digit(*hex.get(1)?)?);
            out.push(u8::try_from(hi * 16 + lo).ok()?);
            k += 3;
        } else {
            out.push(b);
            k += 1;
        }
    }
    String::from_utf8(out).ok().map(Cow::Owned)
}

/// The types a schema object allows by its own `type`, `const` and `enum`; `None` = any.
fn local_types(map: &Map<String, Value>) -> Option<TypeSet> {
    let mut types = map.get("type").and_then(TypeSet::from_type_keyword);
    let mut narrow = |set: TypeSet| types = Some(types.map_or(set, |t| t & set));
    if let Some(value) = map.get("const") {
        narrow(TypeSet::of_value(value));
    }
    if let Some(Value::Array(values)) = map.get("enum") {
        narrow(
            values
                .iter()
                .fold(TypeSet::NONE, |set, v| set | TypeSet::of_value(v)),
        );
    }
    types
}

/// The resource root for local `$ref`s inside `node` (a schema with its own `$id`).
fn base_of<'a>(node: &'a Value, base: &'a Value) -> &'a Value {
    match node.get("$id").and_then(Value::as_str) {
        // A fragment-only `$id` is a draft-07 anchor, not a new resource.
        Some(id) if !id.starts_with('#') => node,
        _ => base,
    }
}

impl<'a, 'p> Walker<'a, 'p> {
    fn new(root: &'a Value, steps: &'p [Step<'p>]) -> Self {
        let dialect = root.get("$schema").and_then(Value::as_str).unwrap_or("");
        Self {
            steps,
            ref_overrides_siblings: ["draft-03", "draft-04", "draft-06", "draft-07"]
                .iter()
                .any(|d| dialect.contains(d)),
            active: Vec::new(),
            visits: 0,
            regexes: HashMap::new(),
        }
    }

    /// Starts a new walk with other steps, keeping compiled patterns.
    fn restart(&mut self, steps: &'p [Step<'p>]) {
        self.steps = steps;
        self.active.clear();
        self.visits = 0;
    }

    fn len(&self) -> usize {
        self.steps.len()
    }

    /// Whether `pattern` matches `name`; `None` when the pattern cannot be compiled.
    fn matches(&mut self, pattern: &'a str, name: &str) -> Option<bool> {
        self.regexes
            .entry(pattern)
            .or_insert_with(|| compile(pattern))
            .as_ref()
            .map(|re| re.is_match(name))
    }

    /// Counts one visit; false when the walk is too deep or too long to continue.
    fn enter(&mut self, depth: usize) -> bool {
        self.visits += 1;
        depth <= MAX_DEPTH && self.visits <= MAX_VISITS
    }

    /// The target of a local `$ref`; `None` for remote, anchor or dangling references.
    fn ref_target(reference: &Value, base: &'a Value) -> Option<&'a Value> {
        let fragment = reference.as_str()?.strip_prefix('#')?;
        let fragment = percent_decode(fragment)?;
        if fragment.is_empty() {
            return Some(base);
        }
        // Plain-name fragments are anchors, which the resolver does not index.
        JsonPointer::parse(&fragment).ok()?.evaluate(base)
    }

    /// Follows `$ref` at step `i`; cycles that consume no step, remote and dangling references
    /// are unknown.
    fn follow(&mut self, reference: &Value, base: &'a Value, i: usize, depth: usize) -> Out {
        let Some(target) = Self::ref_target(reference, base) else {
            return Out::unknown();
        };
        if self
            .active
            .iter()
            .any(|(node, at)| *at == i && std::ptr::eq(*node, target))
        {
            return Out::unknown();
        }
        self.active.push((target, i));
        let out = self.walk(target, base, i, depth + 1);
        self.active.pop();
        out
    }

    /// The answer for steps `i..` given that the value at steps `..i` satisfies `node`.
    fn walk(&mut self, node: &'a Value, base: &'a Value, i: usize, depth: usize) -> Out {
        if !self.enter(depth) {
            return Out::unknown();
        }
        match node {
            Value::Bool(true) => Out::anything(i, self.len()),
            Value::Bool(false) => Out::unsatisfiable(),
            Value::Object(map) => self.walk_object(map, base_of(node, base), i, depth),
            // Not a schema: nothing can be judged.
            _ => Out::unknown(),
        }
    }

    fn walk_object(
        &mut self,
        map: &'a Map<String, Value>,
        base: &'a Value,
        i: usize,
        depth: usize,
    ) -> Out {
        let via_ref = map.get("$ref").map(|r| self.follow(r, base, i, depth));
        if let Some(out) = via_ref
            && self.ref_overrides_siblings
        {
            return out;
        }

        let mut out = self.local(map, base, i, depth);
        if let Some(via_ref) = via_ref {
            out = out.and(via_ref);
        }
        match map.get("allOf") {
            Some(Value::Array(parts)) if !parts.is_empty() => {
                for part in parts {
                    out = out.and(self.walk(part, base, i, depth + 1));
                }
            }
            Some(_) => out = out.and(Out::unknown()),
            None => {}
        }
        for keyword in ["anyOf", "oneOf"] {
            match map.get(keyword) {
                Some(Value::Array(branches)) if !branches.is_empty() => {
                    let mut union = Out::unsatisfiable();
                    for branch in branches {
                        union = union.or(self.walk(branch, base, i, depth + 1));
                    }
                    out = out.and(union);
                }
                Some(_) => out = out.and(Out::unknown()),
                None => {}
            }
        }

        let len = self.len();
        if i < len {
            let unmodeled = |k: &&str| map.get(*k).is_some_and(|v| !is_trivial(v));
            if UNMODELED.iter().any(unmodeled) {
                out = out.unsure();
            }
            if CONDITIONAL_REQUIRED.iter().any(unmodeled) {
                // A conditional `required` may make step `i` present after all.
                out.optional &= !bit(i);
            }
        }
        if out.exists != Knowledge::No && out.types.is_some_and(TypeSet::is_empty) {
            // The parts agree on no type for the final value.
            return if i == len {
                Out::unsatisfiable()
            } else {
                Out::absent(len - 1)
            };
        }
        out
    }

    /// The constraint of `map`'s own keywords (everything but `$ref` and the combinators).
    fn local(
        &mut self,
        map: &'a Map<String, Value>,
        base: &'a Value,
        i: usize,
        depth: usize,
    ) -> Out {
        let types = local_types(map);
        if types.is_some_and(TypeSet::is_empty) {
            return Out::unsatisfiable();
        }
        let values = self.fixed_values(map, i);
        let Some(&step) = self.steps.get(i) else {
            let out = Out::value(types);
            return values.map_or(out, |v| out.and(v));
        };

        let (key, index) = match step {
            Step::Key(token) => (Some(token), array_index(token).map(Some)),
            Step::Member(token) => (Some(token), None),
            Step::AnyItem => (None, Some(None)),
        };
        let can_object = key.is_some() && types.is_none_or(|t| t.intersects(TypeSet::OBJECT));
        let can_array = index.is_some() && types.is_none_or(|t| t.intersects(TypeSet::ARRAY));
        let out = match (key, index) {
            (Some(key), Some(index)) if can_object && can_array => self
                .object_step(map, base, key, i, depth)
                .or(self.array_step(map, base, index, i, depth)),
            (Some(key), _) if can_object => self.object_step(map, base, key, i, depth),
            (_, Some(index)) if can_array => self.array_step(map, base, index, i, depth),
            _ => Out::absent(i),
        };
        values.map_or(out, |v| out.and(v))
    }

    /// The constraint of `const`/`enum`: only paths through the listed values exist.
    fn fixed_values(&self, map: &'a Map<String, Value>, i: usize) -> Option<Out> {
        let walk = |value: &Value| self.walk_value(value, i);
        if let Some(value) = map.get("const") {
            return Some(walk(value));
        }
        match map.get("enum") {
            Some(Value::Array(values)) => Some(
                values
                    .iter()
                    .fold(Out::unsatisfiable(), |union, v| union.or(walk(v))),
            ),
            _ => None,
        }
    }

    /// Steps `i..` evaluated on a concrete value.
    fn walk_value(&self, value: &Value, i: usize) -> Out {
        let mut current = value;
        let mut present = 0;
        for (k, step) in self.steps.iter().enumerate().skip(i) {
            let next = match (*step, current) {
                (Step::Key(key) | Step::Member(key), Value::Object(map)) => map.get(key),
                (Step::Key(key), Value::Array(items)) => {
                    array_index(key).and_then(|n| items.get(n))
                }
                (Step::AnyItem, Value::Array(items)) if !items.is_empty() => {
                    let types = items
                        .iter()
                        .fold(TypeSet::NONE, |set, item| set | TypeSet::of_value(item));
                    return Out {
                        present: present | bit(k),
                        ..Out::value(Some(types))
                    };
                }
                _ => None,
            };
            let Some(next) = next else {
                let mut out = Out::absent(k);
                out.present |= present;
                return out;
            };
            present |= bit(k);
            current = next;
        }
        Out {
            present,
            ..Out::value(Some(TypeSet::of_value(current)))
        }
    }

    /// Step `i` names property `key` of an object satisfying `map`.
    fn object_step(
        &mut self,
        map: &'a Map<String, Value>,
        base: &'a Value,
        key: &str,
        i: usize,
        depth: usize,
    ) -> Out {
        if map.get("maxProperties").and_then(Value::as_u64) == Some(0) {
            return Out::absent(i);
        }
        let mut child: Option<Out> = None;
        let mut unsure = false;
        if let Some(schema) = map.get("properties").and_then(|p| p.get(key)) {
            child = Some(self.walk(schema, base, i + 1, depth + 1));
        }
        if let Some(Value::Object(patterns)) = map.get("patternProperties") {
            for (pattern, schema) in patterns {
                match self.matches(pattern, key) {
                    Some(true) => {
                        let out = self.walk(schema, base, i + 1, depth + 1);
                        child = Some(child.map_or(out, |c| c.and(out)));
                    }
                    Some(false) => {}
                    None => unsure = true,
                }
            }
        }
        let child = match child {
            // A pattern we cannot judge may apply, or may leave `additionalProperties` in force.
            Some(out) if unsure => out.and(Out::unknown()),
            Some(out) => out,
            None if unsure => Out::unknown(),
            None => match map.get("additionalProperties") {
                Some(schema) => self.walk(schema, base, i + 1, depth + 1),
                None => Out::anything(i + 1, self.len()),
            },
        };
        child
            .through(i)
            .with_presence(i, lists_string(map.get("required"), key))
    }

    /// Step `i` is index `index` (`None`: any index) of an array satisfying `map`.
    fn array_step(
        &mut self,
        map: &'a Map<String, Value>,
        base: &'a Value,
        index: Option<usize>,
        i: usize,
        depth: usize,
    ) -> Out {
        let (tuple, rest): (&'a [Value], Option<&'a Value>) =
            match (map.get("prefixItems"), map.get("items")) {
                (
                    Some(Value::Array(prefix)),
                    items @ (None | Some(Value::Bool(_) | Value::Object(_))),
                ) => (prefix, items),
                (None, Some(Value::Array(tuple))) => (tuple, map.get("additionalItems")),
                (None, items @ (None | Some(Value::Bool(_) | Value::Object(_)))) => (&[], items),
                _ => return Out::unknown(),
            };
        let max_items = map
            .get("maxItems")
            .and_then(Value::as_u64)
            .map_or(usize::MAX, |m| usize::try_from(m).unwrap_or(usize::MAX));
        let min_items = map
            .get("minItems")
            .and_then(Value::as_u64)
            .map_or(0, |m| usize::try_from(m).unwrap_or(usize::MAX));
        let len = self.len();
        let walk_at = |walker: &mut Self, position: usize| -> Out {
            match tuple.get(position).or(rest) {
                Some(schema) => walker.walk(schema, base, i + 1, depth + 1),
                None => Out::anything(i + 1, len),
            }
        };
        match index {
            Some(position) => {
                if position >= max_items {
                    return Out::absent(i);
                }
                walk_at(self, position)
                    .through(i)
                    .with_presence(i, position < min_items)
            }
            None => {
                // Every tuple position, then the rest (one more position stands for all).
                let positions = tuple.len().saturating_add(1).min(max_items);
                let mut union = Out::unsatisfiable();
                for position in 0..positions {
                    union = union.or(walk_at(self, position));
                }
                union.through(i)
            }
        }
    }

    /// Merges the declared shape of `node` and the parts it is intersected with.
    fn shape(&mut self, node: &'a Value, base: &'a Value, depth: usize) -> ObjectShape<'a> {
        let incomplete = ObjectShape {
            complete: false,
            ..ObjectShape::default()
        };
        if !self.enter(depth) {
            return incomplete;
        }
        let map = match node {
            Value::Object(map) => map,
            Value::Bool(allowed) => {
                return ObjectShape {
                    additional_forbidden: !allowed,
                    complete: true,
                    ..ObjectShape::default()
                };
            }
            _ => return incomplete,
        };
        let base = base_of(node, base);
        let via_ref = map
            .get("$ref")
            .map(|reference| match Self::ref_target(reference, base) {
                Some(target) if !self.active.iter().any(|(n, _)| std::ptr::eq(*n, target)) => {
                    self.active.push((target, 0));
                    let shape = self.shape(target, base, depth + 1);
                    self.active.pop();
                    shape
                }
                _ => incomplete.clone(),
            });
        if let Some(shape) = via_ref.clone()
            && self.ref_overrides_siblings
        {
            return shape;
        }

        let mut shape = ObjectShape {
            complete: true,
            ..ObjectShape::default()
        };
        if let Some(Value::Object(props)) = map.get("properties") {
            shape.properties.extend(props.keys().map(String::as_str));
        }
        if let Some(Value::Object(patterns)) = map.get("patternProperties") {
            shape.patterns.extend(patterns.keys().map(String::as_str));
        }
        if let Some(Value::Array(names)) = map.get("required") {
            shape
                .required
                .extend(names.iter().filter_map(Value::as_str));
        }
        shape.additional_forbidden = map.get("additionalProperties") == Some(&Value::Bool(false));
        if CONDITIONAL_REQUIRED.iter().any(|k| map.contains_key(*k)) {
            shape.complete = false;
        }
        if let Some(other) = via_ref {
            merge_all(&mut shape, other);
        }
        match map.get("allOf") {
            Some(Value::Array(parts)) => {
                for part in parts {
                    let other = self.shape(part, base, depth + 1);
                    merge_all(&mut shape, other);
                }
            }
            Some(_) => shape.complete = false,
            None => {}
        }
        for keyword in ["anyOf", "oneOf"] {
            match map.get(keyword) {
                Some(Value::Array(branches)) if !branches.is_empty() => {
                    let mut union: Option<ObjectShape<'a>> = None;
                    for branch in branches {
                        let other = self.shape(branch, base, depth + 1);
                        union = Some(match union {
                            Some(mut u) => {
                                merge_any(&mut u, other);
                                u
                            }
                            None => other,
                        });
                    }
                    if let Some(union) = union {
                        merge_all(&mut shape, union);
                    }
                }
                Some(_) => shape.complete = false,
                None => {}
            }
        }
        shape
    }

    /// Collects the schemas applying at steps `i..` (see [`subschemas_at`]); false when unsure.
    fn collect(
        &mut self,
        node: &'a Value,
        base: &'a Value,
        i: usize,
        depth: usize,
        found: &mut Vec<&'a Value>,
    ) -> bool {
        if !self.enter(depth) {
            return false;
        }
        let map = match node {
            Value::Object(map) => map,
            Value::Bool(true) => return true,
            Value::Bool(false) => {
                found.push(node);
                return true;
            }
            _ => return false,
        };
        let base = base_of(node, base);
        let step = self.steps.get(i).copied();
        if let Some(reference) = map.get("$ref") {
            let Some(target) = Self::ref_target(reference, base) else {
                return false;
            };
            if self
                .active
                .iter()
                .any(|(n, at)| *at == i && std::ptr::eq(*n, target))
            {
                return false;
            }
            self.active.push((target, i));
            let ok = self.collect(target, base, i, depth + 1, found);
            self.active.pop();
            if !ok {
                return false;
            }
            if self.ref_overrides_siblings {
                return true;
            }
        }
        let Some(step) = step else {
            // At the pointer, the node applies whole; its `allOf` parts are listed as well so
            // that parts free of `$ref` can be checked on their own.
            if let Some(Value::Array(parts)) = map.get("allOf") {
                for part in parts {
                    if !self.collect(part, base, i, depth + 1, found) {
                        return false;
                    }
                }
            }
            found.push(node);
            return true;
        };
        if ["anyOf", "oneOf", "const", "enum"]
            .iter()
            .chain(UNMODELED.iter())
            .any(|k| map.get(*k).is_some_and(|v| !is_trivial(v)))
        {
            return false;
        }
        if let Some(parts) = map.get("allOf") {
            let Value::Array(parts) = parts else {
                return false;
            };
            for part in parts {
                if !self.collect(part, base, i, depth + 1, found) {
                    return false;
                }
            }
        }
        let (key, may_index) = match step {
            Step::Key(key) => (key, true),
            Step::Member(key) => (key, false),
            Step::AnyItem => return false,
        };
        let types = local_types(map);
        let can_object = types.is_none_or(|t| t.intersects(TypeSet::OBJECT));
        let can_array = may_index
            && array_index(key).is_some()
            && types.is_none_or(|t| t.intersects(TypeSet::ARRAY));
        match (can_object, can_array) {
            (true, false) => {
                let mut matched = false;
                if let Some(schema) = map.get("properties").and_then(|p| p.get(key)) {
                    matched = true;
                    if !self.collect(schema, base, i + 1, depth + 1, found) {
                        return false;
                    }
                }
                if let Some(Value::Object(patterns)) = map.get("patternProperties") {
                    for (pattern, schema) in patterns {
                        match self.matches(pattern, key) {
                            Some(true) => {
                                matched = true;
                                if !self.collect(schema, base, i + 1, depth + 1, found) {
                                    return false;
                                }
                            }
                            Some(false) => {}
                            None => return false,
                        }
                    }
                }
                match map.get("additionalProperties") {
                    Some(schema) if !matched => self.collect(schema, base, i + 1, depth + 1, found),
                    _ => true,
                }
            }
            (false, true) => {
                let Some(position) = array_index(key) else {
                    return false;
                };
                let schema = match (map.get("prefixItems"), map.get("items")) {
                    (Some(Value::Array(prefix)), items) => prefix.get(position).or(items),
                    (None, Some(Value::Array(tuple))) => {
                        tuple.get(position).or(map.get("additionalItems"))
                    }
                    (None, items) => items,
                    _ => return false,
                };
                schema.is_none_or(|s| self.collect(s, base, i + 1, depth + 1, found))
            }
            // Both an object and an array could be there, or neither: not one conjunction.
            _ => false,
        }
    }
}

/// Both shapes apply (intersection of constraints): names and requirements add up.
fn merge_all<'a>(into: &mut ObjectShape<'a>, other: ObjectShape<'a>) {
    for name in other.properties {
        if !into.properties.contains(&name) {
            into.properties.push(name);
        }
    }
    for pattern in other.patterns {
        if !into.patterns.contains(&pattern) {
            into.patterns.push(pattern);
        }
    }
    for name in other.required {
        if !into.required.contains(&name) {
            into.required.push(name);
        }
    }
    into.additional_forbidden |= other.additional_forbidden;
    into.complete &= other.complete;
}

/// Either shape applies (union): names add up, only common requirements stay.
fn merge_any<'a>(into: &mut ObjectShape<'a>, other: ObjectShape<'a>) {
    into.required.retain(|name| other.required.contains(name));
    for name in other.properties {
        if !into.properties.contains(&name) {
            into.properties.push(name);
        }
    }
    for pattern in other.patterns {
        if !into.patterns.contains(&pattern) {
            into.patterns.push(pattern);
        }
    }
    into.additional_forbidden &= other.additional_forbidden;
    into.complete &= other.complete;
}

#[cfg(test)]
mod tests {
    use super::*;
    use Knowledge::{No, Unknown, Yes};
    use serde_json::json;

    fn pointer(text: &str) -> JsonPointer {
        JsonPointer::parse(text).unwrap()
    }

    fn types(text: &str) -> Option<TypeSet> {
        if text == "any" {
            return None;
        }
        Some(
            text.split(" | ")
                .map(|name| TypeSet::from_type_name(name).unwrap())
                .fold(TypeSet::NONE, |set, t| set | t),
        )
    }

    /// One expectation: `exists`, the displayed types (`"any"` for none), `optional_at`.
    fn check(
        schema: &Value,
        text: &str,
        exists: Knowledge,
        expected: &str,
        optional: Option<usize>,
    ) {
        let got = resolve(schema, &pointer(text));
        assert_eq!(got.exists, exists, "exists of {text} in {schema}: {got:?}");
        if exists != No {
            assert_eq!(
                got.types,
                types(expected),
                "types of {text} in {schema}: {got:?}"
            );
            assert_eq!(
                got.optional_at, optional,
                "optional_at of {text} in {schema}: {got:?}"
            );
        }
    }

    fn check_all(schema: &Value, cases: &[(&str, Knowledge, &str, Option<usize>)]) {
        for (text, exists, expected, optional) in cases {
            check(schema, text, *exists, expected, *optional);
        }
    }

    fn fails_at(schema: &Value, text: &str) -> Option<usize> {
        let got = resolve(schema, &pointer(text));
        assert_eq!(got.exists, No, "{text}: {got:?}");
        got.fails_at
    }

    #[test]
    fn type_sets() {
        assert!(TypeSet::NUMBER.intersects(TypeSet::INTEGER));
        assert!(TypeSet::INTEGER.intersects(TypeSet::NUMBER));
        assert_eq!(TypeSet::NUMBER & TypeSet::INTEGER, TypeSet::INTEGER);
        assert!(!TypeSet::STRING.intersects(TypeSet::INTEGER));
        assert!(TypeSet::NUMBER.contains(TypeSet::INTEGER));
        assert!(!TypeSet::INTEGER.contains(TypeSet::NUMBER));
        assert!(!TypeSet::of_value(&json!(1.5)).intersects(TypeSet::INTEGER));
        assert!(TypeSet::of_value(&json!(1.5)).intersects(TypeSet::NUMBER));
        assert_eq!(TypeSet::of_value(&json!(2.0)), TypeSet::INTEGER);
        assert_eq!(TypeSet::of_value(&json!(-3)), TypeSet::INTEGER);
        assert_eq!(TypeSet::of_value(&json!(null)), TypeSet::NULL);
        assert_eq!(TypeSet::of_value(&json!({})), TypeSet::OBJECT);
        assert_eq!(TypeSet::from_type_name("float"), None);
        assert_eq!(
            TypeSet::from_type_keyword(&json!(["string", "null"])),
            Some(TypeSet::STRING | TypeSet::NULL)
        );
        assert_eq!(TypeSet::from_type_keyword(&json!(["string", "x"])), None);
        assert_eq!(
            (TypeSet::STRING | TypeSet::INTEGER).to_string(),
            "string | integer"
        );
        assert_eq!((TypeSet::NUMBER | TypeSet::INTEGER).to_string(), "number");
        assert_eq!(TypeSet::of_value(&json!(0.5)).to_string(), "number");
        assert_eq!(
            TypeSet::ANY.to_string(),
            "string | number | boolean | object | array | null"
        );
        assert_eq!(TypeSet::NONE.to_string(), "nothing");
        assert_eq!(TypeSet::ANY.difference(TypeSet::NUMBER).names().len(), 5);
        assert!(TypeSet::NONE.is_empty());
    }

    #[test]
    fn properties_and_required() {
        let schema = json!({
            "type": "object",
            "properties": {
                "id": {"type": "string"},
                "count": {"type": "integer"},
                "price": {"type": "number"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "owner": {
                    "type": "object",
                    "properties": {"name": {"type": ["string", "null"]}},
                    "required": ["name"]
                },
                "free": {}
            },
            "required": ["id", "owner"],
            "additionalProperties": false
        });
        check_all(
            &schema,
            &[
                ("", Yes, "object", None),
                ("/id", Yes, "string", None),
                ("/count", Yes, "integer", Some(0)),
                ("/price", Yes, "number", Some(0)),
                ("/tags", Yes, "array", Some(0)),
                ("/tags/0", Yes, "string", Some(0)),
                ("/owner/name", Yes, "string | null", None),
                ("/free", Yes, "any", Some(0)),
                ("/free/deep/er", Yes, "any", Some(0)),
                ("/missing", No, "", None),
                ("/id/x", No, "", None),
                ("/owner/other", Yes, "any", Some(1)),
                ("/tags/x", No, "", None),
                ("/tags/01", No, "", None),
                ("/tags/-", No, "", None),
            ],
        );
        assert_eq!(fails_at(&schema, "/missing/x"), Some(0));
        assert_eq!(fails_at(&schema, "/id/x"), Some(1));
        assert_eq!(fails_at(&schema, "/count/0"), Some(1));
        let tags = resolve(&schema, &pointer("/tags"));
        assert_eq!(tags.item_types, Some(TypeSet::STRING));
        assert_eq!(resolve(&schema, &pointer("/id")).item_types, None);
    }

    #[test]
    fn schemas_without_type_allow_anything() {
        check_all(
            &json!({}),
            &[
                ("", Yes, "any", None),
                ("/x", Yes, "any", Some(0)),
                ("/x/0/y", Yes, "any", Some(0)),
            ],
        );
        check_all(
            &json!({"properties": {"a": {"type": "string"}}}),
            &[("/a", Yes, "string", Some(0)), ("/b", Yes, "any", Some(0))],
        );
        // Without `type`, "0" may be an object key or an array index.
        check_all(
            &json!({"items": {"type": "string"}}),
            &[("/0", Yes, "any", Some(0)), ("/x", Yes, "any", Some(0))],
        );
        check_all(
            &json!({"type": "array", "items": {"type": "string"}}),
            &[("/0", Yes, "string", Some(0)), ("/x", No, "", None)],
        );
    }

    #[test]
    fn pattern_and_additional_properties() {
        let schema = json!({
            "type": "object",
            "properties": {"fixed": {"type": "boolean"}},
            "patternProperties": {"^x-": {"type": "string"}, "^n_[0-9]+$": {"type": "integer"}},
            "additionalProperties": false
        });
        check_all(
            &schema,
            &[
                ("/fixed", Yes, "boolean", Some(0)),
                ("/x-trace", Yes, "string", Some(0)),
                ("/n_12", Yes, "integer", Some(0)),
                ("/n_x", No, "", None),
                ("/other", No, "", None),
            ],
        );
        // A property both listed and matched must satisfy both.
        check(
            &json!({"properties": {"x-a": {"type": ["string", "integer"]}},
                    "patternProperties": {"^x-": {"type": "string"}}}),
            "/x-a",
            Yes,
            "string",
            Some(0),
        );
        check_all(
            &json!({"type": "object", "additionalProperties": {"type": "number"}}),
            &[("/anything", Yes, "number", Some(0))],
        );
        check_all(
            &json!({"type": "object", "additionalProperties": true}),
            &[("/anything", Yes, "any", Some(0))],
        );
        // Look-ahead is not supported by the regex engine: unknown, never "no".
        let odd = json!({
            "type": "object",
            "patternProperties": {"^(?=a)": {"type": "string"}},
            "additionalProperties": false
        });
        check(&odd, "/abc", Unknown, "any", Some(0));
        check(&odd, "/zzz", Unknown, "any", Some(0));
        let odd_listed = json!({
            "type": "object",
            "properties": {"a": {"type": "string"}},
            "patternProperties": {"(?<=x)": {"type": "string"}}
        });
        check(&odd_listed, "/a", Unknown, "string", Some(0));
    }

    #[test]
    fn escaped_property_names() {
        let schema = json!({
            "type": "object",
            "properties": {
                "a/b": {"type": "string"},
                "m~n": {"type": "integer"},
                "": {"type": "boolean"},
                "~1": {"type": "null"}
            },
            "required": ["a/b", "m~n"],
            "additionalProperties": false
        });
        check_all(
            &schema,
            &[
                ("/a~1b", Yes, "string", None),
                ("/m~0n", Yes, "integer", None),
                ("/", Yes, "boolean", Some(0)),
                ("/~01", Yes, "null", Some(0)),
                ("/a", No, "", None),
                ("/a~0b", No, "", None),
            ],
        );
        let defs = json!({
            "$defs": {"a/b": {"type": "string"}, "m~n": {"type": "integer"}, "sp ace": {"type": "null"}},
            "type": "object",
            "properties": {
                "p": {"$ref": "#/$defs/a~1b"},
                "q": {"$ref": "#/$defs/m~0n"},
                "r": {"$ref": "#/$defs/sp%20ace"}
            }
        });
        check_all(
            &defs,
            &[
                ("/p", Yes, "string", Some(0)),
                ("/q", Yes, "integer", Some(0)),
                ("/r", Yes, "null", Some(0)),
            ],
        );
        // A fragment that does not decode cannot be judged.
        check(
            &json!({"properties": {"a": {"$ref": "#/%ZZ"}}}),
            "/a",
            Unknown,
            "any",
            Some(0),
        );
    }

    #[test]
    fn items_forms() {
        let draft07 = json!({
            "type": "array",
            "items": [{"type": "string"}, {"type": "integer"}],
            "additionalItems": {"type": "boolean"},
            "minItems": 1
        });
        check_all(
            &draft07,
            &[
                ("/0", Yes, "string", None),
                ("/1", Yes, "integer", Some(0)),
                ("/2", Yes, "boolean", Some(0)),
                ("/99", Yes, "boolean", Some(0)),
            ],
        );
        assert_eq!(
            resolve(&draft07, &JsonPointer::root()).item_types,
            Some(TypeSet::STRING | TypeSet::INTEGER | TypeSet::BOOLEAN)
        );
        let closed =
            json!({"type": "array", "items": [{"type": "string"}], "additionalItems": false});
        check_all(
            &closed,
            &[("/0", Yes, "string", Some(0)), ("/1", No, "", None)],
        );
        assert_eq!(
            resolve(&closed, &JsonPointer::root()).item_types,
            Some(TypeSet::STRING)
        );

        let draft2020 = json!({
            "type": "array",
            "prefixItems": [{"type": "string"}, {"type": "number"}],
            "items": {"type": "null"},
            "minItems": 2,
            "maxItems": 4
        });
        check_all(
            &draft2020,
            &[
                ("/0", Yes, "string", None),
                ("/1", Yes, "number", None),
                ("/2", Yes, "null", Some(0)),
                ("/3", Yes, "null", Some(0)),
                ("/4", No, "", None),
            ],
        );
        let tuple_only =
            json!({"type": "array", "prefixItems": [{"type": "string"}], "items": false});
        check_all(
            &tuple_only,
            &[("/0", Yes, "string", Some(0)), ("/1", No, "", None)],
        );
        let open_tuple = json!({"type": "array", "prefixItems": [{"type": "string"}]});
        check_all(&open_tuple, &[("/5", Yes, "any", Some(0))]);
        assert_eq!(resolve(&open_tuple, &JsonPointer::root()).item_types, None);
        // No item can exist: item types are not reported.
        let empty = json!({"type": "array", "items": false});
        assert_eq!(resolve(&empty, &JsonPointer::root()).item_types, None);
        check(&empty, "/0", No, "", None);
        // Nested arrays.
        let matrix =
            json!({"type": "array", "items": {"type": "array", "items": {"type": "integer"}}});
        check(&matrix, "/3/4", Yes, "integer", Some(0));
        assert_eq!(
            resolve(&matrix, &pointer("/0")).item_types,
            Some(TypeSet::INTEGER)
        );
    }

    #[test]
    fn local_refs_draft07_and_2020() {
        let draft07 = json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "definitions": {
                "user": {
                    "type": "object",
                    "properties": {"id": {"type": "integer"}, "friend": {"$ref": "#/definitions/user"}},
                    "required": ["id"],
                    "additionalProperties": false
                }
            },
            "type": "object",
            "properties": {"user": {"$ref": "#/definitions/user", "type": "string"}},
            "required": ["user"]
        });
        // Draft-07 ignores the siblings of `$ref` (the `type: string` here).
        check_all(
            &draft07,
            &[
                ("/user", Yes, "object", None),
                ("/user/id", Yes, "integer", None),
                ("/user/friend/friend/id", Yes, "integer", Some(1)),
                ("/user/name", No, "", None),
            ],
        );
        assert_eq!(fails_at(&draft07, "/user/friend/name"), Some(2));

        let draft2020 = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$defs": {
                "item": {"type": "object", "properties": {"sku": {"type": "string"}}, "required": ["sku"]},
                "alias": {"$ref": "#/$defs/item"}
            },
            "type": "object",
            "properties": {
                "items": {"type": "array", "items": {"$ref": "#/$defs/alias"}},
                "pinned": {"$ref": "#/$defs/item", "properties": {"sku": {"type": ["string", "null"]}}}
            }
        });
        check_all(
            &draft2020,
            &[
                ("/items/0/sku", Yes, "string", Some(0)),
                ("/pinned/sku", Yes, "string", Some(0)),
                ("/pinned/x", Yes, "any", Some(0)),
            ],
        );
        // 2020-12 applies the siblings of `$ref`.
        let siblings = json!({
            "$defs": {"s": {"type": "string"}},
            "properties": {"a": {"$ref": "#/$defs/s", "type": "integer"}}
        });
        check(&siblings, "/a", No, "", None);

        // Any local pointer works, not only `$defs`.
        let anywhere = json!({
            "type": "object",
            "properties": {
                "a": {"type": "object", "properties": {"b": {"type": "boolean"}}},
                "c": {"$ref": "#/properties/a/properties/b"}
            }
        });
        check(&anywhere, "/c", Yes, "boolean", Some(0));
        let whole = json!({"type": "object", "properties": {"next": {"$ref": "#"}, "v": {"type": "string"}}});
        check(&whole, "/next/next/next/v", Yes, "string", Some(0));
    }

    #[test]
    fn unjudgeable_refs_are_unknown() {
        let schema = json!({
            "type": "object",
            "properties": {
                "remote": {"$ref": "https://example.com/schemas/thing.json"},
                "relative": {"$ref": "thing.json#/x"},
                "anchor": {"$ref": "#thing"},
                "dangling": {"$ref": "#/$defs/nope"},
                "typed_remote": {"$ref": "https://example.com/a.json", "type": "string"},
                "not_a_string": {"$ref": 7}
            },
            "additionalProperties": false
        });
        check_all(
            &schema,
            &[
                ("/remote", Unknown, "any", Some(0)),
                ("/remote/x", Unknown, "any", Some(0)),
                ("/relative", Unknown, "any", Some(0)),
                ("/anchor", Unknown, "any", Some(0)),
                ("/dangling", Unknown, "any", Some(0)),
                ("/typed_remote", Unknown, "string", Some(0)),
                ("/not_a_string", Unknown, "any", Some(0)),
                ("/other", No, "", None),
            ],
        );
        // A remote schema may require: presence is unknown, not "optional".
        check(
            &json!({"$ref": "https://example.com/x.json"}),
            "/a",
            Unknown,
            "any",
            None,
        );
        // A nested resource with its own `$id` is the base of its local refs.
        let nested = json!({
            "type": "object",
            "properties": {
                "inner": {
                    "$id": "https://example.com/inner",
                    "$defs": {"n": {"type": "null"}},
                    "type": "object",
                    "properties": {"z": {"$ref": "#/$defs/n"}}
                }
            },
            "$defs": {"n": {"type": "string"}}
        });
        check(&nested, "/inner/z", Yes, "null", Some(0));
    }

    #[test]
    fn cycles_terminate() {
        check_all(
            &json!({"$ref": "#"}),
            &[("", Unknown, "any", None), ("/a/b", Unknown, "any", None)],
        );
        let mutual = json!({
            "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}},
            "$ref": "#/$defs/a"
        });
        check_all(
            &mutual,
            &[("", Unknown, "any", None), ("/x", Unknown, "any", None)],
        );
        let through_all_of = json!({
            "$defs": {"a": {"allOf": [{"$ref": "#/$defs/b"}, {"type": "object"}]},
                      "b": {"anyOf": [{"$ref": "#/$defs/a"}, {"type": "object"}]}},
            "$ref": "#/$defs/a"
        });
        // The cycle is unknown, but the other branch of the union admits `/x` outright.
        check(&through_all_of, "/x", Yes, "any", Some(0));
        let tree = json!({
            "$defs": {
                "node": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string"},
                        "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}
                    },
                    "required": ["name", "children"]
                }
            },
            "$ref": "#/$defs/node"
        });
        check_all(
            &tree,
            &[
                ("/children/0/children/1/name", Yes, "string", Some(1)),
                ("/children/0/oops/name", Yes, "any", Some(1)),
                ("/name/x", No, "", None),
            ],
        );
        assert_eq!(
            resolve(&tree, &pointer("/children")).item_types,
            Some(TypeSet::OBJECT)
        );
    }

    #[test]
    fn fan_out_stays_bounded() {
        // Each level refers twice to the next: 2^60 paths without a work cap.
        let mut defs = serde_json::Map::new();
        for level in 0..60 {
            let next = format!("#/$defs/d{}", level + 1);
            defs.insert(
                format!("d{level}"),
                json!({"allOf": [{"$ref": next}, {"$ref": next}], "anyOf": [{"$ref": next}, {"$ref": next}]}),
            );
        }
        defs.insert("d60".into(), json!({"type": "object"}));
        let schema = json!({"$defs": defs, "$ref": "#/$defs/d0"});
        let got = resolve(&schema, &pointer("/a/b"));
        assert_ne!(got.exists, No);
    }

    #[test]
    fn combinators() {
        let all_of = json!({
            "$defs": {"base": {"type": "object", "properties": {"id": {"type": "number"}}, "required": ["id"]}},
            "allOf": [
                {"$ref": "#/$defs/base"},
                {"properties": {"id": {"type": "integer"}, "note": {"type": "string"}}, "required": ["note"]}
            ]
        });
        check_all(
            &all_of,
            &[
                ("/id", Yes, "integer", None),
                ("/note", Yes, "string", None),
                ("/other", Yes, "any", Some(0)),
            ],
        );
        let closed_part = json!({
            "allOf": [
                {"type": "object", "properties": {"a": {}}, "additionalProperties": false},
                {"properties": {"b": {"type": "string"}}}
            ]
        });
        check_all(
            &closed_part,
            &[("/a", Yes, "any", Some(0)), ("/b", No, "", None)],
        );
        let disjoint = json!({"allOf": [{"type": "string"}, {"type": "integer"}]});
        check(&disjoint, "", No, "", None);

        let any_of = json!({
            "anyOf": [
                {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"], "additionalProperties": false},
                {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "null"}}, "required": ["a", "b"], "additionalProperties": false}
            ]
        });
        check_all(
            &any_of,
            &[
                ("/a", Yes, "string | integer", None),
                ("/b", Yes, "null", Some(0)),
                ("/c", No, "", None),
            ],
        );
        let one_of = json!({
            "oneOf": [
                {"type": "object", "properties": {"x": {"type": "boolean"}}, "required": ["x"]},
                {"type": "object", "properties": {"y": {"type": "boolean"}}, "additionalProperties": false}
            ]
        });
        // `x` is required in one branch and forbidden in the other: it may be absent.
        check(&one_of, "/x", Yes, "boolean", Some(0));
        // Required in every branch: always present.
        let both = json!({
            "type": "object",
            "properties": {"k": {"type": "string"}},
            "anyOf": [{"required": ["k"]}, {"required": ["k", "j"]}]
        });
        check(&both, "/k", Yes, "string", None);
        let nullable = json!({"anyOf": [{"type": "string"}, {"type": "null"}]});
        check(&nullable, "", Yes, "string | null", None);
        check(&nullable, "/x", No, "", None);
        check(&json!({"anyOf": []}), "/x", Unknown, "any", None);
        check(
            &json!({"allOf": {"type": "string"}}),
            "/x",
            Unknown,
            "any",
            None,
        );
    }

    #[test]
    fn boolean_schemas() {
        check_all(
            &json!(true),
            &[("", Yes, "any", None), ("/a/0", Yes, "any", Some(0))],
        );
        check(&json!(false), "", No, "", None);
        assert_eq!(fails_at(&json!(false), "/a"), None);
        let schema = json!({"type": "object", "properties": {"gone": false, "any": true}});
        check_all(
            &schema,
            &[("/gone", No, "", None), ("/any/x", Yes, "any", Some(0))],
        );
        assert_eq!(fails_at(&schema, "/gone/x"), Some(0));
        check(
            &json!({"anyOf": [false, {"type": "string"}]}),
            "",
            Yes,
            "string",
            None,
        );
    }

    #[test]
    fn type_const_enum() {
        check(
            &json!({"type": ["string", "integer"]}),
            "",
            Yes,
            "string | integer",
            None,
        );
        check(
            &json!({"type": "number", "const": 3}),
            "",
            Yes,
            "integer",
            None,
        );
        check(
            &json!({"enum": ["a", 1, null]}),
            "",
            Yes,
            "string | integer | null",
            None,
        );
        check(&json!({"enum": []}), "", No, "", None);
        check(&json!({"type": "string", "enum": [1, 2]}), "", No, "", None);
        check(&json!({"type": "wat"}), "", Yes, "any", None);
        let fixed = json!({
            "type": "object",
            "properties": {
                "c": {"const": {"mode": "fast", "levels": [1, "two"]}},
                "e": {"enum": [{"k": 1}, {"k": "s", "j": true}]}
            },
            "required": ["c", "e"]
        });
        check_all(
            &fixed,
            &[
                ("/c/mode", Yes, "string", None),
                ("/c/levels/1", Yes, "string", None),
                ("/c/levels/2", No, "", None),
                ("/c/other", No, "", None),
                ("/e/k", Yes, "integer | string", None),
                ("/e/j", Yes, "boolean", Some(1)),
                ("/e/z", No, "", None),
            ],
        );
        assert_eq!(
            resolve(&fixed, &pointer("/c/levels")).item_types,
            Some(TypeSet::INTEGER | TypeSet::STRING)
        );
    }

    #[test]
    fn unmodeled_keywords_never_say_no() {
        // Conditional keywords may require `a`: its presence is unknown, not "optional".
        for (keyword, optional) in [
            (json!({"not": {"required": ["a"]}}), Some(0)),
            (
                json!({"if": {"required": ["x"]}, "then": {"required": ["a"]}}),
                None,
            ),
            (
                json!({"dependentSchemas": {"x": {"properties": {"a": false}}}}),
                None,
            ),
            (json!({"dependentRequired": {"x": ["a"]}}), None),
            (json!({"propertyNames": {"maxLength": 0}}), Some(0)),
            (json!({"unevaluatedProperties": false}), Some(0)),
        ] {
            let mut schema = json!({"type": "object", "properties": {"a": {"type": "string"}}});
            if let (Value::Object(schema), Value::Object(extra)) = (&mut schema, keyword) {
                schema.extend(extra);
            }
            let exists = if optional.is_some() || schema.get("dependentRequired").is_none() {
                Unknown
            } else {
                // `dependentRequired` can only add requirements, never forbid.
                Yes
            };
            check(&schema, "/a", exists, "string", optional);
            check(&schema, "", Yes, "object", None);
        }
        // Where a structural keyword is certain, the answer stays certain.
        let closed =
            json!({"type": "object", "additionalProperties": false, "not": {"type": "null"}});
        check(&closed, "/a", No, "", None);
        check(
            &json!({"type": "object", "maxProperties": 0}),
            "/a",
            No,
            "",
            None,
        );
        check(
            &json!({"type": "object", "x-vendor": {"a": 1}}),
            "/a",
            Yes,
            "any",
            Some(0),
        );
        check(
            &json!({"properties": {"a": 3}}),
            "/a",
            Unknown,
            "any",
            Some(0),
        );
    }

    #[test]
    fn name_selectors_never_index_arrays() {
        let names =
            |schema: &Value, text: &str| resolve_as(schema, &pointer(text), PointerReading::Names);
        let schema = json!({"type": "object", "properties": {
            "items": {"type": "array", "items": {"type": "object",
                "properties": {"id": {"type": "string"}}, "required": ["id"]}},
            "tuple": {"type": "array", "prefixItems": [{"type": "string"}]},
            "byNumber": {"type": "object", "properties": {"0": {"type": "integer"}}},
            "either": {"anyOf": [{"type": "array"}, {"type": "object"}]},
            "untyped": {},
            "fixed": {"const": ["a"]},
            "listed": {"enum": [{"0": "x"}, ["y"]]}
        }, "required": ["items"]});
        for text in ["/items/0/id", "/items/0", "/tuple/0", "/fixed/0"] {
            // RFC 6901 may index the array; a name selector never does.
            assert_ne!(resolve(&schema, &pointer(text)).exists, No, "{text}");
            let got = names(&schema, text);
            assert_eq!(got.exists, No, "{text}: {got:?}");
            assert_eq!(got.fails_at, Some(1), "{text}: {got:?}");
        }
        for (text, exists, expected) in [
            ("/byNumber/0", Yes, "integer"),
            ("/either/0", Yes, "any"),
            ("/untyped/0", Yes, "any"),
            ("/listed/0", Yes, "string"),
            ("/items", Yes, "array"),
        ] {
            let got = names(&schema, text);
            assert_eq!(got.exists, exists, "{text}: {got:?}");
            assert_eq!(got.types, types(expected), "{text}: {got:?}");
        }
        // Item types of an array at the end of the path are still known.
        assert_eq!(names(&schema, "/items").item_types, types("object"));
    }

    #[test]
    fn integer_is_a_number() {
        let schema = json!({
            "type": "object",
            "properties": {"n": {"type": "number"}, "i": {"type": "integer"}},
            "required": ["n", "i"]
        });
        let n = resolve(&schema, &pointer("/n")).types.unwrap();
        let i = resolve(&schema, &pointer("/i")).types.unwrap();
        assert!(n.intersects(i) && i.intersects(n));
        assert!(!n.intersects(TypeSet::STRING));
        check(
            &json!({"allOf": [{"type": "number"}, {"type": "integer"}]}),
            "",
            Yes,
            "integer",
            None,
        );
        check(
            &json!({"anyOf": [{"type": "number"}, {"type": "integer"}]}),
            "",
            Yes,
            "number",
            None,
        );
    }

    /// A schema nested `depth` times through `properties.a`, built without recursion.
    fn deep(depth: usize, wrapper: &str) -> Value {
        let mut schema = json!({"type": "string"});
        // `json!` would serialize (deep-copy, recursively) an interpolated `Value`: build by hand.
        for _ in 0..depth {
            let mut map = serde_json::Map::new();
            if wrapper == "allOf" {
                map.insert("allOf".into(), Value::Array(vec![schema]));
            } else {
                let mut properties = serde_json::Map::new();
                properties.insert("a".into(), schema);
                map.insert("type".into(), json!("object"));
                map.insert("properties".into(), Value::Object(properties));
            }
            schema = Value::Object(map);
        }
        schema
    }

    /// Takes a deep value apart without recursive drops.
    fn dismantle(value: Value) {
        let mut stack = vec![value];
        while let Some(mut value) = stack.pop() {
            match &mut value {
                Value::Object(map) => stack.extend(std::mem::take(map).into_iter().map(|(_, v)| v)),
                Value::Array(items) => stack.append(items),
                _ => {}
            }
        }
    }

    #[test]
    fn very_deep_schemas_do_not_overflow() {
        let by_properties = deep(10_000, "properties");
        let long = JsonPointer::from_tokens(std::iter::repeat_n("a", 10_000));
        let got = resolve(&by_properties, &long);
        assert_eq!(got.exists, Unknown);
        assert_eq!(got.types, None);
        check(&by_properties, "/a/a/a", Yes, "object", Some(0));
        check(&by_properties, "/b", Yes, "any", Some(0));
        let shape = object_shape(&by_properties, &by_properties);
        assert_eq!(shape.properties, ["a"]);
        assert!(subschemas_at(&by_properties, &long).is_none());
        dismantle(by_properties);

        let by_all_of = deep(10_000, "allOf");
        check(&by_all_of, "", Unknown, "any", None);
        check(&by_all_of, "/x", Unknown, "any", None);
        assert!(!object_shape(&by_all_of, &by_all_of).complete);
        dismantle(by_all_of);
    }

    #[test]
    fn long_pointers_beyond_the_presence_mask() {
        let schema = deep(100, "properties");
        let got = resolve(
            &schema,
            &JsonPointer::from_tokens(std::iter::repeat_n("a", 100)),
        );
        assert_eq!(got.exists, Yes);
        assert_eq!(got.types, Some(TypeSet::STRING));
        assert_eq!(got.optional_at, Some(0));
    }

    #[test]
    fn resolve_str_rejects_malformed_pointers() {
        assert_eq!(resolve_str(&json!({}), "a").exists, No);
        assert_eq!(resolve_str(&json!({}), "/a").exists, Yes);
    }

    #[test]
    fn object_shapes() {
        let input = json!({
            "$defs": {"paths": {"type": "object", "properties": {"source": {"type": "string"}}, "required": ["source"]}},
            "type": "object",
            "allOf": [{"$ref": "#/$defs/paths"}],
            "properties": {"destination": {"type": "string"}},
            "anyOf": [
                {"properties": {"overwrite": {"type": "boolean"}}, "required": ["overwrite", "mode"]},
                {"properties": {"mode": {"type": "string"}}, "required": ["mode"]}
            ],
            "required": ["destination"],
            "additionalProperties": false
        });
        let shape = object_shape(&input, &input);
        assert_eq!(
            shape.properties,
            ["destination", "source", "overwrite", "mode"]
        );
        assert_eq!(shape.required, ["destination", "source", "mode"]);
        assert!(shape.additional_forbidden);
        assert!(shape.complete);
        assert_eq!(shape.declares("mode"), Yes);
        assert_eq!(shape.declares("nope"), No);

        let patterned = json!({
            "type": "object",
            "properties": {"a": {}},
            "patternProperties": {"^x_": {}},
            "additionalProperties": false
        });
        let shape = object_shape(&patterned, &patterned);
        assert!(!shape.additional_forbidden);
        assert_eq!(shape.declares("x_1"), Yes);
        assert_eq!(shape.declares("y"), No);

        let remote =
            json!({"allOf": [{"$ref": "https://example.com/s.json"}], "properties": {"a": {}}});
        let shape = object_shape(&remote, &remote);
        assert!(!shape.complete);
        assert_eq!(shape.declares("b"), Unknown);
        let cyclic = json!({"$defs": {"a": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"});
        assert!(!object_shape(&cyclic, &cyclic).complete);
        let conditional =
            json!({"properties": {"a": {}}, "if": {}, "then": {"properties": {"b": {}}}});
        assert!(!object_shape(&conditional, &conditional).complete);

        // A shape for a node inside a larger document: refs go to the root.
        let doc = json!({
            "$defs": {"id": {"properties": {"id": {"type": "string"}}, "required": ["id"]}},
            "properties": {"params": {"$ref": "#/$defs/id", "properties": {"v": {}}}}
        });
        let node = pointer("/properties/params").evaluate(&doc).unwrap();
        let shape = object_shape(&doc, node);
        assert_eq!(shape.properties, ["v", "id"]);
        assert_eq!(shape.required, ["id"]);
        assert!(!shape.additional_forbidden);
    }

    #[test]
    fn subschemas() {
        let schema = json!({
            "$defs": {"n": {"type": "integer", "minimum": 1}},
            "type": "object",
            "properties": {
                "n": {"allOf": [{"$ref": "#/$defs/n"}, {"maximum": 9}]},
                "list": {"type": "array", "items": {"$ref": "#/$defs/n"}},
                "choice": {"anyOf": [{"type": "object", "properties": {"x": {}}}]},
                "closed": {"type": "object", "additionalProperties": false}
            }
        });
        let n = subschemas_at(&schema, &pointer("/n")).unwrap();
        let parts = &schema["properties"]["n"]["allOf"];
        assert_eq!(
            n,
            [
                &schema["$defs"]["n"],
                &parts[0],
                &parts[1],
                &schema["properties"]["n"]
            ]
        );
        let remote = json!({"properties": {"a": {"$ref": "https://example.com/a.json"}}});
        assert!(subschemas_at(&remote, &pointer("/a")).is_none());
        let draft07 = json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "definitions": {"s": {"type": "string"}},
            "properties": {"a": {"$ref": "#/definitions/s", "type": "integer"}}
        });
        assert_eq!(
            subschemas_at(&draft07, &pointer("/a")).unwrap(),
            [&draft07["definitions"]["s"]]
        );
        let item = subschemas_at(&schema, &pointer("/list/3")).unwrap();
        assert_eq!(
            item,
            [
                &schema["$defs"]["n"],
                &schema["properties"]["list"]["items"]
            ]
        );
        assert_eq!(subschemas_at(&schema, &pointer("/free")).unwrap().len(), 0);
        assert!(subschemas_at(&schema, &pointer("/choice/x")).is_none());
        assert_eq!(
            subschemas_at(&schema, &pointer("/closed/x")).unwrap(),
            [&json!(false)]
        );
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

        /// Arbitrary schema-like values and pointers never panic.
        #[test]
        fn never_panics(schema in arbitrary_schema(), tokens in proptest::collection::vec("[a-z0-9$#/~]{0,3}", 0..5)) {
            let pointer = JsonPointer::from_tokens(tokens);
            let got = resolve(&schema, &pointer);
            if got.exists == No {
                proptest::prop_assert!(got.optional_at.is_none());
            }
            let _ = object_shape(&schema, &schema);
            let _ = subschemas_at(&schema, &pointer);
        }
    }

    fn arbitrary_schema() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(json!(true)),
            Just(json!(false)),
            Just(json!({})),
            Just(json!({"type": "string"})),
            Just(json!({"type": ["object", "null"]})),
            Just(json!({"$ref": "#"})),
            Just(json!({"$ref": "#/properties/a"})),
            Just(json!({"$ref": "#/$defs/x"})),
            Just(json!({"$ref": "https://example.com"})),
            Just(json!({"enum": [1, "a", {"a": [null]}]})),
            Just(json!({"const": [1, 2]})),
            Just(json!(3)),
        ];
        leaf.prop_recursive(4, 32, 4, |inner| {
            let keyword = prop_oneof![
                Just("properties"),
                Just("patternProperties"),
                Just("$defs"),
                Just("allOf"),
                Just("anyOf"),
                Just("oneOf"),
                Just("items"),
                Just("prefixItems"),
                Just("additionalProperties"),
                Just("additionalItems"),
                Just("not"),
            ];
            proptest::collection::vec((keyword, proptest::collection::vec(inner, 1..3)), 1..4)
                .prop_map(|parts| {
                    let mut map = serde_json::Map::new();
                    for (keyword, mut schemas) in parts {
                        let value = match keyword {
                            "properties" | "$defs" => {
                                json!({"a": schemas.pop(), "x": schemas.pop()})
                            }
                            "patternProperties" => {
                                json!({"^a": schemas.pop(), "(?=x)": schemas.pop()})
                            }
                            "allOf" | "anyOf" | "oneOf" | "prefixItems" => Value::Array(schemas),
                            _ => schemas.pop().unwrap_or(Value::Bool(true)),
                        };
                        map.insert(keyword.to_owned(), value);
                    }
                    map.insert("required".into(), json!(["a"]));
                    Value::Object(map)
                })
        })
    }
}
