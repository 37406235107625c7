//! `agent-host plugin new --lang rust|python|typescript NAME`: the authoring guide's
//! `greeter`, named NAME, in a new folder that builds wherever it is. Its files are the
//! templates under `cli/templates/plugin/`; a Rust folder's `Cargo.toml` names the SDK
//! crate this binary carries (written out by `plugins::rust_sdk`), and its lock file and
//! toolchain are the ones the stock plugins are built with. Python and TypeScript folders
//! need nothing more: the host carries those SDKs into every build.

use std::path::{Path, PathBuf};

use super::Status;

#[derive(Debug, clap::Args)]
pub struct NewArgs {
    /// The plugin's language.
    #[arg(long, value_enum)]
    pub lang: Language,
    /// The folder to make; its last part is the plugin's name (lowercase letters, digits
    /// and `-`, starting with a letter).
    #[arg(value_name = "NAME")]
    pub name: PathBuf,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Language {
    Rust,
    Python,
    Typescript,
}

/// (path in the new folder, template). `{{name}}` is the plugin's name, `{{sdk}}` the Rust
/// SDK's folder.
const RUST: &[(&str, &str)] = &[
    ("Cargo.toml", include_str!("../templates/plugin/rust/Cargo.toml")),
    ("src/lib.rs", include_str!("../templates/plugin/rust/src/lib.rs")),
    ("Cargo.lock", include_str!("../../plugins/Cargo.lock")),
    ("rust-toolchain.toml", include_str!("../../rust-toolchain.toml")),
    (".gitignore", include_str!("../templates/plugin/rust/gitignore")),
];
const PYTHON: &[(&str, &str)] = &[
    ("pyproject.toml", include_str!("../templates/plugin/python/pyproject.toml")),
    ("plugin.py", include_str!("../templates/plugin/python/plugin.py")),
    (".gitignore", include_str!("../templates/plugin/python/gitignore")),
];
const TYPESCRIPT: &[(&str, &str)] = &[
    ("package.json", include_str!("../templates/plugin/typescript/package.json")),
    ("plugin.ts", include_str!("../templates/plugin/typescript/plugin.ts")),
    (".gitignore", include_str!("../templates/plugin/typescript/gitignore")),
];

pub fn run(args: &NewArgs) -> Status {
    match write(args) {
        Ok(name) => {
            println!("{}", next_steps(args, &name));
            Status::Done
        }
        Err((status, message)) => {
            eprintln!("error: {message}");
            status
        }
    }
}

fn write(args: &NewArgs) -> Result<String, (Status, String)> {
    let folder = &args.name;
    let name = plugin_name(folder).map_err(|message| (Status::BadInput, message))?;
    if folder.symlink_metadata().is_ok() {
        return Err((
            Status::BadInput,
            format!("{} exists; `plugin new` makes a new folder and never writes into one", folder.display()),
        ));
    }
    let (templates, sdk) = match args.lang {
        Language::Rust => {
            let sdk = agent_host::plugins::rust_sdk().map_err(|message| (Status::Failed, message))?;
            (RUST, sdk.display().to_string())
        }
        Language::Python => (PYTHON, String::new()),
        Language::Typescript => (TYPESCRIPT, String::new()),
    };
    let failed = |path: &Path, error: std::io::Error| {
        (Status::Failed, format!("cannot write {}: {error}", path.display()))
    };
    if let Some(parent) = folder.parent().filter(|parent| !parent.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|error| failed(parent, error))?;
    }
    // `create_dir`, not `_all`: a folder made meanwhile is refused, not written into.
    std::fs::create_dir(folder).map_err(|error| failed(folder, error))?;
    for (path, template) in templates {
        let file = folder.join(path);
        if let Some(parent) = file.parent() {
            std::fs::create_dir_all(parent).map_err(|error| failed(parent, error))?;
        }
        let text = template.replace("{{name}}", &name).replace("{{sdk}}", &sdk);
        std::fs::write(&file, text).map_err(|error| failed(&file, error))?;
    }
    Ok(name)
}

/// The plugin's name, the folder's last part: one that is at once a crate's, a Python
/// project's, an npm package's and a plugin's name.
fn plugin_name(folder: &Path) -> Result<String, String> {
    let name = folder.file_name().and_then(|name| name.to_str()).unwrap_or_default();
    let valid = name.starts_with(|c: char| c.is_ascii_lowercase())
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !name.ends_with('-');
    if valid {
        Ok(name.to_owned())
    } else {
        Err(format!(
            "`{}`: a plugin's name is lowercase letters, digits and `-`, starting with a letter (such as `greeter`)",
            folder.display()
        ))
    }
}

fn next_steps(args: &NewArgs, name: &str) -> String {
    let folder = args.name.display();
    let (language, source, build) = match args.lang {
        Language::Rust => ("Rust", "src/lib.rs", "cargo with the wasm32-wasip2 target"),
        Language::Python => ("Python", "plugin.py", "componentize-py, installed the first time"),
        Language::Typescript => {
            ("TypeScript", "plugin.ts", "tsc, esbuild and componentize-js, installed the first time")
        }
    };
    format!(
        "wrote {folder}/: `{name}`, a {language} plugin with one tool (greet), one setting (greeting) and one \
         command (/greetings), in {folder}/{source}.\n\
         \n\
         Load it: add to a deployment's config.toml (a path relative to that file)\n\
         \n    [[plugin]]\n    path = \"{folder}\"\n\n\
         The host builds the folder ({build}) at start and again whenever you save a change.\n\
         docs/plugin-authoring.md in agent-host's repository goes on from here."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_one_every_language_takes() {
        for good in ["greeter", "my-plugin2", "dir/greeter"] {
            assert!(plugin_name(Path::new(good)).is_ok(), "{good}");
        }
        for bad in ["Greeter", "my_plugin", "2fast", "trailing-", "", ".", "spa ce"] {
            assert!(plugin_name(Path::new(bad)).is_err(), "{bad}");
        }
    }

    /// The templates are the guide's `greeter` (docs/plugin-authoring.md), so the folder
    /// `plugin new` writes is the one the guide goes on from.
    #[test]
    fn the_templates_are_the_guides_greeter() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let guide = std::fs::read_to_string(root.join("docs/plugin-authoring.md")).unwrap();
        for (file, template) in [
            ("greeter/src/lib.rs", RUST[1].1),
            ("greeter-py/plugin.py", PYTHON[1].1),
            ("greeter-ts/plugin.ts", TYPESCRIPT[1].1),
        ] {
            let start = guide.find(&format!(" file={file}\n")).unwrap() + file.len() + 7;
            let block = &guide[start..start + guide[start..].find("```").unwrap()];
            assert_eq!(template.replace("{{name}}", "greeter"), block, "{file}");
        }
    }

    #[test]
    fn an_existing_folder_is_refused_and_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("greeter");
        std::fs::create_dir(&folder).unwrap();
        let (status, message) = write(&NewArgs { lang: Language::Python, name: folder.clone() }).unwrap_err();
        assert_eq!(status, Status::BadInput);
        assert!(message.contains("exists"), "{message}");
        assert_eq!(std::fs::read_dir(&folder).unwrap().count(), 0);
    }
}
