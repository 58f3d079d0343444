//! The help texts against the arguments they describe.

use clap::CommandFactory;

use crate::args::Cli;

/// The flags a help text spells out (`--key FILE`, `--stdio -- CMD`), `--` itself left out.
fn flags_in(text: &str) -> Vec<String> {
    let mut flags = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("--") {
        let after = &rest[at + 2..];
        let name: String = after
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
            .collect();
        let starts_word = at == 0 || !rest[..at].ends_with(|c: char| c.is_alphanumeric());
        if starts_word && !name.is_empty() {
            flags.push(name.clone());
        }
        rest = &after[name.len()..];
    }
    flags
}

/// A summary that shows how to call a command (as the top-level help lists them) names only
/// flags that command has: it cannot drift from the command's own usage line.
#[test]
fn summaries_name_only_flags_their_command_has() {
    let mut root = Cli::command();
    root.build();
    let global: Vec<String> = root
        .get_arguments()
        .filter_map(|a| a.get_long().map(str::to_owned))
        .chain(["help".to_owned(), "version".to_owned()])
        .collect();
    // `help` mirrors every command without its arguments.
    let children = |command: &clap::Command| -> Vec<clap::Command> {
        command
            .get_subcommands()
            .filter(|c| c.get_name() != "help")
            .cloned()
            .collect()
    };
    let mut commands = children(&root);
    while let Some(command) = commands.pop() {
        commands.extend(children(&command));
        let own: Vec<&str> = command
            .get_arguments()
            .filter_map(|a| a.get_long())
            .collect();
        let texts = [command.get_about(), command.get_long_about()];
        for text in texts.into_iter().flatten() {
            let text = text.to_string();
            // A usage line is clap's to write, from the arguments themselves.
            assert!(
                !text.contains("[OPTIONS]") && !text.contains(&format!("`{} ", command.get_name())),
                "`{}` spells out a usage line of its own: {text}",
                command.get_name()
            );
            for flag in flags_in(&text) {
                assert!(
                    own.contains(&flag.as_str()) || global.contains(&flag),
                    "`{}` names --{flag}, which it does not have",
                    command.get_name()
                );
            }
        }
    }
    assert_eq!(flags_in("a --key FILE -- CMD x--y"), ["key"]);
}
