//! How a value's change is written: the walk of a `before`/`after` pair into Terraform-style
//! lines (attributes, maps, lists and blocks, heredoc line diffs, structural diffs of JSON
//! strings), with the field notes and sensitive values of the change.

use super::*;

pub(super) fn sensitive_paths(
    declared: &[Vec<PathStep>],
    fields: &[FieldChange],
) -> Vec<Vec<PathStep>> {
    let mut v = declared.to_vec();
    v.extend(
        fields
            .iter()
            .filter(|f| f.sensitive)
            .map(|f| f.path.clone()),
    );
    v
}

pub(super) fn key_width(k: &str) -> usize {
    quote_key(k).chars().count()
}

/// Attributes that identify an object stay visible in updates, so a reviewer knows which
/// object a diff is about.
pub(super) fn is_identifying(key: &str) -> bool {
    key == "id" || key == "name"
}

pub(super) fn present(v: Option<&Value>) -> Option<&Value> {
    v.filter(|v| !v.is_null())
}

/// Whether two values render the same: an object attribute that is null is not shown, so
/// `{a = 1, b = null}` and `{a = 1}` are the same to a reader.
pub(super) fn same_shown(a: Option<&Value>, b: Option<&Value>) -> bool {
    // Empty nested blocks are not shown either.
    pub(super) fn shown(v: Option<&Value>) -> Option<&Value> {
        present(v).filter(|v| !matches!(v, Value::List(l) if l.is_empty()))
    }
    match (shown(a), shown(b)) {
        (None, None) => true,
        (Some(Value::Object(x)), Some(Value::Object(y))) => {
            x.iter().all(|(k, v)| same_shown(Some(v), y.get(k)))
                && y.iter()
                    .all(|(k, v)| x.contains_key(k) || same_shown(None, Some(v)))
        }
        (Some(Value::List(x)), Some(Value::List(y))) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_shown(Some(p), Some(q)))
        }
        (Some(x), Some(y)) => x == y,
        _ => false,
    }
}

/// Longest value shown in a trailing `# drift:`/`# live:` note before it is cut.
pub(super) const NOTE_VALUE_MAX: usize = 60;

pub(super) fn short_value(v: Option<&Value>) -> String {
    let s = v
        .map(|v| v.to_string())
        .unwrap_or_else(|| "null".to_string());
    if s.chars().count() > NOTE_VALUE_MAX {
        let cut: String = s.chars().take(NOTE_VALUE_MAX).collect();
        format!("{cut}…")
    } else {
        s
    }
}

/// A node's values after applying its field change, if any.
pub(super) struct Resolved<'a> {
    /// What is shown on the left of `->`; the live value for drift that is put back.
    pub(super) old: Option<&'a Value>,
    pub(super) new: Option<&'a Value>,
    pub(super) forces: bool,
    pub(super) notes: Vec<String>,
}

/// Walks a `before`/`after` pair and writes Terraform-style lines.
pub(super) struct Differ<'a> {
    pub(super) sty: Sty,
    pub(super) show_unchanged: bool,
    /// Only the changed fields are known (drift): no hidden counts and no list context.
    pub(super) sparse: bool,
    /// Field notes (`# forces replacement`, drift, live) are written.
    pub(super) annotate: bool,
    pub(super) fields: &'a [FieldChange],
    pub(super) block_paths: &'a [Vec<String>],
    pub(super) block_keys: &'a [(Vec<String>, String)],
    pub(super) sensitive: &'a [Vec<PathStep>],
}

impl<'a> Differ<'a> {
    pub(super) fn field_at(&self, path: &[PathStep]) -> Option<&'a FieldChange> {
        if !self.annotate {
            return None;
        }
        self.fields.iter().find(|f| f.path == path)
    }

    pub(super) fn is_sensitive(&self, path: &[PathStep]) -> bool {
        self.sensitive.iter().any(|s| path_within(path, s))
    }

    /// Whether `key` is the key attribute of the keyed block at `path` (a task's task_key).
    pub(super) fn is_block_key(&self, path: &[PathStep], key: &str) -> bool {
        let keys: Vec<&str> = path
            .iter()
            .filter_map(|s| match s {
                PathStep::Key(k) => Some(k.as_str()),
                PathStep::Index(_) => None,
            })
            .collect();
        self.block_keys.iter().any(|(p, k)| {
            k == key && p.len() == keys.len() && p.iter().zip(&keys).all(|(x, y)| x == y)
        })
    }

    /// The key attribute of the keyed block at `path`, if it is one.
    pub(super) fn block_key(&self, path: &[PathStep]) -> Option<&str> {
        let keys: Vec<&str> = path
            .iter()
            .filter_map(|s| match s {
                PathStep::Key(k) => Some(k.as_str()),
                PathStep::Index(_) => None,
            })
            .collect();
        self.block_keys
            .iter()
            .find(|(p, _)| p.len() == keys.len() && p.iter().zip(&keys).all(|(x, y)| x == y))
            .map(|(_, k)| k.as_str())
    }

    pub(super) fn is_block(&self, path: &[PathStep]) -> bool {
        let keys = path.iter().filter_map(|s| match s {
            PathStep::Key(k) => Some(k.as_str()),
            PathStep::Index(_) => None,
        });
        let keys: Vec<&str> = keys.collect();
        self.block_paths
            .iter()
            .any(|b| b.len() == keys.len() && b.iter().zip(&keys).all(|(x, y)| x == y))
    }

    pub(super) fn resolve<'v>(
        &self,
        path: &[PathStep],
        before: Option<&'v Value>,
        after: Option<&'v Value>,
    ) -> Resolved<'v>
    where
        'a: 'v,
    {
        let mut r = Resolved {
            old: present(before),
            new: present(after),
            forces: false,
            notes: Vec::new(),
        };
        let Some(f) = self.field_at(path) else {
            return r;
        };
        r.old = present(f.before.as_ref().map(|v| &v.0));
        r.new = present(f.after.as_ref().map(|v| &v.0));
        r.forces = f.forces_replacement;
        let live = f.live.as_ref().map(|v| &v.0);
        let live_p = present(live);
        let hide = self.is_sensitive(path);
        if f.reason == FieldReason::Drift {
            if r.old == r.new {
                // The plan puts the last applied value back: the change a reviewer cares
                // about is from the live value.
                if live_p != r.old {
                    r.old = live_p;
                    r.notes.push("drift: changed outside brickform".to_string());
                }
            } else if live_p != r.old && live_p != r.new && !hide {
                r.notes.push(format!(
                    "drift: changed to {} outside brickform",
                    short_value(live)
                ));
            } else {
                r.notes.push("drift: changed outside brickform".to_string());
            }
        } else if let Some(l) = live
            && present(Some(l)) != r.old
            && present(Some(l)) != r.new
            && !hide
        {
            r.notes.push(format!("live: {}", short_value(Some(l))));
        }
        r
    }

    /// True when the node (or anything under it) changes.
    pub(super) fn changed(
        &self,
        path: &[PathStep],
        before: Option<&Value>,
        after: Option<&Value>,
    ) -> bool {
        let r = self.resolve(path, before, after);
        if !same_shown(r.old, r.new) {
            return true;
        }
        // A hidden value that changed looks the same before and after.
        if self
            .fields
            .iter()
            .any(|f| f.sensitive && f.path == path && f.before.is_some() && f.after.is_some())
        {
            return true;
        }
        // A drift field deeper down can differ even where `before` equals `after`.
        self.annotate
            && self.fields.iter().any(|f| {
                f.path.len() > path.len()
                    && f.path.starts_with(path)
                    && self.changed(&f.path, None, None)
            })
    }

    pub(super) fn trailer(&self, r: &Resolved) -> String {
        let mut parts = Vec::new();
        if r.forces && self.annotate {
            parts.push(self.sty.paint(RED, "forces replacement"));
        }
        parts.extend(r.notes.iter().cloned());
        if parts.is_empty() {
            String::new()
        } else {
            format!(" # {}", parts.join(", "))
        }
    }

    /// One attribute, map entry or list element: `prefix` is `key = ` (aligned) or empty for
    /// list elements, which also end in a comma and never say `-> null`.
    pub(super) fn entry(
        &self,
        out: &mut Vec<Line>,
        depth: usize,
        prefix: &str,
        list_elem: bool,
        path: &[PathStep],
        (before, after): Sides<'_>,
    ) {
        let r = self.resolve(path, before, after);
        let (old, new) = (r.old, r.new);
        if old.is_none() && new.is_none() {
            return;
        }
        let mut sym = Sym::of_change(old, new);
        if sym == Sym::None && (!r.notes.is_empty() || self.changed(path, before, after)) {
            sym = Sym::Update;
        }
        let trailer = self.trailer(&r);
        let comma = if list_elem { "," } else { "" };
        let null = if new.is_none() && !list_elem {
            " -> null"
        } else {
            ""
        };
        let tail = format!("{null}{comma}");

        if self.is_sensitive(path) {
            out.push(item(
                depth,
                sym,
                format!("{prefix}(sensitive value){tail}{trailer}"),
            ));
            return;
        }
        if new == Some(&Value::Unknown) {
            match old {
                Some(o @ (Value::List(_) | Value::Object(_))) => {
                    let close = format!(" -> (known after apply){comma}");
                    let ends = Ends {
                        sym: Sym::Update,
                        trailer: &trailer,
                        tail: &close,
                    };
                    self.container(out, depth, ends, prefix, path, (Some(o), None));
                }
                Some(o) => out.push(item(
                    depth,
                    sym,
                    format!("{prefix}{o} -> (known after apply){comma}{trailer}"),
                )),
                None => out.push(item(
                    depth,
                    sym,
                    format!("{prefix}(known after apply){comma}{trailer}"),
                )),
            }
            return;
        }
        let ends = Ends {
            sym,
            trailer: &trailer,
            tail: &tail,
        };
        let old_s = old.and_then(Value::as_str);
        let new_s = new.and_then(Value::as_str);
        let strings = (old.is_none() || old_s.is_some()) && (new.is_none() || new_s.is_some());
        if strings {
            let (oj, nj) = (old_s.map(json_container), new_s.map(json_container));
            let json_ok = |side: &Option<Option<Value>>| !matches!(side, Some(None));
            if json_ok(&oj) && json_ok(&nj) {
                let (oj, nj) = (oj.flatten(), nj.flatten());
                let parsed = (oj.as_ref(), nj.as_ref());
                self.jsonencode(out, depth, ends, prefix, (old_s, new_s), parsed);
                return;
            }
            if old_s.is_some_and(|s| s.contains('\n')) || new_s.is_some_and(|s| s.contains('\n')) {
                self.heredoc(out, depth, ends, prefix, (old_s, new_s));
                return;
            }
        }
        let is_container = |v: Option<&Value>| matches!(v, Some(Value::List(_) | Value::Object(_)));
        let same_shape = match (old, new) {
            (Some(Value::List(_)), Some(Value::List(_)))
            | (Some(Value::Object(_)), Some(Value::Object(_))) => true,
            (None, v) | (v, None) => is_container(v),
            _ => false,
        };
        if same_shape {
            self.container(out, depth, ends, prefix, path, (old, new));
        } else if is_container(old) || is_container(new) {
            // The type changes (a string becomes a list, say): show it as the old value
            // going away and the new one arriving, each rendered in full.
            let mut gone = self.forced(depth, prefix, list_elem, path, (old, None));
            if let Some(Line::Item { text, .. }) = gone.first_mut() {
                text.push_str(&trailer);
            }
            out.extend(gone);
            out.extend(self.forced(depth, prefix, list_elem, path, (None, new)));
        } else {
            let text = match (old, new) {
                (Some(o), Some(n)) if sym == Sym::Update => format!("{o} -> {n}"),
                (Some(o), None) => format!("{o}"),
                (_, Some(n)) => format!("{n}"),
                (None, None) => String::new(),
            };
            let ws = whitespace_note(old_s, new_s);
            out.push(item(
                depth,
                sym,
                format!("{prefix}{text}{tail}{trailer}{ws}"),
            ));
        }
    }

    /// The lines of [`Differ::entry`] with the values given, bypassing the field lookup.
    pub(super) fn forced(
        &self,
        depth: usize,
        prefix: &str,
        list_elem: bool,
        path: &[PathStep],
        sides: Sides<'_>,
    ) -> Vec<Line> {
        let plain = Differ {
            annotate: false,
            ..*self
        };
        let mut lines = Vec::new();
        plain.entry(&mut lines, depth, prefix, list_elem, path, sides);
        lines
    }

    /// A map/object (`{ … }`) or list (`[ … ]`) attribute value.
    pub(super) fn container(
        &self,
        out: &mut Vec<Line>,
        depth: usize,
        ends: Ends<'_>,
        prefix: &str,
        path: &[PathStep],
        (old, new): Sides<'_>,
    ) {
        let Ends {
            sym,
            trailer,
            tail: close,
        } = ends;
        let is_list = matches!(old, Some(Value::List(_))) || matches!(new, Some(Value::List(_)));
        let (open, shut) = if is_list { ("[", "]") } else { ("{", "}") };
        let empty = |v: Option<&Value>| match v {
            Some(Value::List(l)) => l.is_empty(),
            Some(Value::Object(o)) => o.is_empty(),
            _ => true,
        };
        if empty(old) && empty(new) {
            out.push(item(
                depth,
                sym,
                format!("{prefix}{open}{shut}{close}{trailer}"),
            ));
            return;
        }
        out.push(item(depth, sym, format!("{prefix}{open}{trailer}")));
        if is_list {
            let none: &[Value] = &[];
            let o = old.and_then(Value::as_list).unwrap_or(none);
            let n = new.and_then(Value::as_list).unwrap_or(none);
            self.list_body(out, depth + 1, path, o, n);
        } else {
            self.map_body(
                out,
                depth + 1,
                path,
                old.and_then(Value::as_object),
                new.and_then(Value::as_object),
            );
        }
        out.push(item(depth, Sym::None, format!("{shut}{close}")));
    }

    pub(super) fn map_body(
        &self,
        out: &mut Vec<Line>,
        depth: usize,
        path: &[PathStep],
        old: Option<&Object>,
        new: Option<&Object>,
    ) {
        let keys = sorted_keys(old, new);
        let mut shown = Vec::new();
        let mut hidden = 0;
        for k in keys {
            let p = child(path, PathStep::Key(k.to_string()));
            let (b, a) = (old.and_then(|o| o.get(k)), new.and_then(|o| o.get(k)));
            if present(b).is_none() && present(a).is_none() && !self.changed(&p, b, a) {
                continue;
            }
            if self.changed(&p, b, a) || self.show_unchanged {
                shown.push((k, p, b, a));
            } else {
                hidden += 1;
            }
        }
        let width = shown.iter().map(|(k, ..)| key_width(k)).max().unwrap_or(0);
        for (k, p, b, a) in shown {
            let prefix = format!("{:<width$} = ", quote_key(k));
            self.entry(out, depth, &prefix, false, &p, (b, a));
        }
        if hidden > 0 && !self.sparse {
            out.push(item(
                depth,
                Sym::None,
                format!(
                    "# ({} hidden)",
                    plural(hidden, "unchanged element", "unchanged elements")
                ),
            ));
        }
    }

    pub(super) fn list_body(
        &self,
        out: &mut Vec<Line>,
        depth: usize,
        path: &[PathStep],
        old: &[Value],
        new: &[Value],
    ) {
        let pairs = pair_elements(old, new, self.block_key(path));
        let changed: Vec<bool> = pairs
            .iter()
            .map(|(b, a, i)| self.changed(&child(path, PathStep::Index(*i)), *b, *a))
            .collect();
        let primitive = old
            .iter()
            .chain(new)
            .all(|v| !matches!(v, Value::List(_) | Value::Object(_)));
        let mut hidden_run = 0;
        let flush = |out: &mut Vec<Line>, n: &mut usize| {
            if *n > 0 && !self.sparse {
                out.push(item(
                    depth,
                    Sym::None,
                    format!(
                        "# ({} hidden)",
                        plural(*n, "unchanged element", "unchanged elements")
                    ),
                ));
            }
            *n = 0;
        };
        for (i, (b, a, idx)) in pairs.iter().enumerate() {
            // Unchanged neighbours of a changed primitive element stay as context, as in
            // Terraform, so an insertion shows where it lands.
            let context = primitive
                && !self.sparse
                && ((i > 0 && changed[i - 1]) || changed.get(i + 1).copied().unwrap_or(false));
            if changed[i] || self.show_unchanged || context {
                flush(out, &mut hidden_run);
                self.entry(
                    out,
                    depth,
                    "",
                    true,
                    &child(path, PathStep::Index(*idx)),
                    (*b, *a),
                );
            } else if present(*b).is_some() {
                hidden_run += 1;
            }
        }
        flush(out, &mut hidden_run);
    }

    /// The body of a resource or nested block: attributes (aligned), then nested blocks.
    pub(super) fn block_body(
        &self,
        out: &mut Vec<Line>,
        depth: usize,
        path: &[PathStep],
        old: Option<&Object>,
        new: Option<&Object>,
    ) {
        let start = out.len();
        let keys = sorted_keys(old, new);
        let (blocks, attrs): (Vec<&str>, Vec<&str>) = keys
            .into_iter()
            .partition(|k| self.is_block(&child(path, PathStep::Key(k.to_string()))));

        let mut shown = Vec::new();
        let mut hidden_attrs = 0;
        for k in attrs {
            let p = child(path, PathStep::Key(k.to_string()));
            let (b, a) = (old.and_then(|o| o.get(k)), new.and_then(|o| o.get(k)));
            let changed = self.changed(&p, b, a);
            if present(b).is_none() && present(a).is_none() && !changed {
                continue;
            }
            let identifying = is_identifying(k) || self.is_block_key(path, k);
            if changed || self.show_unchanged || (identifying && !self.sparse) {
                shown.push((k, p, b, a));
            } else {
                hidden_attrs += 1;
            }
        }
        let width = shown.iter().map(|(k, ..)| key_width(k)).max().unwrap_or(0);
        for (k, p, b, a) in shown {
            let prefix = format!("{:<width$} = ", quote_key(k));
            self.entry(out, depth, &prefix, false, &p, (b, a));
        }
        if hidden_attrs > 0 && !self.sparse {
            out.push(item(
                depth,
                Sym::None,
                format!(
                    "# ({} hidden)",
                    plural(hidden_attrs, "unchanged attribute", "unchanged attributes")
                ),
            ));
        }

        let mut hidden_blocks = 0;
        for k in blocks {
            let p = child(path, PathStep::Key(k.to_string()));
            let (b, a) = (old.and_then(|o| o.get(k)), new.and_then(|o| o.get(k)));
            // A field change may name the whole block (drift on `task`, say); its values and
            // notes apply to every element shown.
            let group = self.resolve(&p, b, a);
            let group_trailer = self.trailer(&group);
            let (b, a) = if self.field_at(&p).is_some() {
                (group.old, group.new)
            } else {
                (b, a)
            };
            let elems: Vec<(Option<&Value>, Option<&Value>, Vec<PathStep>)> =
                match (present(b), present(a)) {
                    (None | Some(Value::List(_)), None | Some(Value::List(_))) => {
                        let none: &[Value] = &[];
                        let bl = present(b).and_then(Value::as_list).unwrap_or(none);
                        let al = present(a).and_then(Value::as_list).unwrap_or(none);
                        pair_elements(bl, al, self.block_key(&p))
                            .into_iter()
                            .map(|(x, y, i)| (x, y, child(&p, PathStep::Index(i))))
                            .collect()
                    }
                    (None | Some(Value::Object(_)), None | Some(Value::Object(_))) => {
                        vec![(b, a, p.clone())]
                    }
                    _ => {
                        // Not block-shaped (unknown, say): show it as an attribute.
                        if out.len() > start {
                            out.push(Line::Blank);
                        }
                        let prefix = format!("{} = ", quote_key(k));
                        self.entry(out, depth, &prefix, false, &p, (b, a));
                        continue;
                    }
                };
            for (eb, ea, ep) in elems {
                if present(eb).is_none() && present(ea).is_none() {
                    continue;
                }
                if !self.changed(&ep, eb, ea) && !self.show_unchanged {
                    hidden_blocks += 1;
                    continue;
                }
                if out.len() > start {
                    out.push(Line::Blank);
                }
                let r = if ep == p {
                    Resolved {
                        old: present(eb),
                        new: present(ea),
                        forces: false,
                        notes: Vec::new(),
                    }
                } else {
                    self.resolve(&ep, eb, ea)
                };
                let trailer = format!("{group_trailer}{}", self.trailer(&r));
                self.block(out, depth, k, &ep, (r.old, r.new), &trailer);
            }
        }
        if hidden_blocks > 0 && !self.sparse {
            if out.len() > start {
                out.push(Line::Blank);
            }
            out.push(item(
                depth,
                Sym::None,
                format!(
                    "# ({} hidden)",
                    plural(hidden_blocks, "unchanged block", "unchanged blocks")
                ),
            ));
        }
    }

    /// One nested block: `~ task {` … `}`, with its values already resolved.
    pub(super) fn block(
        &self,
        out: &mut Vec<Line>,
        depth: usize,
        name: &str,
        path: &[PathStep],
        (old, new): Sides<'_>,
        trailer: &str,
    ) {
        let mut sym = Sym::of_change(old, new);
        if sym == Sym::None && (self.changed(path, old, new) || !trailer.is_empty()) {
            sym = Sym::Update;
        }
        out.push(item(depth, sym, format!("{name} {{{trailer}")));
        if self.is_sensitive(path) {
            out.push(item(
                depth + 1,
                Sym::None,
                "# At least one attribute in this block is (or was) sensitive,".to_string(),
            ));
            out.push(item(
                depth + 1,
                Sym::None,
                "# so its contents will not be displayed.".to_string(),
            ));
        } else {
            self.block_body(
                out,
                depth + 1,
                path,
                old.and_then(Value::as_object),
                new.and_then(Value::as_object),
            );
        }
        out.push(item(depth, Sym::None, "}".to_string()));
    }

    /// A multi-line string as a heredoc; updates show a line diff.
    pub(super) fn heredoc(
        &self,
        out: &mut Vec<Line>,
        depth: usize,
        Ends { sym, trailer, tail }: Ends<'_>,
        prefix: &str,
        (old, new): (Option<&str>, Option<&str>),
    ) {
        let ws = whitespace_note(old, new);
        out.push(item(depth, sym, format!("{prefix}<<-EOT{trailer}{ws}")));
        match (old, new) {
            (Some(o), Some(n)) if o != n => self.line_diff(out, depth + 1, o, n),
            (Some(s), _) | (None, Some(s)) => {
                for l in s.lines() {
                    out.push(item(depth + 1, Sym::None, l.to_string()));
                }
            }
            (None, None) => {}
        }
        out.push(item(depth, Sym::None, format!("EOT{tail}")));
    }

    pub(super) fn line_diff(&self, out: &mut Vec<Line>, depth: usize, old: &str, new: &str) {
        let diff = TextDiff::configure()
            .algorithm(Algorithm::Patience)
            .diff_lines(old, new);
        let context = 2;
        let groups = if self.show_unchanged {
            vec![diff.ops().to_vec()]
        } else {
            diff.grouped_ops(context)
        };
        let total = diff.old_len();
        let hidden_line = |n: usize| {
            item(
                depth,
                Sym::None,
                format!(
                    "# ({} hidden)",
                    plural(n, "unchanged line", "unchanged lines")
                ),
            )
        };
        let mut at = 0;
        for group in &groups {
            let (Some(first), Some(last)) = (group.first(), group.last()) else {
                continue;
            };
            if first.old_range().start > at {
                out.push(hidden_line(first.old_range().start - at));
            }
            for op in group {
                for change in diff.iter_inline_changes(op) {
                    let sym = match change.tag() {
                        ChangeTag::Delete => Sym::Delete,
                        ChangeTag::Insert => Sym::Create,
                        ChangeTag::Equal => Sym::None,
                    };
                    let emph = if sym == Sym::Delete { RED } else { GREEN };
                    let mut text = String::new();
                    for (emphasized, s) in change.iter_strings_lossy() {
                        let s = s.trim_end_matches(['\n', '\r']);
                        if emphasized && self.sty.color {
                            let _ = write!(text, "{UNDERLINE}{emph}{s}{RESET}");
                        } else {
                            text.push_str(s);
                        }
                    }
                    out.push(item(depth, sym, text));
                }
            }
            at = last.old_range().end;
        }
        if total > at {
            out.push(hidden_line(total - at));
        }
    }

    /// A string holding a JSON object or array, shown as `jsonencode(…)` with a structural diff.
    pub(super) fn jsonencode(
        &self,
        out: &mut Vec<Line>,
        depth: usize,
        Ends { sym, trailer, tail }: Ends<'_>,
        prefix: &str,
        (old_s, new_s): (Option<&str>, Option<&str>),
        (old, new): Sides<'_>,
    ) {
        let ws = if old.is_some() && old == new && old_s != new_s {
            " # whitespace changes"
        } else {
            ""
        };
        out.push(item(
            depth,
            sym,
            format!("{prefix}jsonencode({trailer}{ws}"),
        ));
        let inner = Differ {
            sty: self.sty,
            show_unchanged: self.show_unchanged,
            sparse: self.sparse,
            annotate: false,
            fields: &[],
            block_paths: &[],
            block_keys: &[],
            sensitive: &[],
        };
        let mut lines = Vec::new();
        inner.entry(&mut lines, depth + 1, "", false, &[], (old, new));
        if lines.is_empty()
            && let Some(v) = old
        {
            // Equal documents: show the outermost brackets with the contents counted.
            let ends = Ends {
                sym: Sym::None,
                trailer: "",
                tail: "",
            };
            inner.container(&mut lines, depth + 1, ends, "", &[], (Some(v), Some(v)));
        }
        // The document as a whole is added or removed with the attribute; its own symbol
        // would only repeat that.
        if matches!(sym, Sym::Create | Sym::Delete)
            && let Some(Line::Item { sym: s, .. }) = lines.first_mut()
        {
            *s = Sym::None;
        }
        out.extend(lines);
        out.push(item(depth, Sym::None, format!("){tail}")));
    }
}

/// A value's two sides: what it was, what it becomes (absent on one side when it is added
/// or removed).
pub(super) type Sides<'v> = (Option<&'v Value>, Option<&'v Value>);

/// How a value's lines open and close: its change symbol, the note after its first line,
/// and what follows its last (` -> null`, a list element's comma).
#[derive(Clone, Copy)]
pub(super) struct Ends<'a> {
    pub(super) sym: Sym,
    pub(super) trailer: &'a str,
    pub(super) tail: &'a str,
}

pub(super) fn whitespace_note(old: Option<&str>, new: Option<&str>) -> &'static str {
    match (old, new) {
        (Some(o), Some(n)) if o != n && o.split_whitespace().eq(n.split_whitespace()) => {
            " # whitespace changes"
        }
        _ => "",
    }
}

pub(super) fn json_container(s: &str) -> Option<Value> {
    let t = s.trim_start();
    if !(t.starts_with('{') || t.starts_with('[')) {
        return None;
    }
    serde_json::from_str::<serde_json::Value>(s)
        .ok()
        .filter(|j| j.is_object() || j.is_array())
        .map(|j| Value::from_json(&j))
}

pub(super) fn child(path: &[PathStep], step: PathStep) -> Vec<PathStep> {
    let mut p = path.to_vec();
    p.push(step);
    p
}

/// Keys of both sides, sorted the way Terraform sorts attributes and map keys.
pub(super) fn sorted_keys<'o>(old: Option<&'o Object>, new: Option<&'o Object>) -> Vec<&'o str> {
    let mut keys: Vec<&str> = old
        .into_iter()
        .chain(new)
        .flat_map(|o| o.keys().map(String::as_str))
        .collect();
    keys.sort_unstable();
    keys.dedup();
    keys
}

/// Lines up the elements of two lists: equal runs pair up, and inside a changed run objects
/// pair in order (an edited block) — or, for keyed blocks (`key` names the key attribute),
/// by their key, so a block of one key is never shown turning into another's — while other
/// elements are removed and added. Each pair carries the index its path uses (the new one
/// when there is a new element).
pub(super) type ElemPair<'v> = (Option<&'v Value>, Option<&'v Value>, usize);

pub(super) fn pair_elements<'v>(
    old: &'v [Value],
    new: &'v [Value],
    key_attr: Option<&str>,
) -> Vec<ElemPair<'v>> {
    // Compared by content, whatever the order of object keys (a JSON document read back
    // from state may list them differently from a fresh rendering).
    pub(super) fn key(v: &Value) -> String {
        match v {
            Value::Object(o) => {
                let mut entries: Vec<(&String, String)> =
                    o.iter().map(|(k, v)| (k, key(v))).collect();
                entries.sort();
                format!("{entries:?}")
            }
            Value::List(l) => format!("{:?}", l.iter().map(key).collect::<Vec<_>>()),
            v => format!("{v:?}"),
        }
    }
    let ok: Vec<String> = old.iter().map(key).collect();
    let nk: Vec<String> = new.iter().map(key).collect();
    let mut pairs = Vec::new();
    for op in similar::capture_diff_slices(Algorithm::Myers, &ok, &nk) {
        let (tag, or, nr) = op.as_tag_tuple();
        match tag {
            DiffTag::Equal => {
                for (i, j) in or.zip(nr) {
                    pairs.push((Some(&old[i]), Some(&new[j]), j));
                }
            }
            DiffTag::Delete => pairs.extend(or.map(|i| (Some(&old[i]), None, i))),
            DiffTag::Insert => pairs.extend(nr.map(|j| (None, Some(&new[j]), j))),
            DiffTag::Replace if key_attr.is_some() => {
                let key_of = |v: &Value| {
                    v.as_object()
                        .and_then(|o| o.get(key_attr.unwrap_or_default()))
                        .map(key)
                };
                let olds: Vec<usize> = or.collect();
                let mut news: Vec<Option<usize>> = nr.map(Some).collect();
                let mut run: Vec<(String, ElemPair<'v>)> = Vec::new();
                for i in olds {
                    let k = key_of(&old[i]);
                    let found = news
                        .iter_mut()
                        .find(|j| j.is_some_and(|j| k.is_some() && key_of(&new[j]) == k))
                        .and_then(Option::take);
                    let sort_key = k.unwrap_or_default();
                    match found {
                        Some(j) => run.push((sort_key, (Some(&old[i]), Some(&new[j]), j))),
                        None => run.push((sort_key, (Some(&old[i]), None, i))),
                    }
                }
                for j in news.into_iter().flatten() {
                    run.push((
                        key_of(&new[j]).unwrap_or_default(),
                        (None, Some(&new[j]), j),
                    ));
                }
                // Keyed blocks are sorted by key: the run is shown in that order.
                run.sort_by(|a, b| a.0.cmp(&b.0));
                pairs.extend(run.into_iter().map(|(_, p)| p));
            }
            DiffTag::Replace => {
                let mut or = or.peekable();
                let mut nr = nr.peekable();
                while let (Some(&i), Some(&j)) = (or.peek(), nr.peek()) {
                    if !(matches!(old[i], Value::Object(_)) && matches!(new[j], Value::Object(_))) {
                        break;
                    }
                    pairs.push((Some(&old[i]), Some(&new[j]), j));
                    or.next();
                    nr.next();
                }
                pairs.extend(or.map(|i| (Some(&old[i]), None, i)));
                pairs.extend(nr.map(|j| (None, Some(&new[j]), j)));
            }
        }
    }
    pairs
}
