//! Plan rendering (render_markdown).
