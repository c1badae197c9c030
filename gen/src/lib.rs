pub mod build;
pub mod cli;
pub mod solve;
pub mod store;
pub mod verify;
pub mod write;
