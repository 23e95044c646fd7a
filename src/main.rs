fn main() -> std::process::ExitCode {
    winguard::cli::main()
}
