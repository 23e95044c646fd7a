// mimalloc rather than the system allocator: a lint builds and drops millions of small maps and
// strings on several threads, and glibc's malloc and free took a quarter of the run (BENCHMARKS.md).
#[global_allocator]
static GLOBAL: winguard::allocator::Mimalloc = winguard::allocator::Mimalloc;

fn main() -> std::process::ExitCode {
    winguard::cli::main()
}
