//! The house rules of `docs/architecture.md` that a compiler does not check: no production file
//! of any workspace member (published or not, `xtask` included) over [`MAX_LINES`] lines, and no
//! import circle between the files of one crate.
//!
//! A file's module tree is followed from each library and binary target's root through its `mod`
//! declarations (also those an item-level macro call spells as `mod NAME`), test modules
//! (`#[cfg(test)]`) included, so a unit test's imports may not close a circle either; integration
//! tests and benches are no such target and are left out. Code in an inline module
//! (`mod tests { … }`) belongs to its file: a `super` that only leaves the inline module names the
//! file itself. A file named `*tests.rs` or under a `tests/` or `benches/` directory is exempt
//! from the line limit. File A depends on file B when A's code names an item B defines: by a private `use` or by a path
//! starting with `crate`, `super`, `self` or a child module, also inside a macro invocation
//! (whose tokens are scanned for such paths). A `pub` or `pub(…)` `use` is a facade, not a use: it
//! is no dependency of its own, and a path through it is followed to the file that defines the
//! item; but a name a facade binds that the file's own code also uses is a dependency of the
//! file on the item's file.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};

use serde_json::Value;
use syn::buffer::Cursor;
use syn::visit::Visit;

/// Longest production file, in lines.
const MAX_LINES: usize = 600;

/// How many re-exports a path is followed through before the search gives up.
const MAX_HOPS: usize = 8;

pub fn check(root: &Path) -> Result<(), String> {
    let metadata = crate::workspace::cargo_metadata(root)?;
    let problems = problems(root, &metadata);
    if problems.is_empty() {
        println!("house: no file over {MAX_LINES} lines, no import circle");
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

/// Every break of the house rules in the packages of `metadata` (`cargo metadata` output).
fn problems(root: &Path, metadata: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    for (name, roots) in targets(metadata) {
        let mut tree = Tree::default();
        for file in roots {
            tree.load(&file, Vec::new(), &mut problems);
        }
        for module in tree.modules.values() {
            if module.lines > MAX_LINES && !is_test_file(root, &module.file) {
                problems.push(format!(
                    "{}: {} lines (at most {MAX_LINES})",
                    shown(root, &module.file),
                    module.lines
                ));
            }
        }
        for circle in tree.circles() {
            let files: Vec<String> = circle
                .iter()
                .map(|path| shown(root, &tree.modules[path].file))
                .collect();
            problems.push(format!(
                "{name}: import circle between {}",
                files.join(", ")
            ));
        }
    }
    problems
}

/// A test file by its name or place, exempt from the line limit: `*tests.rs`, or under a `tests/`
/// or `benches/` directory of the workspace.
fn is_test_file(root: &Path, file: &Path) -> bool {
    let named = file
        .file_name()
        .is_some_and(|name| name.to_string_lossy().ends_with("tests.rs"));
    let placed = file
        .strip_prefix(root)
        .unwrap_or(file)
        .components()
        .any(|part| {
            part == Component::Normal("tests".as_ref())
                || part == Component::Normal("benches".as_ref())
        });
    named || placed
}

fn shown(root: &Path, file: &Path) -> String {
    file.strip_prefix(root)
        .unwrap_or(file)
        .display()
        .to_string()
}

/// Every workspace package, published or not: its name and the root files of its library and
/// binary targets.
fn targets(metadata: &Value) -> Vec<(String, Vec<PathBuf>)> {
    let mut packages = Vec::new();
    for package in metadata["packages"].as_array().into_iter().flatten() {
        let roots = package["targets"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|target| {
                target["kind"].as_array().is_some_and(|kinds| {
                    kinds
                        .iter()
                        .any(|kind| matches!(kind.as_str(), Some("lib" | "bin" | "proc-macro")))
                })
            })
            .filter_map(|target| target["src_path"].as_str().map(PathBuf::from))
            .collect();
        let name = package["name"].as_str().unwrap_or("?").to_owned();
        packages.push((name, roots));
    }
    packages
}

/// A module path inside one target: `[]` for the root, `["session", "gate"]`.
type ModPath = Vec<String>;

#[derive(Default)]
struct Module {
    file: PathBuf,
    lines: usize,
    /// Child modules declared in this file (file modules only).
    children: BTreeSet<String>,
    /// Items this file defines, by name.
    defines: BTreeSet<String>,
    /// `use` imports by the name they bind: the full path and whether it is a facade (`pub`).
    imports: BTreeMap<String, (Vec<String>, bool)>,
    /// Glob imports (`use a::*`).
    globs: Vec<Vec<String>>,
    /// Paths of more than one segment the file's own code names.
    uses: BTreeSet<Vec<String>>,
    /// Names the file's own code uses alone (one-segment paths): a facade's name among them is a
    /// use of the item it re-exports.
    names: BTreeSet<String>,
    /// How deep in inline modules (`mod m { … }`) the collector is while reading the file.
    inline_depth: usize,
}

impl Module {
    /// A path named inside inline modules as the file sees it: each `super` that only leaves an
    /// inline module stays in the file (`super::x` in `mod tests { … }` is `self::x`).
    fn in_file(&self, mut segments: Vec<String>) -> Vec<String> {
        let supers = segments.iter().take_while(|s| *s == "super").count();
        let inside = supers.min(self.inline_depth);
        if inside == supers && inside > 0 {
            segments.splice(..inside, ["self".to_owned()]);
        } else {
            segments.drain(..inside);
        }
        segments
    }

    /// Records a path the file's code names (without a leading `::`).
    fn record(&mut self, segments: Vec<String>) {
        let segments = self.in_file(segments);
        if segments.len() > 1 {
            self.uses.insert(segments);
        } else if let Some(name) = segments.into_iter().next() {
            self.names.insert(name);
        }
    }
}

#[derive(Default)]
struct Tree {
    modules: BTreeMap<ModPath, Module>,
}

impl Tree {
    fn load(&mut self, file: &Path, path: ModPath, problems: &mut Vec<String>) {
        let Ok(text) = std::fs::read_to_string(file) else {
            problems.push(format!("{}: cannot read", file.display()));
            return;
        };
        let syntax = match syn::parse_file(&text) {
            Ok(syntax) => syntax,
            Err(e) => {
                problems.push(format!("{}: cannot parse: {e}", file.display()));
                return;
            }
        };
        let mut module = Module {
            file: file.to_owned(),
            lines: text.lines().count(),
            ..Module::default()
        };
        let mut collector = Collector {
            module: &mut module,
        };
        let mut declared = Vec::new();
        for item in &syntax.items {
            match item {
                syn::Item::Mod(item_mod) if item_mod.content.is_none() => {
                    declared.push(item_mod.ident.to_string());
                }
                syn::Item::Macro(item_macro) => declared.extend(macro_modules(&item_macro.mac)),
                _ => {}
            }
            collector.visit_item(item);
        }
        let owns_dir = path.is_empty()
            || file
                .file_name()
                .is_some_and(|name| name == "mod.rs" || name == "lib.rs" || name == "main.rs");
        let dir = if owns_dir {
            file.parent().map(Path::to_owned)
        } else {
            file.parent()
                .map(|parent| parent.join(file.file_stem().unwrap_or_default()))
        }
        .unwrap_or_default();
        module.children = declared.iter().cloned().collect();
        self.modules.insert(path.clone(), module);
        for child in declared {
            let flat = dir.join(format!("{child}.rs"));
            let nested = dir.join(&child).join("mod.rs");
            let child_file = if flat.exists() { flat } else { nested };
            let mut child_path = path.clone();
            child_path.push(child);
            self.load(&child_file, child_path, problems);
        }
    }

    /// The file module a path names from `from`, and the item it names there, if any.
    fn resolve(&self, from: &ModPath, path: &[String], hops: usize) -> Option<ModPath> {
        let (mut at, rest) = match path.first().map(String::as_str) {
            Some("crate") => (Vec::new(), &path[1..]),
            Some("self") => (from.clone(), &path[1..]),
            Some("super") => {
                let mut at = from.clone();
                let mut rest = path;
                while rest.first().is_some_and(|s| s == "super") {
                    at.pop();
                    rest = &rest[1..];
                }
                (at, rest)
            }
            Some(first) if self.modules.get(from)?.children.contains(first) => (from.clone(), path),
            Some(first) => {
                // A name bound by a `use` of this file: resolve what it stands for.
                let (target, _) = self.modules.get(from)?.imports.get(first)?;
                if hops >= MAX_HOPS || target.first().is_some_and(|s| s == first) {
                    return None;
                }
                let mut full = target.clone();
                full.extend(path[1..].iter().cloned());
                return self.resolve(from, &full, hops + 1);
            }
            None => return None,
        };
        let mut rest = rest;
        while let Some(segment) = rest.first() {
            if !self.modules.get(&at)?.children.contains(segment) {
                break;
            }
            at.push(segment.clone());
            rest = &rest[1..];
        }
        let Some(name) = rest.first() else {
            return Some(at);
        };
        let module = self.modules.get(&at)?;
        if module.defines.contains(name) || hops >= MAX_HOPS {
            return Some(at);
        }
        if let Some((target, _)) = module.imports.get(name) {
            let mut full = target.clone();
            full.extend(rest[1..].iter().cloned());
            return self.resolve(&at, &full, hops + 1).or(Some(at));
        }
        for glob in &module.globs {
            let mut full = glob.clone();
            full.extend(rest.iter().cloned());
            if let Some(found) = self.resolve(&at, &full, hops + 1)
                && found != at
            {
                return Some(found);
            }
        }
        Some(at)
    }

    fn edges(&self) -> BTreeMap<&ModPath, BTreeSet<ModPath>> {
        let mut edges = BTreeMap::new();
        for (path, module) in &self.modules {
            let private = module
                .imports
                .values()
                .filter(|(_, facade)| !facade)
                .map(|(target, _)| target);
            // A re-exported name the file uses itself depends on the item's file.
            let re_exported_and_used =
                module
                    .names
                    .iter()
                    .filter_map(|name| match module.imports.get(name) {
                        Some((target, true)) => Some(target),
                        _ => None,
                    });
            let targets: BTreeSet<ModPath> = module
                .uses
                .iter()
                .chain(private)
                .chain(re_exported_and_used)
                .chain(module.globs.iter())
                .filter_map(|used| self.resolve(path, used, 0))
                .filter(|target| target != path && self.modules.contains_key(target))
                .collect();
            edges.insert(path, targets);
        }
        edges
    }

    /// The strongly connected groups of more than one file (Tarjan's algorithm).
    fn circles(&self) -> Vec<Vec<ModPath>> {
        struct State<'a> {
            edges: BTreeMap<&'a ModPath, BTreeSet<ModPath>>,
            index: BTreeMap<ModPath, usize>,
            low: BTreeMap<ModPath, usize>,
            stack: Vec<ModPath>,
            on_stack: BTreeSet<ModPath>,
            found: Vec<Vec<ModPath>>,
        }
        fn connect(state: &mut State<'_>, node: &ModPath) {
            let next = state.index.len();
            state.index.insert(node.clone(), next);
            state.low.insert(node.clone(), next);
            state.stack.push(node.clone());
            state.on_stack.insert(node.clone());
            let targets = state.edges.get(node).cloned().unwrap_or_default();
            for target in &targets {
                if !state.index.contains_key(target) {
                    connect(state, target);
                    let low = state.low[node].min(state.low[target]);
                    state.low.insert(node.clone(), low);
                } else if state.on_stack.contains(target) {
                    let low = state.low[node].min(state.index[target]);
                    state.low.insert(node.clone(), low);
                }
            }
            if state.low[node] == state.index[node] {
                let mut group = Vec::new();
                while let Some(top) = state.stack.pop() {
                    state.on_stack.remove(&top);
                    let done = &top == node;
                    group.push(top);
                    if done {
                        break;
                    }
                }
                if group.len() > 1 {
                    group.sort();
                    state.found.push(group);
                }
            }
        }
        let mut state = State {
            edges: self.edges(),
            index: BTreeMap::new(),
            low: BTreeMap::new(),
            stack: Vec::new(),
            on_stack: BTreeSet::new(),
            found: Vec::new(),
        };
        for node in self.modules.keys() {
            if !state.index.contains_key(node) {
                connect(&mut state, node);
            }
        }
        state.found
    }
}

/// The modules an item-level macro call declares: each `mod NAME` among its own tokens (the
/// form of a registry that declares its modules, like the cli's commands).
fn macro_modules(mac: &syn::Macro) -> Vec<String> {
    let mut found = Vec::new();
    // The parser consumes every token, so it cannot fail.
    let _ = mac.parse_body_with(|input: syn::parse::ParseStream<'_>| {
        input.step(|cursor| {
            let mut cursor = *cursor;
            while let Some((_, next)) = cursor.token_tree() {
                if let Some((word, after)) = cursor.ident()
                    && word == "mod"
                    && let Some((name, _)) = after.ident()
                {
                    found.push(name.to_string());
                }
                cursor = next;
            }
            Ok(((), cursor))
        })
    });
    found
}

struct Collector<'m> {
    module: &'m mut Module,
}

impl Collector<'_> {
    fn flatten(&mut self, tree: &syn::UseTree, prefix: &mut Vec<String>, facade: bool) {
        match tree {
            syn::UseTree::Path(path) => {
                prefix.push(path.ident.to_string());
                self.flatten(&path.tree, prefix, facade);
                prefix.pop();
            }
            syn::UseTree::Name(name) => {
                let mut full = prefix.clone();
                let bound = name.ident.to_string();
                if bound == "self" {
                    if let Some(last) = prefix.last() {
                        let full = self.module.in_file(full);
                        self.module.imports.insert(last.clone(), (full, facade));
                    }
                } else {
                    full.push(bound.clone());
                    let full = self.module.in_file(full);
                    self.module.imports.insert(bound, (full, facade));
                }
            }
            syn::UseTree::Rename(rename) => {
                let mut full = prefix.clone();
                if rename.ident != "self" {
                    full.push(rename.ident.to_string());
                }
                let full = self.module.in_file(full);
                self.module
                    .imports
                    .insert(rename.rename.to_string(), (full, facade));
            }
            syn::UseTree::Glob(_) => {
                let glob = self.module.in_file(prefix.clone());
                self.module.globs.push(glob);
            }
            syn::UseTree::Group(group) => {
                for tree in &group.items {
                    self.flatten(tree, prefix, facade);
                }
            }
        }
    }
}

impl<'ast> Visit<'ast> for Collector<'_> {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        let defined = match item {
            syn::Item::Const(i) => Some(&i.ident),
            syn::Item::Enum(i) => Some(&i.ident),
            syn::Item::Fn(i) => Some(&i.sig.ident),
            syn::Item::Mod(i) => Some(&i.ident),
            syn::Item::Static(i) => Some(&i.ident),
            syn::Item::Struct(i) => Some(&i.ident),
            syn::Item::Trait(i) => Some(&i.ident),
            syn::Item::Type(i) => Some(&i.ident),
            syn::Item::Union(i) => Some(&i.ident),
            syn::Item::Macro(i) => i.ident.as_ref(),
            _ => None,
        };
        if let Some(ident) = defined {
            self.module.defines.insert(ident.to_string());
        }
        if let syn::Item::Use(item_use) = item {
            let facade = !matches!(item_use.vis, syn::Visibility::Inherited);
            self.flatten(&item_use.tree, &mut Vec::new(), facade);
            return;
        }
        let inline = matches!(item, syn::Item::Mod(m) if m.content.is_some());
        self.module.inline_depth += usize::from(inline);
        syn::visit::visit_item(self, item);
        self.module.inline_depth -= usize::from(inline);
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        if path.leading_colon.is_none() {
            self.module
                .record(path.segments.iter().map(|s| s.ident.to_string()).collect());
        }
        syn::visit::visit_path(self, path);
    }

    /// A macro's tokens are no syntax tree: its paths are found by scanning them.
    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        let module = &mut *self.module;
        // The parser consumes every token, so it cannot fail.
        let _ = mac.parse_body_with(|input: syn::parse::ParseStream<'_>| {
            input.step(|cursor| Ok(((), scan_tokens(*cursor, module))))
        });
        syn::visit::visit_macro(self, mac);
    }
}

/// What comes just before a token: a path cannot start after `::` or `.`, nor after `$` unless
/// it is `$crate`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum After {
    Colons,
    Dot,
    Dollar,
    Other,
}

/// Records the paths among the tokens from `cursor` on (and inside every group), as
/// [`Collector::visit_path`] records those of parsed code; returns the cursor at the end.
fn scan_tokens<'c>(mut cursor: Cursor<'c>, module: &mut Module) -> Cursor<'c> {
    let mut after = After::Other;
    while !cursor.eof() {
        if let Some((inside, _, _, next)) = cursor.any_group() {
            scan_tokens(inside, module);
            cursor = next;
            after = After::Other;
        } else if let Some((_, next)) = cursor.lifetime() {
            cursor = next;
            after = After::Other;
        } else if let Some((ident, mut next)) = cursor.ident() {
            let mut segments = vec![ident.to_string()];
            while let Some((segment, rest)) = double_colon(next).and_then(Cursor::ident) {
                segments.push(segment.to_string());
                next = rest;
            }
            let starts = match after {
                After::Other => true,
                After::Dollar => segments[0] == "crate",
                After::Colons | After::Dot => false,
            };
            if starts {
                module.record(segments);
            }
            cursor = next;
            after = After::Other;
        } else if let Some(next) = double_colon(cursor) {
            cursor = next;
            after = After::Colons;
        } else if let Some((punct, next)) = cursor.punct() {
            after = match punct.as_char() {
                '$' => After::Dollar,
                '.' => After::Dot,
                _ => After::Other,
            };
            cursor = next;
        } else if let Some((_, next)) = cursor.token_tree() {
            cursor = next;
            after = After::Other;
        } else {
            break;
        }
    }
    cursor
}

/// The cursor after a `::` at `cursor`, if there is one.
fn double_colon(cursor: Cursor<'_>) -> Option<Cursor<'_>> {
    let (first, rest) = cursor.punct()?;
    let (second, rest) = rest.punct()?;
    (first.as_char() == ':' && second.as_char() == ':').then_some(rest)
}

#[cfg(test)]
mod tests;
