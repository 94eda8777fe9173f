//! The environment's layer: the `CHECKPOINT_*` variables the settings table names, aliases
//! included. Other variables are ignored.

use super::error::ConfigError;
use super::layer::{Assignment, Layer};
use super::settings::KEYS;

/// Parses the variables of `env` (in order; a later duplicate wins) into a layer that remembers
/// which variable set each key. When a key's variable and its alias are both set, the variable
/// wins; an error names the variable actually set.
pub(crate) fn env_layer(env: &[(String, String)]) -> Result<Layer<String>, ConfigError> {
    let mut found = Vec::new();
    for (var, value) in env {
        let named = KEYS.iter().enumerate().find_map(|(key, row)| {
            let canonical = row.env == var;
            (canonical || row.aliases.contains(&var.as_str())).then_some((key, canonical))
        });
        let Some((key, canonical)) = named else {
            continue;
        };
        let write = KEYS[key]
            .slot
            .parse_text(value)
            .map_err(|message| ConfigError::Env {
                var: var.clone(),
                message,
            })?;
        let place = var.clone();
        found.push((canonical, Assignment { key, place, write }));
    }
    // Aliases are applied first, so that a canonical variable overrides them.
    found.sort_by_key(|&(canonical, _)| canonical);
    Ok(Layer(found.into_iter().map(|(_, set)| set).collect()))
}
