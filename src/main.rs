// mimalloc rather than the system allocator: a lint builds and drops millions of small maps and
// strings on several threads, which mimalloc (a heap per thread, free lists per page) serves
// with less work than glibc's malloc and free (BENCHMARKS.md).
#[global_allocator]
static GLOBAL: winguard::allocator::Mimalloc = winguard::allocator::Mimalloc;

fn main() -> std::process::ExitCode {
    winguard::cli::main()
}
