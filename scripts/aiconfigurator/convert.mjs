#!/usr/bin/env node
// Converts AIConfigurator's per-kernel database (ai-dynamo/aiconfigurator, Apache-2.0,
// aic-core/src/aiconfigurator_core/systems/data/<gpu>/<op>/<framework>/<version>/*.parquet)
// into KernelSight's sweep CSVs (kernels/sweep.hpp, with the optional columns framework, version,
// kernel_source, kv_dtype), its MoE layer tables (kernels/moe_layer.hpp) and the collectives CSV
// (data/collectives/README.md).
//
//   node scripts/aiconfigurator/convert.mjs --repo <checkout or bare git dir> \
//        [--out data/sweeps/aiconfigurator] [--moe-out data/moe/aiconfigurator] \
//        [--collectives data/collectives/aiconfigurator.csv] [--gemm-permille 50] \
//        [--attention-permille 65] [--moe-permille 100] [--moe-tp-permille 400]
//        [--gpus a100_sxm,h100_sxm,h200_sxm,b200_sxm,l40s]
//
// Deterministic: the same repository commit and options give byte-identical files. See README.md
// next to this script for what is selected and what is dropped.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { asyncBufferFromFile, parquetReadObjects } from 'hyparquet'
import { compressors } from 'hyparquet-compressors'

const DATA_DIR = 'aic-core/src/aiconfigurator_core/systems/data'

// AIConfigurator system name -> [KernelSight GPU catalogue name, collectives setup, collectives gpu].
// Setups follow data/collectives/collectives.csv (<gpu>_<system>): a100_dgx and b200_hgx are the keys
// `kernelsight validate-collectives` already maps to the dgx_a100 / hgx_b200 topology presets.
const GPUS = {
  a100_sxm: ['a100_sxm_80gb', 'a100_dgx', 'A100'],
  h100_sxm: ['h100_sxm', 'h100_dgx', 'H100'],
  h200_sxm: ['h200', 'h200_hgx', 'H200'],
  b200_sxm: ['b200', 'b200_hgx', 'B200'],
  b300_sxm: ['b300', 'b300_hgx', 'B300'],
  gb200: ['gb200', 'gb200_nvl', 'GB200'],
  l40s: ['l40s', 'l40s_pcie', 'L40S'],
}
const FRAMEWORKS = ['trtllm', 'vllm', 'sglang']
// dtype spellings of the source -> KernelSight dtype names (kernels/dtype.hpp). Anything else
// (fp8_block, int4 weight-only, ...) has no KernelSight dtype and is dropped.
const DTYPES = { bfloat16: 'bf16', float16: 'fp16', half: 'fp16', fp8: 'fp8', float8: 'fp8', int8: 'int8' }
// GEMMs also in NVFP4 (Blackwell): KernelSight's fp4 is NVFP4 with W4A4 GEMMs, as the collectors run
// them (a Linear with QuantAlgo.NVFP4: e2m1 weights and activations, one e4m3 scale per 16). Not an
// attention or KV-cache dtype.
const GEMM_DTYPES = { ...DTYPES, nvfp4: 'fp4' }
const DTYPE_BYTES = { half: 2, float16: 2, bfloat16: 2, int8: 1, fp8: 1 }

function parseArgs(argv) {
  const opts = {
    repo: null,
    out: 'data/sweeps/aiconfigurator',
    moeOut: 'data/moe/aiconfigurator',
    collectives: 'data/collectives/aiconfigurator.csv',
    gemmPermille: 50,
    attentionPermille: 65,
    moePermille: 100,
    // Families without expert parallelism (ep = 1) run on one GPU as the simulator runs them:
    // sampled more densely.
    moeTpPermille: 400,
    // b300_sxm and gb200 are opt-in: KernelSight has no GPU spec for them yet.
    gpus: ['a100_sxm', 'h100_sxm', 'h200_sxm', 'b200_sxm', 'l40s'],
  }
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i]
    const next = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`)
      return argv[++i]
    }
    if (a === '--repo') opts.repo = next()
    else if (a === '--out') opts.out = next()
    else if (a === '--collectives') opts.collectives = next()
    else if (a === '--moe-out') opts.moeOut = next()
    else if (a === '--moe-permille') opts.moePermille = Number(next())
    else if (a === '--moe-tp-permille') opts.moeTpPermille = Number(next())
    else if (a === '--gemm-permille') opts.gemmPermille = Number(next())
    else if (a === '--attention-permille') opts.attentionPermille = Number(next())
    else if (a === '--gpus') opts.gpus = next().split(',')
    else if (a === '-h' || a === '--help') {
      console.log(fs.readFileSync(new URL(import.meta.url)).toString().split('\n').slice(1, 15).join('\n'))
      process.exit(0)
    } else throw new Error(`unknown argument ${a}`)
  }
  for (const g of opts.gpus) if (!GPUS[g]) throw new Error(`--gpus: unknown system ${g} (known: ${Object.keys(GPUS).join(', ')})`)
  if (!opts.repo) throw new Error('--repo <aiconfigurator checkout or bare git dir> is required')
  for (const k of ['gemmPermille', 'attentionPermille', 'moePermille', 'moeTpPermille'])
    if (!(opts[k] >= 0 && opts[k] <= 1000)) throw new Error(`${k} must be in 0..1000`)
  return opts
}

// The data directory: the checkout's own, or extracted from a bare repository's HEAD with git archive.
function resolveData(repo, gpus) {
  const git = (...args) =>
    execFileSync('git', ['-C', repo, ...args], { encoding: 'utf8', maxBuffer: 1 << 30, stdio: ['ignore', 'pipe', 'ignore'] })
  let commit = 'unknown'
  try {
    commit = git('rev-parse', 'HEAD').trim()
  } catch {
    // not a git checkout: a plain copy of the tree
  }
  if (fs.existsSync(path.join(repo, DATA_DIR))) return { dir: path.join(repo, DATA_DIR), commit }
  if (commit === 'unknown') throw new Error(`${repo}: neither a checkout with ${DATA_DIR} nor a git repository`)
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'aic-'))
  const wanted = []
  for (const gpu of gpus)
    for (const op of ['gemm', 'attention', 'moe', 'comm'])
      if (git('ls-tree', '--name-only', 'HEAD', `${DATA_DIR}/${gpu}/${op}`).trim()) wanted.push(`${DATA_DIR}/${gpu}/${op}`)
  const tar = path.join(tmp, 'data.tar')
  execFileSync('git', ['-C', repo, 'archive', '-o', tar, 'HEAD', ...wanted])
  execFileSync('tar', ['-xf', tar, '-C', tmp])
  fs.rmSync(tar)
  return { dir: path.join(tmp, DATA_DIR), commit, tmp }
}

// Version order: numeric release parts, then a pre-release (rc/a/b/dev) below the release, post above.
function versionKey(v) {
  const m = /^(\d+(?:\.\d+)*)(?:\.?(rc|a|b|dev)(\d+))?(?:\.?post(\d+))?$/.exec(v)
  if (!m) return null
  return { rel: m[1].split('.').map(Number), pre: m[2] ? Number(m[3]) : Infinity, post: m[4] ? Number(m[4]) : -1 }
}
function compareVersions(a, b) {
  const x = versionKey(a), y = versionKey(b)
  if (!x || !y) return a < b ? -1 : a > b ? 1 : 0
  for (let i = 0; i < Math.max(x.rel.length, y.rel.length); ++i) {
    const d = (x.rel[i] ?? 0) - (y.rel[i] ?? 0)
    if (d) return d
  }
  if (x.pre !== y.pre) return x.pre < y.pre ? -1 : 1
  return x.post - y.post
}

// The newest <dir>/<version>/<file> that holds the table itself (reuse.yaml-only directories are
// aliases of another version's data and are skipped).
function newestWithTable(dir, file) {
  if (!fs.existsSync(dir)) return null
  const versions = fs
    .readdirSync(dir)
    .filter((v) => fs.existsSync(path.join(dir, v, file)))
    .sort(compareVersions)
  return versions.length ? { version: versions[versions.length - 1], file: path.join(dir, versions.at(-1), file) } : null
}

// FNV-1a 32-bit of a family key: a deterministic, GPU-independent choice of which families to keep.
function fnv1a(text) {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; ++i) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, 0x01000193) >>> 0
  }
  return h
}
const keepFamily = (key, permille) => fnv1a(key) % 1000 < permille

// Rows whose own `version` differs from their directory's (data carried over from an older
// collection): counted and reported, the directory's version is written.
const versionNotes = {}
async function readParquet(file, dirVersion) {
  const rows = await parquetReadObjects({ file: await asyncBufferFromFile(file), compressors })
  for (const r of rows)
    if (r.version !== undefined && String(r.version) !== dirVersion) count(versionNotes, `${file.split(DATA_DIR + '/')[1] ?? file}: row version ${r.version}`)
  return rows.map((r) => {
    const o = {}
    for (const [k, v] of Object.entries(r)) o[k] = typeof v === 'bigint' ? Number(v) : v
    return o
  })
}

// Microseconds from milliseconds, 6 significant digits (as format_sweep writes them).
const us = (ms) => String(Number((ms * 1000).toPrecision(6)))

const SWEEP_HEADER =
  'gpu,source,model,label,op,dtype,m,n,k,batch,tokens,hidden,heads,kv_heads,head_dim,q_len,kv_len,time_us,' +
  'framework,version,kernel_source,kv_dtype'

function sweepRow(f) {
  const cells = [f.gpu, f.source, '', f.label, f.op, f.dtype]
  for (const c of ['m', 'n', 'k', 'batch', 'tokens', 'hidden', 'heads', 'kv_heads', 'head_dim', 'q_len', 'kv_len'])
    cells.push(f[c] === undefined ? '' : String(f[c]))
  cells.push(f.time_us, f.framework, f.version, f.kernel_source, f.kv_dtype ?? '')
  for (const c of cells) if (/[,"\n]/.test(c)) throw new Error(`cell needs quoting: ${c}`)
  return cells.join(',')
}

function count(map, key, n = 1) {
  map[key] = (map[key] ?? 0) + n
}

async function convertGemm(file, gpu, fw, version, opts, stats) {
  const out = []
  for (const r of await readParquet(file, version)) {
    const dtype = GEMM_DTYPES[r.gemm_dtype]
    if (!dtype) {
      count(stats.dropped, `gemm dtype ${r.gemm_dtype}`)
      continue
    }
    if (!keepFamily(`${r.n}x${r.k}`, opts.gemmPermille)) {
      count(stats.dropped, 'gemm N x K family not sampled')
      continue
    }
    if (!(r.latency > 0)) {
      count(stats.dropped, 'non-positive latency')
      continue
    }
    out.push({
      gpu, source: `aic-${fw}-${dtype}`, label: r.op_name, op: 'gemm', dtype, m: r.m, n: r.n, k: r.k,
      time_us: us(r.latency), framework: fw, version, kernel_source: r.kernel_source,
    })
  }
  return out
}

async function convertAttention(file, phase, gpu, fw, version, opts, stats) {
  const out = []
  for (const r of await readParquet(file, version)) {
    // Older tables (e.g. a100_sxm vllm 0.14.0) have no window_size / beam_width: full attention, beam 1.
    if (Number(r.window_size ?? 0) !== 0) {
      count(stats.dropped, `${phase} attention sliding window`)
      continue
    }
    if (Number(r.beam_width ?? 1) !== 1) {
      count(stats.dropped, `${phase} attention beam_width != 1`)
      continue
    }
    const dtype = DTYPES[r.attn_dtype], kv = DTYPES[r.kv_cache_dtype]
    if (!dtype || !kv) {
      count(stats.dropped, `${phase} attention dtype ${r.attn_dtype}/${r.kv_cache_dtype}`)
      continue
    }
    const family = [r.num_heads, r.num_key_value_heads, r.head_dim, r.attn_dtype, r.kv_cache_dtype].join('/')
    if (!keepFamily(family, opts.attentionPermille)) {
      count(stats.dropped, `${phase} attention heads/kv_heads/head_dim/dtype family not sampled`)
      continue
    }
    if (!(r.latency > 0)) {
      count(stats.dropped, 'non-positive latency')
      continue
    }
    const row = {
      gpu, source: `aic-${fw}-${dtype}`, label: r.op_name, dtype, batch: r.batch_size,
      heads: r.num_heads, kv_heads: r.num_key_value_heads, head_dim: r.head_dim,
      time_us: us(r.latency), framework: fw, version, kernel_source: r.kernel_source, kv_dtype: kv,
    }
    if (phase === 'context') {
      // Collectors write step = 0 and isl = the prompt length: a whole-prompt prefill, no cache.
      if (Number(r.step) !== 0) {
        count(stats.dropped, 'context attention with step != 0')
        continue
      }
      Object.assign(row, { op: 'attention_prefill', q_len: r.isl, kv_len: r.isl })
    } else {
      // Collectors write isl = 1 and step = the tokens already in the KV cache; the decode step
      // attends over step + 1 keys (the cache and the new token).
      if (Number(r.isl) !== 1) {
        count(stats.dropped, 'generation attention with isl != 1')
        continue
      }
      Object.assign(row, { op: 'attention_decode', kv_len: Number(r.step) + 1 })
    }
    out.push(row)
  }
  return out
}

// MoE layers (moe/<framework>/<version>/moe_perf.parquet): one rank's routed experts, timed whole
// (the collectors feed router logits, then run the engine's fused MoE: top-k, the grouped gate/up
// GEMM, the activation, the grouped down GEMM and the weighted sum). Kept: balanced routing (what
// KernelSight's uniform-routing model prices), 16-bit and per-tensor fp8 experts, SwiGLU experts.
const MOE_HEADER = 'gpu,source,dtype,tokens,hidden,inter,top_k,experts,tp,ep,time_us,framework,version,kernel_source'
const MOE_DTYPES = { bfloat16: 'bf16', fp8: 'fp8' }

async function convertMoe(file, gpu, fw, version, opts, stats) {
  const out = []
  for (const r of await readParquet(file, version)) {
    if (r.distribution !== 'balanced') {
      count(stats.dropped, `moe distribution ${String(r.distribution).replace(/_[0-9.]+$/, '')}`)
      continue
    }
    const dtype = MOE_DTYPES[r.moe_dtype]
    if (!dtype) {
      count(stats.dropped, `moe dtype ${r.moe_dtype}`)
      continue
    }
    // Relu2 experts (no gate) and the SwiGLU-approximated-by-SiLU Marlin rows are not the SwiGLU
    // layer the simulator prices.
    if (/nongated|situ/.test(r.kernel_source)) {
      count(stats.dropped, `moe kernel_source ${r.kernel_source}`)
      continue
    }
    const family = [r.hidden_size, r.inter_size, r.topk, r.num_experts, r.moe_tp_size, r.moe_ep_size, r.moe_dtype].join('/')
    if (!keepFamily(family, Number(r.moe_ep_size) === 1 ? opts.moeTpPermille : opts.moePermille)) {
      count(stats.dropped, 'moe hidden/inter/topk/experts/tp/ep/dtype family not sampled')
      continue
    }
    if (!(r.latency > 0)) {
      count(stats.dropped, 'non-positive latency')
      continue
    }
    const cells = [gpu, `aic-${fw}-${dtype}`, dtype, r.num_tokens, r.hidden_size, r.inter_size, r.topk, r.num_experts,
      r.moe_tp_size, r.moe_ep_size, us(r.latency), fw, version, r.kernel_source].map(String)
    for (const c of cells) if (/[,"\n]/.test(c)) throw new Error(`cell needs quoting: ${c}`)
    out.push(cells.join(','))
  }
  return out
}

const COLLECTIVES_HEADER = 'source,setup,gpu,collective,num_workers,devices_per_node,groups,size_bytes,time_us'
const COLLECTIVE_NAMES = { all_reduce: 'all_reduce', all_gather: 'all_gather', reduce_scatter: 'reduce_scatter', alltoall: 'all_to_all' }

async function main() {
  const opts = parseArgs(process.argv.slice(2))
  const { dir, commit, tmp } = resolveData(opts.repo, opts.gpus)
  fs.mkdirSync(opts.out, { recursive: true })
  const summary = []
  const collectiveRows = []
  const stats = { dropped: {} }
  try {
    for (const aic of opts.gpus) {
      const [gpu, setup, label] = GPUS[aic]
      if (!fs.existsSync(path.join(dir, aic))) throw new Error(`${aic}: not in ${dir}`)
      for (const fw of FRAMEWORKS) {
        const rows = []
        const tables = [
          ['gemm', path.join(dir, aic, 'gemm', fw), 'gemm_perf.parquet'],
          ['context', path.join(dir, aic, 'attention', fw), 'context_attention_perf.parquet'],
          ['generation', path.join(dir, aic, 'attention', fw), 'generation_attention_perf.parquet'],
        ]
        const versions = {}
        for (const [kind, tdir, file] of tables) {
          const found = newestWithTable(tdir, file)
          if (!found) continue
          versions[kind] = found.version
          const got =
            kind === 'gemm'
              ? await convertGemm(found.file, gpu, fw, found.version, opts, stats)
              : await convertAttention(found.file, kind, gpu, fw, found.version, opts, stats)
          summary.push({ gpu: aic, fw, table: file.replace('.parquet', ''), version: found.version, rows: got.length })
          rows.push(...got)
        }
        const moe = newestWithTable(path.join(dir, aic, 'moe', fw), 'moe_perf.parquet')
        if (moe) {
          const got = await convertMoe(moe.file, gpu, fw, moe.version, opts, stats)
          summary.push({ gpu: aic, fw, table: 'moe_perf', version: moe.version, rows: got.length })
          if (got.length) {
            fs.mkdirSync(opts.moeOut, { recursive: true })
            fs.writeFileSync(path.join(opts.moeOut, `${aic}.${fw}.csv`), [MOE_HEADER, ...got].join('\n') + '\n')
          }
        }
        if (!rows.length) continue
        const outFile = path.join(opts.out, `${aic}.${fw}.csv`)
        fs.writeFileSync(outFile, [SWEEP_HEADER, ...rows.map(sweepRow)].join('\n') + '\n')
        // Custom all-reduce of the same engine (comm/<framework>/<version>/custom_allreduce_perf.parquet).
        const car = newestWithTable(path.join(dir, aic, 'comm', fw), 'custom_allreduce_perf.parquet')
        if (car) {
          let n = 0
          for (const r of await readParquet(car.file, car.version)) {
            const bytes = DTYPE_BYTES[r.allreduce_dtype]
            if (!bytes || !(r.latency > 0)) {
              count(stats.dropped, `custom all-reduce dtype ${r.allreduce_dtype}`)
              continue
            }
            // message_size is the element count of the all-reduced tensor (collect_all_reduce.py).
            const backend = r.backend ? `-${String(r.backend).replace(/^(vllm|sglang)_/, '')}` : ''
            collectiveRows.push(
              [`aic-custom-${fw}-${car.version}${backend}`, setup, label, 'all_reduce', r.num_gpus, r.num_gpus, 1,
                r.message_size * bytes, us(r.latency)].join(','),
            )
            ++n
          }
          summary.push({ gpu: aic, fw, table: 'custom_allreduce_perf', version: car.version, rows: n })
        }
      }
      // NCCL (comm/nccl/<nccl version>/nccl_perf.parquet): 16-bit rows only.
      const nccl = newestWithTable(path.join(dir, aic, 'comm', 'nccl'), 'nccl_perf.parquet')
      if (nccl) {
        let n = 0
        for (const r of await readParquet(nccl.file, nccl.version)) {
          const name = COLLECTIVE_NAMES[r.op_name]
          if (r.nccl_dtype !== 'half' || !name || !(r.latency > 0)) {
            count(stats.dropped, `nccl ${r.nccl_dtype} ${r.op_name}`)
            continue
          }
          // message_size = nccl-tests' byte size // bytes per element (collect_nccl.py): elements.
          collectiveRows.push(
            [`aic-nccl-${nccl.version}`, setup, label, name, r.num_gpus, r.num_gpus, 1,
              r.message_size * DTYPE_BYTES.half, us(r.latency)].join(','),
          )
          ++n
        }
        summary.push({ gpu: aic, fw: 'nccl', table: 'nccl_perf', version: nccl.version, rows: n })
      }
    }
  } finally {
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true })
  }
  fs.mkdirSync(path.dirname(opts.collectives), { recursive: true })
  fs.writeFileSync(opts.collectives, [COLLECTIVES_HEADER, ...collectiveRows].join('\n') + '\n')
  console.log(`aiconfigurator commit ${commit}`)
  console.log('gpu\tframework\ttable\tversion\trows')
  for (const s of summary) console.log(`${s.gpu}\t${s.fw}\t${s.table}\t${s.version}\t${s.rows}`)
  console.log('dropped:')
  for (const [k, v] of Object.entries(stats.dropped).sort()) console.log(`  ${k}: ${v}`)
  console.log('rows whose version column differs from their directory (directory version written):')
  for (const [k, v] of Object.entries(versionNotes).sort()) console.log(`  ${k}: ${v}`)
}

main().catch((e) => {
  console.error(`convert.mjs: ${e.message}`)
  process.exit(1)
})
