//! Plan rendering (render_json).
