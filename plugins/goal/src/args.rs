//! What `/goal` is given: a subcommand, or an objective with optional budgets.

/// One `/goal` line, parsed.
#[derive(Debug, PartialEq, Eq)]
pub enum GoalCommand {
    /// `/goal`: where the goal stands.
    Show,
    Pause,
    Resume,
    Clear,
    /// `/goal [--tokens N] [--time 30m] OBJECTIVE`.
    Set {
        objective: String,
        tokens: Option<u64>,
        secs: Option<u64>,
    },
}

pub const USAGE: &str = "/goal [--tokens N] [--time 30m] OBJECTIVE | pause | resume | clear";

pub fn parse(args: &str) -> Result<GoalCommand, String> {
    match args.trim() {
        "" => return Ok(GoalCommand::Show),
        "pause" => return Ok(GoalCommand::Pause),
        "resume" => return Ok(GoalCommand::Resume),
        "clear" => return Ok(GoalCommand::Clear),
        _ => {}
    }
    let (mut tokens, mut secs) = (None, None);
    let mut words = args.split_whitespace().peekable();
    while let Some(flag) = words.peek().copied().filter(|word| word.starts_with("--")) {
        words.next();
        let value = words.next().ok_or_else(|| format!("`{flag}` needs a value; usage: {USAGE}"))?;
        match flag {
            "--tokens" => tokens = Some(token_count(value)?),
            "--time" => secs = Some(duration_secs(value)?),
            other => return Err(format!("unknown option `{other}`; usage: {USAGE}")),
        }
    }
    let objective = words.collect::<Vec<_>>().join(" ");
    if objective.is_empty() {
        return Err(format!("the goal has no objective; usage: {USAGE}"));
    }
    Ok(GoalCommand::Set { objective, tokens, secs })
}

/// `50000`, `50k` or `2m` tokens.
fn token_count(text: &str) -> Result<u64, String> {
    let (digits, factor) = match text.to_ascii_lowercase() {
        t if t.ends_with('k') => (t[..t.len() - 1].to_owned(), 1_000),
        t if t.ends_with('m') => (t[..t.len() - 1].to_owned(), 1_000_000),
        t => (t, 1),
    };
    match digits.replace([',', '_'], "").parse::<u64>() {
        Ok(n) if n > 0 => Ok(n * factor),
        _ => Err(format!("`--tokens {text}` is not a token count (50000, 50k, 2m)")),
    }
}

/// `90s`, `30m`, `2h` or plain seconds.
fn duration_secs(text: &str) -> Result<u64, String> {
    let split = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (digits, unit) = text.split_at(split);
    let factor = match unit {
        "" | "s" => 1,
        "m" => 60,
        "h" => 3600,
        _ => return Err(format!("`--time {text}` is not a duration (90s, 30m, 2h)")),
    };
    match digits.parse::<u64>() {
        Ok(n) if n > 0 => Ok(n * factor),
        _ => Err(format!("`--time {text}` is not a duration (90s, 30m, 2h)")),
    }
}
