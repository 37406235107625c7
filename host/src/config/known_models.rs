//! The context window and output limit of the models the host knows by name: the defaults
//! of `[model] context_window` and `max_output_tokens` (README, "`[model]` limits").
//!
//! A name is matched by its prefix after any `vendor/` path (`openai/gpt-4o`,
//! `Qwen/Qwen3-8B`) and a `meta-` in front of Llama's, ignoring case; the table lists the more
//! specific prefix first (`gpt-4o-mini` is a `gpt-4o`, `o1-mini` is not an `o1`). For open models the window is the one the
//! model was trained for; a server may run it with a smaller one (llama.cpp's `--ctx-size`),
//! and then `context_window` must say so. Their output limit is a reply budget, not what the
//! model could write: the model could fill its whole window.

/// What one family of models can take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KnownModel {
    /// The prefix the name matched, for messages: `gpt-4o`, `claude-sonnet-4`.
    pub family: &'static str,
    /// Tokens of prompt and reply together.
    pub context_window: u32,
    /// The most tokens one reply may have.
    pub max_output_tokens: u32,
}

/// (name prefix, context window, max output tokens), the more specific prefix first.
const KNOWN: &[(&str, u32, u32)] = &[
    // OpenAI.
    ("gpt-5-chat", 128_000, 16_384),
    ("gpt-5", 400_000, 128_000),
    ("gpt-4.1", 1_047_576, 32_768),
    ("gpt-4o", 128_000, 16_384),
    ("chatgpt-4o", 128_000, 16_384),
    ("gpt-4-turbo", 128_000, 4_096),
    ("o1-mini", 128_000, 65_536),
    ("o1-preview", 128_000, 32_768),
    ("o1", 200_000, 100_000),
    ("o3", 200_000, 100_000),
    ("o4-mini", 200_000, 100_000),
    // Anthropic.
    ("claude-opus-4-5", 200_000, 64_000),
    ("claude-opus-4", 200_000, 32_000),
    ("claude-sonnet-4", 200_000, 64_000),
    ("claude-haiku-4", 200_000, 64_000),
    ("claude-3-7-sonnet", 200_000, 64_000),
    ("claude-3-5-sonnet", 200_000, 8_192),
    ("claude-3-5-haiku", 200_000, 8_192),
    // Open models, as local servers run them.
    ("gpt-oss", 131_072, 8_192),
    ("qwen3-coder", 262_144, 8_192),
    ("qwen3", 40_960, 8_192),
    ("qwen2.5", 32_768, 8_192),
    ("llama-3.1", 131_072, 8_192),
    ("llama-3.2", 131_072, 8_192),
    ("llama-3.3", 131_072, 8_192),
    ("llama3.1", 131_072, 8_192),
    ("llama3.2", 131_072, 8_192),
    ("llama3.3", 131_072, 8_192),
    ("llama-3", 8_192, 4_096),
    ("llama3", 8_192, 4_096),
    ("mistral-small", 131_072, 8_192),
    ("mistral-medium", 131_072, 8_192),
    ("mistral-large", 131_072, 8_192),
    ("mistral-nemo", 131_072, 8_192),
    ("mistral", 32_768, 8_192),
];

/// The family `model` belongs to, if the host knows it.
pub fn known_model(model: &str) -> Option<KnownModel> {
    let name = model.rsplit('/').next().unwrap_or(model).to_ascii_lowercase();
    let name = name.strip_prefix("meta-").unwrap_or(&name);
    KNOWN.iter().find(|(prefix, _, _)| name.starts_with(prefix)).map(
        |&(family, context_window, max_output_tokens)| KnownModel {
            family,
            context_window,
            max_output_tokens,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(model: &str) -> Option<(&'static str, u32)> {
        known_model(model).map(|known| (known.family, known.context_window))
    }

    #[test]
    fn names_as_endpoints_spell_them_find_their_family() {
        assert_eq!(window("gpt-4o-mini-2024-07-18"), Some(("gpt-4o", 128_000)));
        assert_eq!(window("gpt-4.1-nano"), Some(("gpt-4.1", 1_047_576)));
        assert_eq!(window("gpt-5-mini"), Some(("gpt-5", 400_000)));
        assert_eq!(window("gpt-5-chat-latest"), Some(("gpt-5-chat", 128_000)));
        assert_eq!(window("o3-mini"), Some(("o3", 200_000)));
        assert_eq!(window("o1-mini"), Some(("o1-mini", 128_000)));
        assert_eq!(window("openai/gpt-4o"), Some(("gpt-4o", 128_000)), "a router's vendor path");
        assert_eq!(window("claude-sonnet-4-5-20250929"), Some(("claude-sonnet-4", 200_000)));
        assert_eq!(window("claude-3-5-haiku-latest"), Some(("claude-3-5-haiku", 200_000)));
        assert_eq!(window("Qwen/Qwen3-8B"), Some(("qwen3", 40_960)));
        assert_eq!(window("qwen3-coder:30b"), Some(("qwen3-coder", 262_144)));
        assert_eq!(window("meta-llama/Llama-3.1-8B-Instruct"), Some(("llama-3.1", 131_072)));
        assert_eq!(window("Meta-Llama-3-8B-Instruct"), Some(("llama-3", 8_192)));
        assert_eq!(window("llama3.2:3b"), Some(("llama3.2", 131_072)));
        assert_eq!(window("mistral-small-3.2-24b-instruct-2506"), Some(("mistral-small", 131_072)));
    }

    #[test]
    fn a_more_specific_family_is_not_taken_for_a_shorter_prefix() {
        assert_eq!(known_model("gpt-4-turbo-2024-04-09").map(|k| k.family), Some("gpt-4-turbo"));
        assert_eq!(known_model("gpt-4.1-mini").map(|k| k.family), Some("gpt-4.1"));
        assert_eq!(known_model("gpt-4o").map(|k| k.family), Some("gpt-4o"));
        assert_eq!(known_model("claude-opus-4-1").map(|k| k.max_output_tokens), Some(32_000));
        assert_eq!(known_model("claude-opus-4-5").map(|k| k.max_output_tokens), Some(64_000));
    }

    #[test]
    fn an_unknown_name_has_no_defaults() {
        for name in ["fake", "my-finetune", "", "deepseek-chat", "4o"] {
            assert_eq!(known_model(name), None, "{name}");
        }
    }

    #[test]
    fn every_family_leaves_room_for_a_prompt() {
        for &(family, window, output) in KNOWN {
            assert!(output < window, "{family}: output {output} of window {window}");
        }
    }
}
