//! A frontmatter's fields: the YAML read as one mapping, and each field read as the type a
//! format asks of it, with errors a person can act on (`name` must be a string, not a list).

use yaml_rust2::yaml::Hash;
use yaml_rust2::{Yaml, YamlLoader};

/// The fields of one frontmatter.
#[derive(Debug, Clone, PartialEq)]
pub struct Fields {
    fields: Hash,
}

impl Fields {
    /// Reads `yaml`, the frontmatter of the file called `file` (for the error's line number:
    /// the frontmatter starts on the file's second line). An empty frontmatter has no fields.
    pub fn load(yaml: &str, file: &str) -> Result<Self, String> {
        let documents = YamlLoader::load_from_str(yaml).map_err(|error| {
            format!(
                "its frontmatter is not valid YAML: {} (line {} of {file})",
                error.info(),
                error.marker().line() + 1
            )
        })?;
        match documents.into_iter().next() {
            None | Some(Yaml::Null) => Ok(Self { fields: Hash::new() }),
            Some(Yaml::Hash(fields)) => Ok(Self { fields }),
            Some(_) => Err("its frontmatter is not a mapping of fields (`name: ...` lines)".to_owned()),
        }
    }

    /// The field `key`; none when it is missing or left empty (`key:`).
    pub fn get(&self, key: &str) -> Option<&Yaml> {
        self.fields.get(&Yaml::String(key.to_owned())).filter(|value| !matches!(value, Yaml::Null))
    }

    /// The names of the fields, in the order written; a key that is no string is left out.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.fields.keys().filter_map(Yaml::as_str)
    }

    /// The string field `key`, which must be there.
    pub fn required_string(&self, key: &str) -> Result<String, String> {
        self.optional_string(key)?.ok_or_else(|| format!("`{key}` is missing; it is required"))
    }

    /// The string field `key`, if there.
    pub fn optional_string(&self, key: &str) -> Result<Option<String>, String> {
        match self.get(key) {
            None => Ok(None),
            Some(Yaml::String(text)) => Ok(Some(text.clone())),
            Some(other) => Err(not_a_string(key, other)),
        }
    }

    /// The `true` or `false` field `key`, if there.
    pub fn optional_bool(&self, key: &str) -> Result<Option<bool>, String> {
        match self.get(key) {
            None => Ok(None),
            Some(Yaml::Boolean(value)) => Ok(Some(*value)),
            Some(other) => Err(format!("`{key}` must be true or false, not {}", kind(other))),
        }
    }

    /// The field `key`, a whole number from 1 to `u32::MAX`, if there.
    pub fn optional_count(&self, key: &str) -> Result<Option<u32>, String> {
        match self.get(key) {
            None => Ok(None),
            Some(Yaml::Integer(number)) => match u32::try_from(*number) {
                Ok(count) if count > 0 => Ok(Some(count)),
                _ => Err(format!("`{key}` must be a whole number from 1 to {}, not {number}", u32::MAX)),
            },
            Some(other) => Err(format!("`{key}` must be a whole number, not {}", kind(other))),
        }
    }
}

/// Why the field `field`, which is `value`, is not the string it must be.
pub fn not_a_string(field: &str, value: &Yaml) -> String {
    // A number or a boolean is a string once quoted; a list or a map is not.
    let hint = match value {
        Yaml::Real(_) | Yaml::Integer(_) | Yaml::Boolean(_) => " (put it in quotes)",
        _ => "",
    };
    format!("`{field}` must be a string, not {}{hint}", kind(value))
}

/// A YAML value's kind, as a person would say it.
pub fn kind(value: &Yaml) -> &'static str {
    match value {
        Yaml::Real(_) => "a number",
        Yaml::Integer(_) => "a whole number",
        Yaml::String(_) => "a string",
        Yaml::Boolean(_) => "true or false",
        Yaml::Array(_) => "a list",
        Yaml::Hash(_) => "a map",
        Yaml::Alias(_) => "an alias",
        Yaml::Null => "empty",
        Yaml::BadValue => "unreadable",
    }
}
