//! The shared application state every handler receives.

use crate::auth::Auth;
use crate::behaviours::Behaviours;
use crate::config::{EmulatorConfig, Timings};
use crate::control::Control;
use crate::errors::ApiResult;
use crate::store::{Ctx, State, Store, lock, now_ms};
use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, Ordering};

/// The app as axum hands it to a handler.
pub type AppState = axum::extract::State<std::sync::Arc<App>>;

/// What a domain does when time has passed: moves its timed states forward to `ctx.now`
/// (runs progress, deletes finish). Returns whether it changed anything, so a read that
/// advanced time persists that progress.
pub type ClockHook = fn(&mut State, &Ctx) -> bool;

pub struct App {
    store: Mutex<Store>,
    /// Run in order before every request touches the state; the domains register them
    /// (see `DOMAINS` in lib.rs), so the app knows nothing of jobs or pipelines.
    clock_hooks: Vec<ClockHook>,
    pub control: Control,
    pub auth: Auth,
    pub entra: crate::entra::Entra,
    /// The stand-ins of Google's sign-in services.
    pub google: crate::identity::Google,
    pub user: String,
    timings: Mutex<Timings>,
    behaviours: Mutex<Behaviours>,
    /// The seed of `normalise_answers` (see normalise.rs).
    normalise_seed: std::sync::atomic::AtomicU64,
    /// Added to the wall clock, so tests can move time forward instead of sleeping.
    clock_offset_ms: AtomicI64,
}

impl App {
    pub fn new(config: &EmulatorConfig, store: Store, clock_hooks: Vec<ClockHook>) -> App {
        App {
            store: Mutex::new(store),
            clock_hooks,
            control: Control::new(config),
            auth: Auth::new(config.tokens.clone()),
            entra: crate::entra::Entra::default(),
            google: crate::identity::Google::default(),
            user: config.user_name.clone(),
            timings: Mutex::new(config.timings),
            behaviours: Mutex::new(config.behaviours),
            normalise_seed: std::sync::atomic::AtomicU64::new(config.normalise_seed),
            clock_offset_ms: AtomicI64::new(0),
        }
    }

    pub fn now(&self) -> i64 {
        now_ms().saturating_add(self.clock_offset_ms.load(Ordering::Relaxed))
    }

    pub fn advance_clock(&self, ms: i64) {
        self.clock_offset_ms.fetch_add(ms, Ordering::Relaxed);
    }

    pub fn timings(&self) -> Timings {
        *lock(&self.timings)
    }

    pub fn set_timings(&self, t: Timings) {
        *lock(&self.timings) = t;
    }

    pub fn behaviours(&self) -> Behaviours {
        *lock(&self.behaviours)
    }

    pub fn set_behaviours(&self, b: Behaviours) {
        *lock(&self.behaviours) = b;
    }

    pub fn normalise_seed(&self) -> u64 {
        self.normalise_seed.load(Ordering::Relaxed)
    }

    pub fn set_normalise_seed(&self, seed: u64) {
        self.normalise_seed.store(seed, Ordering::Relaxed);
    }

    fn ctx(&self) -> Ctx<'_> {
        Ctx {
            now: self.now(),
            user: &self.user,
            timings: self.timings(),
            behaviours: self.behaviours(),
        }
    }

    /// Runs every clock hook (each one, even after one reported a change). Returns whether
    /// any changed the state.
    fn tick(&self, state: &mut State, ctx: &Ctx) -> bool {
        self.clock_hooks
            .iter()
            .fold(false, |changed, hook| hook(state, ctx) | changed)
    }

    /// Read access. Timed states advance first (by elapsed time), and that progress is
    /// persisted.
    pub fn view<T>(&self, f: impl FnOnce(&State, &Ctx) -> ApiResult<T>) -> ApiResult<T> {
        let mut store = lock(&self.store);
        let ctx = self.ctx();
        if self.tick(&mut store.state, &ctx) {
            store.save()?;
        }
        f(&store.state, &ctx)
    }

    /// Write access; the change is on disk (when persisted) before the response goes out.
    /// Handlers validate before they mutate, so an error leaves the state untouched.
    pub fn mutate<T>(&self, f: impl FnOnce(&mut State, &Ctx) -> ApiResult<T>) -> ApiResult<T> {
        let mut store = lock(&self.store);
        let ctx = self.ctx();
        self.tick(&mut store.state, &ctx);
        let out = f(&mut store.state, &ctx)?;
        store.save()?;
        Ok(out)
    }

    /// Gives a workspace just created what a new workspace starts with and writes it whole;
    /// called once, when the workspace is created, so that a saved workspace keeps what its
    /// user removed of it.
    pub fn populate_new(&self) -> ApiResult<()> {
        let mut store = lock(&self.store);
        let ctx = self.ctx();
        crate::uc::seed_new_workspace(&mut store.state, &ctx)?;
        store.save_all()
    }

    /// A new workspace in place of this one: what it starts with follows the behaviours on
    /// now (`new_workspace_main` off resets to an empty one).
    pub fn reset(&self) -> ApiResult<()> {
        {
            let mut store = lock(&self.store);
            store.state = State::new(&self.user, self.now());
        }
        self.populate_new()
    }

    pub fn dump(&self) -> ApiResult<serde_json::Value> {
        self.view(|st, _| {
            serde_json::to_value(st).map_err(|e| crate::errors::ApiError::internal(e.to_string()))
        })
    }

    pub fn save(&self) -> ApiResult<()> {
        lock(&self.store).save()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn app(hooks: Vec<ClockHook>) -> App {
        let config = EmulatorConfig::for_tests();
        App::new(&config, Store::new(State::new("u@x", 1), None), hooks)
    }

    #[test]
    fn every_clock_hook_runs_in_order_before_each_access() {
        // Each hook leaves its mark in the id counter: the first doubles, the second adds
        // one, so the order shows in the result.
        fn double(st: &mut State, _: &Ctx) -> bool {
            st.next_id *= 2;
            true
        }
        fn add_one(st: &mut State, _: &Ctx) -> bool {
            st.next_id += 1;
            false
        }
        let a = app(vec![double, add_one]);
        let start = a.view(|st, _| Ok(st.next_id)).unwrap();
        let after = a.mutate(|st, _| Ok(st.next_id)).unwrap();
        assert_eq!(after, start * 2 + 1);
    }

    #[test]
    fn an_app_without_hooks_leaves_the_state_alone() {
        let a = app(Vec::new());
        let one = a.view(|st, _| Ok(st.next_id)).unwrap();
        assert_eq!(a.view(|st, _| Ok(st.next_id)).unwrap(), one);
    }
}
