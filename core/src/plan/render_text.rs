//! Plan rendering (render_text).
