use crate::catalog::{Catalog, Skill};
use crate::config::Origin;
use crate::prompt::catalog_text;

fn catalog(skills: &[(&str, &str)]) -> Catalog {
    Catalog {
        skills: skills
            .iter()
            .map(|(name, description)| Skill {
                name: (*name).to_owned(),
                description: (*description).to_owned(),
                dir: format!("/user-skills/{name}"),
                origin: Origin::User,
            })
            .collect(),
        ..Catalog::default()
    }
}

#[test]
fn the_catalog_lists_each_skill_on_one_line_after_how_to_load_one() {
    let text =
        catalog_text(&catalog(&[("pdf", "Reads PDFs.\nUse for forms."), ("review", "Reviews code.")]), 8192)
            .unwrap();
    assert!(text.starts_with("## Skills\n\nSkills are instructions for particular tasks."), "{text}");
    assert!(text.contains("call `load_skill` with its name"), "{text}");
    assert!(text.ends_with("\n- `pdf`: Reads PDFs. Use for forms.\n- `review`: Reviews code.\n"), "{text}");
}

#[test]
fn past_its_budget_the_catalog_names_the_rest_only() {
    let long = "d".repeat(200);
    let skills: Vec<(String, &str)> = (0..10).map(|i| (format!("skill-{i}"), long.as_str())).collect();
    let skills: Vec<(&str, &str)> = skills.iter().map(|(n, d)| (n.as_str(), *d)).collect();
    let text = catalog_text(&catalog(&skills), 1024).unwrap();
    assert!(text.contains("- `skill-2`: ddd"), "{text}");
    assert!(!text.contains("- `skill-3`"), "{text}");
    assert!(
        text.ends_with("More skills, by name only (load one to read it): `skill-3`, `skill-4`, `skill-5`, `skill-6`, `skill-7`, `skill-8`, `skill-9`\n"),
        "{text}"
    );
    assert!(text.len() < 1024 + 200, "{}", text.len());
}

#[test]
fn no_skills_no_instructions() {
    assert_eq!(catalog_text(&Catalog::default(), 8192), None);
}
