use agent_host_sdk::testing::Harness;
use serde_json::json;

use crate::config::Config;

fn refused(config: serde_json::Value) -> String {
    Harness::new(crate::plugin(), config).err().expect("the config is refused")
}

#[test]
fn the_defaults_read_nothing_and_need_nothing_of_the_host() {
    let plugin = Harness::new(crate::plugin(), json!({})).unwrap();
    assert!(plugin.requires().is_empty());
    assert!(plugin.declared().is_empty(), "no tools");
    assert_eq!(
        plugin.config(),
        json!({"workspace": "/workspace", "trust_project": false, "max_kb": 32, "max_depth": 8})
    );
    assert_eq!(serde_json::to_value(Config::default()).unwrap(), plugin.config());
}

#[test]
fn the_workspace_is_spelt_once_and_a_bad_setting_is_refused_naming_it() {
    let plugin = Harness::new(crate::plugin(), json!({"workspace": " /work//project/./ "})).unwrap();
    assert_eq!(plugin.config()["workspace"], "/work/project");
    let cases = [
        (json!({"workspace": "project"}), "`workspace`: `project` is not an absolute path"),
        (json!({"workspace": "/work/../etc"}), "`workspace`: `/work/../etc` contains `..`"),
        (json!({"workspace": "//"}), "`workspace`: `/` is the whole sandbox"),
        (json!({"max_kb": 0}), "`max_kb` is 0; it must be from 1 to 1024"),
        (json!({"max_kb": 2048}), "`max_kb` is 2048; it must be from 1 to 1024"),
        (json!({"max_depth": -1}), "`max_depth`: invalid value"),
        (json!({"trust_project": "yes"}), "`trust_project`: invalid type"),
        (json!({"trusted": true}), "`trusted`: unknown field `trusted`"),
    ];
    for (config, error) in cases {
        let refusal = refused(config.clone());
        assert!(refusal.starts_with(error), "{config}: {refusal}");
    }
}
