#!/usr/bin/env bash
# decision_folds.sh end to end on a stand-in binary (fake_kernelsight.sh): 12 tables x 3 folds
# calibrated, folds 1 and 2 scored and fold 0 never, the summary's figures (folds 1 and 2 priced
# 10% and 20% too slow: 15% pooled; inner CV 10.5%), and the argument checks.
#   decision_folds_sh_test.sh SOURCE_DIR
set -euo pipefail
src=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
export FAKE_KS_LOG="$tmp/calls.log"
out=$("$src/scripts/decision_folds.sh" attention_decode "$tmp/run one" "$src/tests/kernels/fake_kernelsight.sh" 2>/dev/null)
[ "$(grep -c '^calibrate ' "$FAKE_KS_LOG")" = 36 ] || fail "expected 36 calibrations"
[ "$(grep -c '^validate ' "$FAKE_KS_LOG")" = 24 ] || fail "expected 24 scorings"
grep -q '^validate .*--fold 0/3' "$FAKE_KS_LOG" && fail "fold 0 was scored"
grep -q -- '--holdout-fold 0/3' "$FAKE_KS_LOG" || fail "fold 0 was not calibrated"
grep -q 'pooled over 24 tables: 15.00%' <<<"$out" || fail "summary: $out"
grep -q 'inner CV, mean of 12 fold-0 calibrations: 10.50%' <<<"$out" || fail "inner CV: $out"
# The class's rows alone reach the calibrations.
awk -F, 'NR > 1 && $5 != "attention_decode" { bad = 1 } END { exit bad }' "$tmp/run one/csv/h100_sxm.vllm.csv" ||
  fail "other classes' rows in the class CSV"
msg=$("$src/scripts/decision_folds.sh" foo "$tmp/x" 2>&1) && fail "accepted class foo"
grep -q "CLASS must be gemm, attention_prefill or attention_decode, not 'foo'" <<<"$msg" || fail "message: $msg"
msg=$("$src/scripts/decision_folds.sh" gemm "$tmp/run one" "$src/tests/kernels/fake_kernelsight.sh" 2>&1) &&
  fail "reused an existing folder"
grep -q "exists; give a new folder" <<<"$msg" || fail "message: $msg"
echo "decision_folds.sh: ok"
