//! Tests of the house checker.

use super::*;

fn tree(files: &[(&str, &str)]) -> (tempfile::TempDir, Tree) {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let mut tree = Tree::default();
    let mut problems = Vec::new();
    tree.load(&dir.path().join("lib.rs"), Vec::new(), &mut problems);
    assert!(problems.is_empty(), "{problems:?}");
    (dir, tree)
}

fn names(circles: Vec<Vec<ModPath>>) -> Vec<Vec<String>> {
    circles
        .into_iter()
        .map(|group| group.into_iter().map(|path| path.join("::")).collect())
        .collect()
}

#[test]
fn finds_a_circle_through_use_and_through_paths() {
    let (_dir, tree) = tree(&[
        ("lib.rs", "mod a; mod b; mod c;"),
        ("a.rs", "use crate::b::B; pub struct A;"),
        ("b.rs", "pub struct B; fn f() { crate::c::g(); }"),
        ("c.rs", "pub fn g() { let _ = super::a::A; }"),
    ]);
    assert_eq!(names(tree.circles()), [["a", "b", "c"]]);
}

#[test]
fn a_facade_makes_no_circle_and_test_modules_are_read() {
    let (_dir, tree) = tree(&[
        (
            "lib.rs",
            "mod a; mod b; pub use a::A; pub use b::B; #[cfg(test)] mod tests;",
        ),
        ("a.rs", "pub struct A;"),
        (
            "b.rs",
            "use crate::A; pub struct B(A); #[cfg(test)] mod tests { use super::*; use crate::b::B; }",
        ),
        ("tests.rs", "use crate::b::B;"),
    ]);
    assert!(tree.circles().is_empty());
    assert_eq!(tree.modules.len(), 4);
}

#[test]
fn a_test_module_that_closes_a_circle_is_reported() {
    let (_dir, tree) = tree(&[
        ("lib.rs", "mod a; mod b;"),
        ("a.rs", "pub fn f() { crate::b::g(); }"),
        (
            "b.rs",
            "pub fn g() {} #[cfg(test)] mod tests { #[test] fn t() { super::super::a::f(); } }",
        ),
    ]);
    assert_eq!(names(tree.circles()), [["a", "b"]]);
}

#[test]
fn super_inside_an_inline_module_names_its_own_file() {
    let (_dir, tree) = tree(&[
        ("lib.rs", "mod a; pub struct Root; fn run() { a::go(); }"),
        (
            "a.rs",
            "pub struct Root; pub fn go() {} mod inner { use super::*; fn f() -> super::Root { Root } }",
        ),
    ]);
    assert!(tree.circles().is_empty());
}

#[test]
fn an_item_of_the_root_used_by_a_child_it_uses_is_a_circle() {
    let (_dir, tree) = tree(&[
        (
            "lib.rs",
            "mod a; pub struct Settings; fn run() { a::go(); }",
        ),
        ("a.rs", "use crate::Settings; pub fn go() {}"),
    ]);
    assert_eq!(names(tree.circles()), [["", "a"]]);
}

#[test]
fn nested_modules_resolve_to_their_files() {
    let (_dir, tree) = tree(&[
        ("lib.rs", "mod a; mod b;"),
        ("a.rs", "mod inner; pub use inner::X;"),
        ("a/inner.rs", "use crate::b::{self, Y}; pub struct X(b::Y);"),
        ("b.rs", "use crate::a::X; pub struct Y;"),
    ]);
    assert_eq!(names(tree.circles()), [["a::inner", "b"]]);
}

#[test]
fn paths_inside_macros_are_dependencies() {
    // `crate::` inside `format!`: the brief's own case.
    let (_dir, found) = tree(&[
        ("lib.rs", "mod a; mod b;"),
        (
            "a.rs",
            "pub struct A; pub fn f() -> String { format!(\"{}\", crate::b::g()) }",
        ),
        ("b.rs", "use crate::a::A; pub fn g() -> u8 { 0 }"),
    ]);
    assert_eq!(names(found.circles()), [["a", "b"]]);

    // `super::` nested in a group of an item-level macro, a child module's path in `vec!`, and
    // `$crate` in a `macro_rules!` body.
    let (_dir, found) = tree(&[
        ("lib.rs", "mod a; mod b; mod c; pub struct Root;"),
        (
            "a.rs",
            "thread_local! { static X: u8 = { super::b::G }; } pub struct A;",
        ),
        (
            "b.rs",
            "mod inner; pub const G: u8 = 0; fn f() { let _ = vec![inner::h(); 2]; }",
        ),
        (
            "b/inner.rs",
            "pub fn h() -> u8 { assert!(crate::c::C > 0); 1 }",
        ),
        (
            "c.rs",
            "pub const C: u8 = 1; macro_rules! m { () => { $crate::a::A }; }",
        ),
    ]);
    assert_eq!(names(found.circles()), [["a", "b", "b::inner", "c"]]);
}

#[test]
fn a_macro_token_after_colons_a_dot_or_a_dollar_starts_no_path() {
    let (_dir, found) = tree(&[
        ("lib.rs", "mod a; mod b;"),
        (
            "a.rs",
            "pub struct A; macro_rules! m { ($b:ident) => { $b::f() }; } \
             fn f(x: u8) { println!(\"{}\", x.b::<u8>()); let _ = vec![::b::f()]; }",
        ),
        ("b.rs", "use crate::a::A; pub fn f() {}"),
    ]);
    assert!(found.circles().is_empty());
}

#[test]
fn a_re_exported_name_the_file_uses_itself_is_a_dependency() {
    // The `corpus` shape: the root re-exports a child's function and calls it; the child uses an
    // item of the root.
    let (_dir, found) = tree(&[
        (
            "lib.rs",
            "mod generate; pub use generate::generate; pub struct Config; \
             fn run() { generate(&Config); }",
        ),
        (
            "generate.rs",
            "use super::Config; pub fn generate(_: &Config) {}",
        ),
    ]);
    assert_eq!(names(found.circles()), [["", "generate"]]);

    // The same through a macro, and through a type.
    let (_dir, found) = tree(&[
        (
            "lib.rs",
            "mod a; mod b; pub use a::go; pub use b::B; pub struct S; \
             fn run() { println!(\"{}\", go()); } fn f(_: B) {}",
        ),
        ("a.rs", "use crate::S; pub fn go() -> u8 { 0 }"),
        ("b.rs", "pub struct B(pub crate::S);"),
    ]);
    assert_eq!(names(found.circles()), [["", "a", "b"]]);

    // A facade whose name the file does not use stays no dependency.
    let (_dir, found) = tree(&[
        (
            "lib.rs",
            "mod a; pub use a::go; pub struct S; fn run(x: u8) { x.go(); }",
        ),
        ("a.rs", "use crate::S; pub fn go() {}"),
    ]);
    assert!(found.circles().is_empty());
}

#[test]
fn the_line_limit_holds_in_unpublished_packages_too() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("tool/src");
    std::fs::create_dir_all(src.join("tests")).unwrap();
    let lines = |n: usize| "// x\n".repeat(n);
    let files = [
        (
            "main.rs",
            format!(
                "mod fits; mod long; mod long_tests;\n#[cfg(test)]\nmod tests;\n{}",
                lines(597)
            ),
        ),
        ("fits.rs", lines(600)),
        ("long.rs", lines(601)),
        ("long_tests.rs", lines(700)),
        ("tests.rs", lines(700)),
    ];
    for (name, text) in files {
        std::fs::write(src.join(name), text).unwrap();
    }
    let metadata = serde_json::json!({"packages": [{
        "name": "tool",
        "publish": [],
        "targets": [
            {"kind": ["bin"], "src_path": src.join("main.rs")},
            {"kind": ["test"], "src_path": dir.path().join("tool/tests/all.rs")}
        ]
    }]});
    let found = problems(dir.path(), &metadata);
    assert_eq!(found, ["tool/src/long.rs: 601 lines (at most 600)"]);
}

#[test]
fn modules_a_macro_call_declares_are_read() {
    let (_dir, tree) = tree(&[
        (
            "lib.rs",
            "registry! { A => mod a, B => mod b if feature = \"x\", } pub struct S; fn g() { b::h(); }",
        ),
        ("a.rs", "pub fn f() {}"),
        ("b.rs", "use crate::S; pub fn h() {}"),
    ]);
    assert_eq!(tree.modules.len(), 3);
    assert_eq!(names(tree.circles()), [["", "b"]]);
}
