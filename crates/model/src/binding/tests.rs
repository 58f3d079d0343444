use super::*;
use serde_json::json;

#[test]
fn classifies_values() {
    assert!(matches!(
        Binding::parse_sep(&json!("$response.body#/id")),
        Ok(Binding::Expression(_))
    ));
    assert!(matches!(
        Binding::parse_sep(&json!("order-{$request.body#/id}")),
        Ok(Binding::Template(_))
    ));
    for constant in [
        json!("plain"),
        json!("{not $ an expression}"),
        json!(5),
        json!(null),
    ] {
        assert_eq!(
            Binding::parse_sep(&constant),
            Ok(Binding::Constant(constant.clone()))
        );
    }
}

#[test]
fn template_round_trips_and_reports_offsets() {
    let text = "{$request.body#/a}-x-{$response.body#/b}{";
    let template = Template::parse(text).unwrap();
    assert_eq!(template.parts.len(), 4);
    assert_eq!(template.to_string(), text);
    assert_eq!(
        Template::parse("ab{$response.bdy}").unwrap_err().offset(),
        Some(13)
    );
    assert_eq!(
        Template::parse("ab{$response.body").unwrap_err(),
        BindingError::UnclosedTemplate { offset: 2 }
    );
}

#[test]
fn map_bindings_parse_build_and_round_trip() {
    let raw = json!({"$map": "$response.body#/results", "$each": {
        "entityName": "$item#/entityName",
        "observations": "$item#/added",
        "nested": {"whole": "$item", "fixed": 1.50}
    }});
    let Ok(Binding::Map(map)) = Binding::parse_overlay(&raw) else {
        panic!("not a map binding");
    };
    assert_eq!(map.to_value(), raw);
    let mut items: Vec<(Vec<&str>, String)> = map
        .each
        .items()
        .into_iter()
        .map(|(path, pointer)| (path, pointer.to_string()))
        .collect();
    items.sort();
    assert_eq!(
        items,
        [
            (vec!["entityName"], "/entityName".to_owned()),
            (vec!["nested", "whole"], String::new()),
            (vec!["observations"], "/added".to_owned()),
        ]
    );
    let element = json!({"entityName": "ada", "added": ["x"]});
    assert_eq!(
        map.each.build(&element),
        Ok(json!({"entityName": "ada", "observations": ["x"],
                  "nested": {"whole": element.clone(), "fixed": 1.50}}))
    );
    let missing = json!({"entityName": "ada"});
    assert_eq!(
        map.each.build(&missing).map_err(ToString::to_string),
        Err("/added".to_owned())
    );
    // Where a server declares the same object, it is a constant.
    assert_eq!(Binding::parse_sep(&raw), Ok(Binding::Constant(raw.clone())));
    // Nesting is bounded.
    let mut deep = json!("$item");
    for _ in 0..40 {
        deep = json!({ "a": deep });
    }
    let error = Binding::parse_overlay(&json!({"$map": "$request.body", "$each": deep}));
    assert!(
        matches!(&error, Err(BindingError::Map { message, .. }) if message.contains("nest")),
        "{error:?}"
    );
}

#[test]
fn compensate_values_must_be_paths() {
    assert_eq!(
        Binding::parse_compensate(&json!("$.input.id"))
            .unwrap()
            .to_value(),
        json!("$request.body#/id")
    );
    assert_eq!(
        Binding::parse_compensate(&json!(3)),
        Err(BindingError::NotAPath { found: "integer" })
    );
}
