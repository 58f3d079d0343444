//! `$ref` resolution inside one document; nothing is ever fetched.
//!
//! A reference whose fragment is a JSON Pointer (`#`, `#/$defs/item`) is evaluated directly
//! against the resource it appears in: the document, or the nearest enclosing schema with its
//! own `$id`. Every other reference — an `$anchor` (`#item`), a draft-07 `$id: "#item"`, or a
//! URI naming a resource embedded with `$id` (`item.json`, `https://example.com/item#/x`) — is
//! resolved by the `referencing` crate, whose registry indexes the document's resources and
//! anchors the first time such a reference is met. The registry's retriever never fetches: a
//! reference leaving the document resolves to nothing in it, and the answer is unknown.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use mcp_recovery_model::JsonPointer;
use referencing::{Draft, Registry, Retrieve, Uri};
use serde_json::Value;

/// The base URI of a document without an absolute `$id` (the one `referencing` uses too).
const DEFAULT_BASE: &str = "json-schema:///";

/// Members whose values are data, not schemas: an `$id` inside them names no resource.
const DATA_KEYWORDS: [&str; 4] = ["const", "enum", "default", "examples"];

/// The resource root for `#/…` references inside `node` (a schema with its own `$id`).
pub(crate) fn base_of<'a>(node: &'a Value, base: &'a Value) -> &'a Value {
    match node.get("$id").and_then(Value::as_str) {
        // A fragment-only `$id` is a draft-07 anchor, not a new resource.
        Some(id) if !id.starts_with('#') => node,
        _ => base,
    }
}

/// Resolves the references of one document.
pub(crate) struct Refs<'a> {
    root: &'a Value,
    /// Built on the first reference that is not a JSON Pointer fragment; `None` inside when the
    /// document cannot be indexed (then such references are unknown).
    index: Option<Option<Index<'a>>>,
}

/// The document as `referencing` sees it, and the way back from its answers to the document.
struct Index<'a> {
    registry: Registry<'a>,
    /// Every node of the document by address, with the resource root it belongs to.
    nodes: HashMap<*const Value, (&'a Value, &'a Value)>,
    /// The base URI of every resource root by address.
    uris: HashMap<*const Value, Arc<Uri<String>>>,
}

/// A retriever that never fetches: whatever it is asked for is the `true` schema, which lies
/// outside the document and so resolves to nothing the walk can use.
struct NoFetch;

impl Retrieve for NoFetch {
    fn retrieve(&self, _: &Uri<String>) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        Ok(Value::Bool(true))
    }
}

impl<'a> Refs<'a> {
    pub(crate) fn new(root: &'a Value) -> Self {
        Self { root, index: None }
    }

    /// The target of `reference` met in resource `base`, and the resource root of the target;
    /// `None` for remote, dangling or malformed references.
    pub(crate) fn target(
        &mut self,
        reference: &Value,
        base: &'a Value,
    ) -> Option<(&'a Value, &'a Value)> {
        let reference = reference.as_str()?;
        if let Some(fragment) = reference.strip_prefix('#')
            && (fragment.is_empty() || fragment.starts_with('/') || fragment.starts_with("%2F"))
        {
            let fragment = percent_decode(fragment)?;
            if fragment.is_empty() {
                return Some((base, base));
            }
            let target = JsonPointer::parse(&fragment).ok()?.evaluate(base)?;
            return Some((target, base));
        }
        let root = self.root;
        let index = self
            .index
            .get_or_insert_with(|| Index::build(root))
            .as_ref()?;
        index.lookup(reference, base)
    }
}

impl<'a> Index<'a> {
    fn build(root: &'a Value) -> Option<Self> {
        let draft = Draft::default().detect(root);
        let registry = Registry::new()
            .retriever(NoFetch)
            .draft(draft)
            .retrieve_known_draft_meta_schemas(false)
            .add(DEFAULT_BASE, root)
            .ok()?
            .prepare()
            .ok()?;
        let mut index = Self {
            registry,
            nodes: HashMap::new(),
            uris: HashMap::new(),
        };
        let base = Arc::new(referencing::uri::from_str(DEFAULT_BASE).ok()?);
        index.visit(root, root, &base);
        Some(index)
    }

    /// Records `node` and everything under it, `base` being the resource root above it.
    fn visit(&mut self, node: &'a Value, base: &'a Value, uri: &Arc<Uri<String>>) {
        // An explicit stack: documents may be deeper than the thread's stack allows.
        let mut stack = vec![(node, base, Arc::clone(uri))];
        while let Some((node, base, uri)) = stack.pop() {
            let (base, uri) = match node.get("$id").and_then(Value::as_str) {
                Some(id) if !id.starts_with('#') => {
                    let id = id.strip_suffix('#').unwrap_or(id);
                    match self.registry.resolve_uri(&uri.borrow(), id) {
                        Ok(resolved) => (node, resolved),
                        // An `$id` that is not a URI reference: its subtree cannot be reached
                        // by URI, only by pointer.
                        Err(_) => (node, uri),
                    }
                }
                _ => (base, uri),
            };
            if std::ptr::eq(base, node) {
                self.uris.insert(node, Arc::clone(&uri));
            }
            self.nodes.insert(node, (node, base));
            match node {
                Value::Object(map) => {
                    for (key, value) in map {
                        if !DATA_KEYWORDS.contains(&key.as_str()) {
                            stack.push((value, base, Arc::clone(&uri)));
                        }
                    }
                }
                Value::Array(items) => {
                    stack.extend(items.iter().map(|item| (item, base, Arc::clone(&uri))));
                }
                _ => {}
            }
        }
    }

    fn lookup(&self, reference: &str, base: &'a Value) -> Option<(&'a Value, &'a Value)> {
        let uri = self.uris.get(&std::ptr::from_ref(base))?;
        let resolved = self
            .registry
            .resolver((**uri).clone())
            .lookup(reference)
            .ok()?;
        // Contents outside the document (what the retriever made up) have no entry.
        let (target, resource) = self.nodes.get(&std::ptr::from_ref(resolved.contents()))?;
        Some((*target, *resource))
    }
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
