#!/usr/bin/env bash
# Each built-in rule's instructions in one `validate` review of the realistic pod: the review
# with only that rule on, less the review with every rule off (BENCHMARKS.md). The first rule to
# read the pod's facts pays for them, so a rule's figure includes the facts it is the first to
# need; the figures don't add up to the whole review's.
#
#   benches/review_rules.sh REVIEW_BENCH CHECKOUT
#
# REVIEW_BENCH is the binary `cargo bench --bench review --no-run` builds
# (target/release/deps/review-*), CHECKOUT the checkout it was built from (for the rule names).
# Prints one line a rule: its name and its instructions per review (the floor first, as `none`).
set -u
review=$1 checkout=$2
. "$(dirname "$0")/callgrind.sh"
per_review() { WINGUARD_BENCH_RULE=$1 per_call validate-no-rules 'winguard::admission::review'; }
floor=$(per_review none)
echo "none $floor"
for file in "$checkout"/rules/*.yaml; do
  rule=$(basename "$file" .yaml)
  echo "$rule $(( $(per_review "$rule") - floor ))"
done
