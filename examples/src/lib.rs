//! Examples of embedding `checkpoint-core`; see `examples/`.
