//! The `checkpoint` command; everything lives in the `checkpoint_cli` library.

fn main() -> std::process::ExitCode {
    checkpoint_cli::main()
}
