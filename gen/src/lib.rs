pub mod solve;
pub mod store;
pub mod write;
