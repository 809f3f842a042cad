//! The shared application state every handler receives.

use crate::auth::Auth;
use crate::behaviours::{Behaviour, Behaviours};
use crate::config::{EmulatorConfig, Timings};
use crate::control::Control;
use crate::errors::ApiResult;
use crate::store::{Ctx, State, Store, lock, now_ms};
use crate::{jobs, pipelines};
use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, Ordering};

pub struct App {
    store: Mutex<Store>,
    pub control: Control,
    pub auth: Auth,
    pub user: String,
    timings: Mutex<Timings>,
    behaviours: Mutex<Behaviours>,
    /// Added to the wall clock, so tests can move time forward instead of sleeping.
    clock_offset_ms: AtomicI64,
}

impl App {
    pub fn new(config: &EmulatorConfig, store: Store) -> App {
        App {
            store: Mutex::new(store),
            control: Control::new(config),
            auth: Auth::new(config.tokens.clone()),
            user: config.user_name.clone(),
            timings: Mutex::new(config.timings),
            behaviours: Mutex::new(config.behaviours),
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

    /// Whether the real service's behaviour `b` is modelled now.
    pub fn models(&self, b: Behaviour) -> bool {
        self.behaviours().on(b)
    }

    fn ctx(&self) -> Ctx<'_> {
        Ctx {
            now: self.now(),
            user: &self.user,
            timings: self.timings(),
            behaviours: self.behaviours(),
        }
    }

    /// Read access. Runs advance first (by elapsed time), and that progress is persisted.
    pub fn view<T>(&self, f: impl FnOnce(&State, &Ctx) -> ApiResult<T>) -> ApiResult<T> {
        let mut store = lock(&self.store);
        let ctx = self.ctx();
        let runs = jobs::advance(&mut store.state, &ctx);
        if pipelines::advance(&mut store.state, &ctx) | runs {
            store.save()?;
        }
        f(&store.state, &ctx)
    }

    /// Write access; the change is on disk (when persisted) before the response goes out.
    /// Handlers validate before they mutate, so an error leaves the state untouched.
    pub fn mutate<T>(&self, f: impl FnOnce(&mut State, &Ctx) -> ApiResult<T>) -> ApiResult<T> {
        let mut store = lock(&self.store);
        let ctx = self.ctx();
        jobs::advance(&mut store.state, &ctx);
        pipelines::advance(&mut store.state, &ctx);
        let out = f(&mut store.state, &ctx)?;
        store.save()?;
        Ok(out)
    }

    pub fn reset(&self) -> ApiResult<()> {
        let mut store = lock(&self.store);
        store.state = State::new(&self.user, self.now());
        store.save_all()
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
