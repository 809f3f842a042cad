//! The story every template goes through, whatever its CI: a request (GitHub's pull request,
//! GitLab's merge request) planned and commented on; pushed to, the comment updated; merged
//! and applied; the apply run again, a plan of another configuration and a merge with no
//! plan, all refused.

use crate::DB_PASSWORD;
use crate::forge::Hub;
use crate::outcome::{Jobs, Outcome, assert_ran, assert_refused};
use crate::project::version;
use crate::world::World;
use serde_json::{Value, json};

/// What starts the comment holding the plan of `prod` of infra/.
const MARKER: &str = "<!-- brickform-plan:infra:prod -->";
/// The unrelated comments (notes) a request has before the first plan: more than a page.
const CHATTER: usize = 120;

/// A CI, as the story needs it: the events it plays and what tells its templates apart.
pub trait Ci {
    /// What a request is called there: "pull request", "merge request".
    const REQUEST: &str;
    /// What holds the plan on a request: "comment", "note".
    const COMMENT: &str;
    /// When the apply job runs and the plan job does not: "once merged", ….
    const MERGED: &str;
    /// How many characters of a commit's SHA a comment shows.
    const SHORT_SHA: usize;
    /// The requests: the one planned, pushed to and merged; the one merged after main moved
    /// on.
    const REQUESTS: [u64; 2];
    /// What the plan job installs before brickform.
    const PREREQUISITES: &[&str];
    /// Why the apply job fails on a merge with no plan.
    const NO_PLAN: &str;

    /// Opens the requests, where the forge holds them before any pipeline runs.
    fn open_requests(_hub: &mut Hub) {}
    /// Posts `body` on `request` as the comment `id`, from a bot or a person.
    fn post(hub: &mut Hub, request: u64, id: u64, body: String, bot: bool);
    /// Every comment on every request: request, id, body.
    fn comments(hub: &Hub) -> Vec<(u64, u64, String)>;
    /// The jobs run when `request` is opened at `head`.
    fn open(&self, world: &World, request: u64, head: &str) -> Jobs;
    /// The jobs run when `head` is pushed to `request`.
    fn push(&self, world: &World, request: u64, head: &str) -> Jobs;
    /// The jobs run when `request`, at `head`, is merged as the commit `merge`.
    fn merge(&self, world: &World, request: u64, head: &str, merge: &str) -> Jobs;
    /// The jobs run when `sha` lands on main with no plan.
    fn merge_unplanned(&self, world: &World, sha: &str) -> Jobs;
    /// Checks what only this CI shows of a plan job.
    fn check_plan_job(_plan: &Outcome) {}
}

/// Plays the story with `ci`'s template.
pub fn play<C: Ci>(ci: &C) {
    let mut world = World::new();
    let one = world.repo.commit("one");
    let two = world.repo.commit("two");
    let [request, second] = C::REQUESTS;
    {
        let mut hub = world.fake.hub();
        C::open_requests(&mut hub);
        for i in 0..CHATTER {
            let id = hub.id();
            C::post(&mut hub, request, id, format!("Looks fine {i}"), i % 2 == 0);
        }
    }

    // The request is opened: the plan job plans, comments and keeps the plan.
    let before = world.managed();
    let jobs = ci.open(&world, request, &one);
    assert!(!jobs["apply"].ran, "apply runs only {}", C::MERGED);
    assert_ran(&jobs["plan"], "the plan job");
    assert_eq!(
        world.managed(),
        before,
        "the plan job changed the workspace"
    );
    let mut installs: Vec<String> = C::PREREQUISITES.iter().map(|s| s.to_string()).collect();
    installs.push(format!(
        "pip install --disable-pip-version-check brickform=={}",
        version()
    ));
    assert_eq!(
        world.tools.installs(),
        installs,
        "what the plan job installed"
    );
    C::check_plan_job(&jobs["plan"]);
    let comments = plan_comments::<C>(&world, request);
    assert_eq!(
        comments.len(),
        1,
        "one plan {}: {:?}",
        C::COMMENT,
        ids(&comments)
    );
    let (first_id, body) = comments[0].clone();
    check_comment(&body, &one[..C::SHORT_SHA], "one");
    assert!(
        body.contains("Plan: 3 to add, 0 to change, 0 to destroy."),
        "{body}"
    );

    // A push to the request: the same comment now shows the new plan.
    let jobs = ci.push(&world, request, &two);
    assert_ran(&jobs["plan"], "the plan job after a push");
    let comments = plan_comments::<C>(&world, request);
    assert_eq!(
        comments.len(),
        1,
        "a push updates the plan {} instead of adding one: {:?}",
        C::COMMENT,
        ids(&comments)
    );
    assert_eq!(
        comments[0].0,
        first_id,
        "the same {} is updated",
        C::COMMENT
    );
    check_comment(&comments[0].1, &two[..C::SHORT_SHA], "two");
    assert_eq!(
        C::comments(&world.fake.hub()).len(),
        CHATTER + 1,
        "no other {} was posted or removed",
        C::COMMENT
    );

    // Merged: the apply job fetches the plan the plan job kept, and applies it.
    let merge = world.repo.commit("two");
    let jobs = ci.merge(&world, request, &two, &merge);
    assert!(!jobs["plan"].ran, "no plan {}", C::MERGED);
    assert_ran(&jobs["apply"], "the apply job");
    assert!(
        jobs["apply"]
            .log
            .contains("Apply complete! Resources: 3 added, 0 changed, 0 destroyed."),
        "{}",
        jobs["apply"].log
    );
    let applied = world.managed();
    assert_eq!(applied["catalog"], "two", "{applied}");
    assert_eq!(applied["schemas"], json!(["sales.raw"]));

    // The apply job run again: the plan was applied once; it is stale now.
    let jobs = ci.merge(&world, request, &two, &merge);
    assert_apply_refused(
        &world,
        &jobs,
        "applying the plan a second time",
        "Saved plan is stale: the given plan file can no longer be applied because the state was changed by another operation after the plan was created.",
        &applied,
    );

    // Another request, merged after main moved on: the merge commit's configuration is not
    // the one planned, so its plan is refused.
    let three = world.repo.commit("three");
    assert_ran(
        &ci.open(&world, second, &three)["plan"],
        &format!("the second {}'s plan", C::REQUEST),
    );
    let moved_on = world.repo.commit("four");
    let jobs = ci.merge(&world, second, &three, &moved_on);
    assert_apply_refused(
        &world,
        &jobs,
        "applying a plan of another configuration",
        "Saved plan is stale: the configuration files changed after the plan was created.",
        &applied,
    );

    // A merge with no plan: nothing to apply.
    let five = world.repo.commit("five");
    let jobs = ci.merge_unplanned(&world, &five);
    assert_apply_refused(
        &world,
        &jobs,
        "applying without a plan",
        C::NO_PLAN,
        &applied,
    );
}

/// The apply job refused, with `message`, and the workspace is still as `applied`.
fn assert_apply_refused(world: &World, jobs: &Jobs, what: &str, message: &str, applied: &Value) {
    assert_refused(&jobs["apply"], what, message);
    assert_eq!(&world.managed(), applied);
}

/// The comments of `request` that hold the plan: id, body.
fn plan_comments<C: Ci>(world: &World, request: u64) -> Vec<(u64, String)> {
    C::comments(&world.fake.hub())
        .into_iter()
        .filter(|(on, _, body)| *on == request && body.starts_with(MARKER))
        .map(|(_, id, body)| (id, body))
        .collect()
}

fn ids(comments: &[(u64, String)]) -> Vec<u64> {
    comments.iter().map(|c| c.0).collect()
}

/// Checks a plan comment: the marker, the plan of `prod`, the commit, no secret.
fn check_comment(body: &str, sha: &str, comment: &str) {
    assert!(
        body.starts_with(&format!("{MARKER}\n### brickform plan for `prod`")),
        "{body}"
    );
    assert!(body.contains(&format!("Planned at {sha}")), "{body}");
    assert!(body.contains(&format!("\"{comment}\"")), "{body}");
    assert!(
        !body.contains(DB_PASSWORD),
        "the comment shows a secret:\n{body}"
    );
}
