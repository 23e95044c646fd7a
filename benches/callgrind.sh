# Shared by benches/instructions.sh and benches/review_rules.sh (sourced, not run).

# The instructions callgrind reports on stdin ("Collected : N").
collected() { grep -o "Collected : [0-9]*" | awk '{print $3}'; }

# One call's instructions in the review bench $review: its case $1 counted with callgrind
# (`--toggle-collect=$2`, one thread) at 400 and at 800 calls, the difference over 400, so the
# bench's loading and what only the first call does (compiling the catalog patterns its image
# reaches) cancel out. Any further environment (WINGUARD_BENCH_RULE) passes through.
per_call() {
  local counts=()
  for reviews in 400 800; do
    counts+=("$(WINGUARD_BENCH_ONLY=$1 WINGUARD_BENCH_REVIEWS=$reviews RAYON_NUM_THREADS=1 \
      valgrind --tool=callgrind --callgrind-out-file=/dev/null --toggle-collect="$2" \
      "$review" 2>&1 >/dev/null | collected)")
  done
  echo $(( (counts[1] - counts[0]) / 400 ))
}
