use super::*;

#[test]
fn patterns_lose_the_characters_jsdoc_reads() {
    assert_eq!(
        jsdoc_pattern("^[a`@/]\\`\\/$"),
        "^[a\\x60\\x40\\x2F]\\x60\\x2F$"
    );
    assert_eq!(jsdoc_pattern("a*/b"), "a*\\x2Fb");
    assert_eq!(jsdoc_pattern("\\\\`"), "\\\\\\x60");
    let regex = regex::Regex::new(&jsdoc_pattern("^[`@/]+$")).unwrap_or_else(|e| panic!("{e}"));
    assert!(regex.is_match("`@/"));
}

#[test]
fn unions_split_at_top_level_bars() {
    assert_eq!(
        split_union(ANY_JSON),
        [
            "string",
            "number",
            "boolean",
            "null",
            "{ [key: string]: unknown }",
            "unknown[]"
        ]
    );
}

#[test]
fn descriptions_that_would_break_the_comment_are_refused() {
    for text in ["ends */ here", "mail me @ once"] {
        assert!(jsdoc("", Some(text), &[], &[], "/x").is_err(), "{text}");
    }
}

#[test]
fn unknown_keywords_are_refused() {
    let defs = Map::new();
    let schema = serde_json::json!({"type": "string", "minLength": 1});
    let failure = alias(&schema, "/p", &defs).err();
    assert_eq!(
        failure.map(|e| e.to_string()),
        Some("/p: the `minLength` keyword has no TypeScript form here".to_owned())
    );
}
