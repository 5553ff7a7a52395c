#!/usr/bin/env bash
# A stand-in for kernelsight in decision_folds.sh's test: `calibrate` writes its -o file and the
# inner-CV line calibrate prints; `validate` writes one decode row per run whose prediction is
# (10 x fold) % too slow, to the --rows-out file. Records every call in $FAKE_KS_LOG.
set -euo pipefail
echo "$*" >>"$FAKE_KS_LOG"
cmd=$1; shift
out="" rows="" fold=""
while [ $# -gt 0 ]; do
  case "$1" in
    -o) out=$2; shift ;;
    --rows-out) rows=$2; shift ;;
    --fold) fold=${2%%/*}; shift ;;
  esac
  shift
done
case "$cmd" in
  calibrate)
    echo "kernel_efficiency_model: 1" >"$out"
    echo "attention_decode residual: depth 4, learning rate 0.4, 100 trees (5-fold CV over 9 shape families: 10.5%)" >&2 ;;
  validate)
    printf 'model,label,op,class,dtype,m,n,k,tokens,hidden,measured_us,predicted_us,roofline_us,batch,heads,kv_heads,head_dim,q_len,kv_len\n' >"$rows"
    printf ',d,attention_decode,attention_decode,bf16,8,8192,128,0,0,100,%d,50,8,32,8,128,1,1024\n' $((100 + 10 * fold)) >>"$rows" ;;
  *) exit 3 ;;
esac
