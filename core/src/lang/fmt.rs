//! `brickform fmt`: canonical formatting of configuration files.
