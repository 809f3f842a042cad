//! brickform state.
