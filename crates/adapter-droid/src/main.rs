//! `checkpoint-droid`: the droid hook adapter; everything lives in its library.

fn main() -> std::process::ExitCode {
    adapter_droid::main()
}
