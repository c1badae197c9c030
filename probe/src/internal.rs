//! What `dtb-gen`, the C ABI, the Python package and the tests need beside the engine API
//! (see the crate root): not a stable interface. The modules stay in the crate's `src/`
//! directory, where the crate's own code names them as `crate::format` and so on.

#[path = "board.rs"]
pub mod board;
#[path = "count.rs"]
pub mod count;
#[path = "format.rs"]
pub mod format;
#[path = "index.rs"]
pub mod index;
#[path = "material.rs"]
pub mod material;
#[path = "position.rs"]
pub mod position;
#[path = "rng.rs"]
pub mod rng;
#[path = "rules.rs"]
pub mod rules;
#[path = "table.rs"]
pub mod table;
#[path = "tablebase.rs"]
pub mod tablebase;
#[path = "value.rs"]
pub mod value;
#[path = "variant.rs"]
pub mod variant;
