pub mod board;
pub mod fen;
pub mod format;
pub mod index;
pub mod material;
pub mod movegen;
pub mod position;
pub mod rules;
pub mod table;
pub mod tablebase;
pub mod value;

pub use material::Material;
pub use position::Position;
pub use rules::{Color, Rules};
pub use tablebase::{Dtw, ProbeError, Tablebase};
pub use value::Wld;
