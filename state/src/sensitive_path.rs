//! The text form of a path to a sensitive value inside a resource's attributes, as the
//! state file's `sensitive` maps key it: steps joined by `.` (`task.0.token`), with a `.` or
//! a `\` inside a step escaped by a `\` (`spark_conf.spark\.password`), so a map key holding
//! a dot is one step, not two. A path without either character reads as it always has.
//! A step made of digits indexes a list, or names a map entry where the value is a map.

/// The text form of `steps`.
pub fn join<S: AsRef<str>>(steps: impl IntoIterator<Item = S>) -> String {
    let mut out = String::new();
    for (i, step) in steps.into_iter().enumerate() {
        if i > 0 {
            out.push('.');
        }
        for c in step.as_ref().chars() {
            if matches!(c, '.' | '\\') {
                out.push('\\');
            }
            out.push(c);
        }
    }
    out
}

/// The steps of a path in its text form. A `\` at the very end stands for itself.
pub fn split(text: &str) -> Vec<String> {
    let (mut steps, mut step) = (Vec::new(), String::new());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => step.push(chars.next().unwrap_or('\\')),
            '.' => steps.push(std::mem::take(&mut step)),
            c => step.push(c),
        }
    }
    steps.push(step);
    steps
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn plain_paths_keep_their_old_form() {
        assert_eq!(join(["task", "0", "token"]), "task.0.token");
        assert_eq!(split("options.password"), ["options", "password"]);
    }

    #[test]
    fn a_key_with_a_dot_is_one_step() {
        let text = join(["spark_conf", "spark.password"]);
        assert_eq!(text, r"spark_conf.spark\.password");
        assert_eq!(split(&text), ["spark_conf", "spark.password"]);
    }

    proptest! {
        #[test]
        fn split_undoes_join(steps in proptest::collection::vec("[a-z0-9._\\\\]{0,6}", 1..5)) {
            prop_assert_eq!(split(&join(&steps)), steps);
        }
    }
}
