#!/usr/bin/env node
// Convert chosen tables of AIConfigurator's collected perf database (NVIDIA ai-dynamo/aiconfigurator,
// Apache-2.0; parquet files under aic-core/src/aiconfigurator_core/systems/data/<gpu>/) into k3sim
// measurement CSVs: the calib-grid header (op,reps,median_s,p10_s,p90_s; op in `k3sim op` syntax)
// followed by provenance columns that `k3sim calibrate` and `k3sim trace validate` ignore.
//
// Setup (once; the packages go to tools/aic/node_modules, which git ignores):
//   npm ci --prefix tools/aic
// Run (GITDIR: a clone or a bare mirror of ai-dynamo/aiconfigurator):
//   node tools/aic/convert.mjs --git GITDIR [--rev HEAD] [--gpus h100_sxm,h200_sxm,...]
//        [--out bench/public/aic] [--fetched YYYY-MM-DD] [--k3sim build/cli/k3sim]
//
// Every table this converts, and every one it leaves out with the reason, is listed in SOURCES and
// NOT_CONVERTED below: the generated README and docs read them from here (one place).
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { parquetReadObjects } from 'hyparquet'
import { compressors } from 'hyparquet-compressors'

const DATA = 'aic-core/src/aiconfigurator_core/systems/data'
const LICENSE = 'Apache-2.0'
const REPO = 'github.com/ai-dynamo/aiconfigurator'
const DEFAULT_GPUS = ['h100_sxm', 'h200_sxm', 'b200_sxm', 'b300_sxm', 'gb200']
const HEADER = 'op,reps,median_s,p10_s,p90_s,device,framework,version,kernel_source,table,source_commit,license,mapping'

// GEMM grid subsample (the tables hold 74 m x 22 n x 22 k per dtype): every power of 2 from 1 to
// 32768 for m (the powers of 4 train under calib_op_trains, the others are held out), and n, k each
// from K3's widths (hidden 7168, latent 3584, expert inter 3072, shared MLP 6144, KDA/attention
// projection 12288, q_lora 1536, kv_lora 512) plus 4096.
const GEMM_M = new Set([1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768])
const GEMM_NK = new Set([512, 1536, 3072, 3584, 4096, 6144, 7168, 12288])
const gemmGrid = (r) => GEMM_M.has(r.m) && GEMM_NK.has(r.n) && GEMM_NK.has(r.k)
// MLA subsample: heads per GPU from 16 to 128 (K3's 96 heads at TP 1..8 give 96..12; DeepSeek's 128),
// every batch and length of the grid.
const MLA_HEADS = new Set([16, 32, 64, 128])

// GPUs per node in the DeepEP tables (node_num = 1): the collector runs on every visible GPU of one
// node. HGX H100/H200/B200/B300 have 8; a GB200 compute tray has 4.
const NODE_GPUS = { h100_sxm: 8, h200_sxm: 8, b200_sxm: 8, b300_sxm: 8, gb200: 4 }

const ms = (x) => x * 1e-3
const us = (x) => x * 1e-6
const NCCL_KIND = { all_reduce: 'allreduce', all_gather: 'allgather', reduce_scatter: 'reducescatter',
	alltoall: 'alltoall' }

// A fused MoE layer (gate/up GEMM, activation, down GEMM) as one grouped GEMM with the same FLOPs and
// weight bytes: m = tokens x top_k rows, n = 3 x inter / tp (gate + up + down), k = hidden; the
// balanced router gives min(experts, rows) experts rows.
function moeOp(r, dtype) {
	const m = r.num_tokens * r.topk
	const n = 3 * (r.inter_size / r.moe_tp_size)
	return `grouped_gemm m=${m} n=${n} k=${r.hidden_size} groups=${r.num_experts} ` +
		`touched=${Math.min(r.num_experts, m)} ${dtype}`
}
const MOE_DTYPE = {
	bfloat16: ['dtype=bf16', 'approx:fused-moe-as-grouped-gemm'],
	fp8_block: ['dtype=fp8', 'approx:fused-moe-as-grouped-gemm;fp8-block-scales-as-fp8'],
	w4a16_mxfp4: ['dtype=bf16 w_dtype=mxfp4', 'approx:fused-moe-as-grouped-gemm'],
	w4a8_mxfp4_mxfp8: ['dtype=mxfp8 w_dtype=mxfp4', 'approx:fused-moe-as-grouped-gemm'],
	nvfp4: ['dtype=mxfp4', 'approx:fused-moe-as-grouped-gemm;nvfp4-as-mxfp4'],
}
const isK3Moe = (r) => r.num_experts === 896 && r.topk === 16 && r.hidden_size === 3584 && r.inter_size === 3072
const isDsv3Moe = (r) => r.num_experts === 256 && r.topk === 8 && r.hidden_size === 7168 && r.inter_size === 2048

// name: the CSV written per GPU; dir/prefer/file: the table (the first framework/version in prefer
// that the GPU's snapshot has); keep: which rows; op: the k3sim op; mapping: exact or approx:tags;
// time_s: the row's time in seconds.
export const SOURCES = [
	...[['bf16', 'bfloat16', 'dtype=bf16', 'exact'],
		['fp8', 'fp8', 'dtype=fp8', 'exact'],
		['fp8-block', 'fp8_block', 'dtype=fp8', 'approx:fp8-block-scales-as-fp8'],
		['nvfp4', 'nvfp4', 'dtype=mxfp4', 'approx:nvfp4-as-mxfp4']].map(([tag, aic, dt, mapping]) => ({
		name: `gemm-${tag}`, kind: 'gemm', dir: 'gemm', prefer: ['sglang/0.5.14'], file: 'gemm_perf.parquet',
		what: `dense GEMM, ${aic} (subsampled grid, see GEMM_M/GEMM_NK)`,
		keep: (r) => r.gemm_dtype === aic && gemmGrid(r),
		op: (r) => `gemm m=${r.m} n=${r.n} k=${r.k} ${dt}`,
		mapping: () => mapping,
		time_s: (r) => ms(r.latency),
	})),
	{
		name: 'nccl', kind: 'allreduce/allgather/reducescatter/alltoall', dir: 'comm',
		prefer: ['nccl/2.29.2'], file: 'nccl_perf.parquet',
		what: 'nccl-tests out-of-place time, half (bytes = message_size x 2, as nccl-tests counts the buffer)',
		keep: (r) => r.nccl_dtype === 'half' && NCCL_KIND[r.op_name] !== undefined,
		op: (r) => `${NCCL_KIND[r.op_name]} bytes=${r.message_size * 2} ranks=${r.num_gpus}`,
		mapping: () => 'exact',
		time_s: (r) => ms(r.latency),
	},
	{
		name: 'custom-allreduce', kind: 'allreduce', dir: 'comm', prefer: ['sglang/0.5.14'],
		file: 'custom_allreduce_perf.parquet',
		what: "SGLang's custom all-reduce under CUDA graph replay, bf16 (the eager rows time a clone and host launch too)",
		keep: (r) => r.backend === 'sglang_graph' && r.allreduce_dtype === 'bfloat16',
		op: (r) => `allreduce bytes=${r.message_size * 2} ranks=${r.num_gpus}`,
		mapping: () => 'exact',
		time_s: (r) => ms(r.latency),
	},
	...['dispatch', 'combine'].map((phase) => ({
		name: `deepep-ll-${phase}`, kind: `ep_${phase}`, dir: 'comm', prefer: ['sglang/0.5.12'],
		file: 'wideep_deepep_ll_perf.parquet',
		what: `DeepEP low-latency ${phase} on one node (ranks = GPUs per node)`,
		keep: (r) => r.node_num === 1,
		op: (r, gpu) => `ep_${phase} tokens=${r.num_token} ranks=${NODE_GPUS[gpu]} experts=${r.num_experts} ` +
			`top_k=${r.num_topk} width=${r.hidden_size} dtype=${phase === 'dispatch' ? 'fp8' : 'bf16'}`,
		mapping: () => 'approx:ranks-from-node-size',
		time_s: (r) => us(phase === 'dispatch' ? r.dispatch_avg_t_us : r.combine_avg_t_us),
	})),
	...['dispatch', 'combine'].map((phase) => ({
		name: `deepep-normal-${phase}`, kind: `ep_${phase}`, dir: 'comm', prefer: ['sglang/0.5.12'],
		file: 'wideep_deepep_normal_perf.parquet',
		what: `DeepEP normal (intranode) ${phase} with 20 SMs (DeepEP's default), transmit + notify`,
		keep: (r) => r.node_num === 1 && r[`${phase}_sms`] === 20,
		op: (r, gpu) => `ep_${phase} tokens=${r.num_token} ranks=${NODE_GPUS[gpu]} experts=${r.num_experts} ` +
			`top_k=${r.num_topk} width=${r.hidden_size} dtype=${phase === 'dispatch' ? 'fp8' : 'bf16'}`,
		mapping: () => phase === 'dispatch' ? 'approx:ranks-from-node-size;dispatch-dtype-fp8-or-bf16-by-build'
			: 'approx:ranks-from-node-size',
		time_s: (r) => us(r[`${phase}_transmit_us`] + r[`${phase}_notify_us`]),
	})),
	{
		name: 'mla-decode', kind: 'mla_decode', dir: 'mla', prefer: ['sglang/0.5.14'],
		file: 'generation_mla_perf.parquet',
		what: 'MLA decode attention core (DeepSeek dims: latent 512, rope 64), heads per GPU (see MLA_HEADS), ctx = cached tokens',
		keep: (r) => MLA_HEADS.has(r.num_heads),
		op: (r) => `mla_decode b=${r.batch_size} heads=${r.num_heads} ctx=${r.step} ` +
			`kv=${r.kv_cache_dtype === 'fp8' ? 'fp8' : 'bf16'}`,
		mapping: (r) => r.kv_cache_dtype === 'fp8' ? 'approx:fp8-cache-layout' : 'exact',
		time_s: (r) => ms(r.latency),
	},
	{
		name: 'mla-prefill', kind: 'mla_prefill', dir: 'mla', prefer: ['sglang/0.5.14'],
		file: 'context_mla_perf.parquet',
		what: 'MLA prefill attention core, no prefix, heads per GPU (see MLA_HEADS); trtllm_mla runs it unabsorbed (192/128), fa3/triton absorbed (576/512)',
		keep: (r) => MLA_HEADS.has(r.num_heads),
		op: (r) => `mla_prefill b=${r.batch_size} t=${r.isl} heads=${r.num_heads} ` +
			(r.kernel_source === 'trtllm_mla' ? 'dqk=192 dv=128' : 'dqk=576 dv=512') +
			` kv=${r.kv_cache_dtype === 'fp8' ? 'fp8' : 'bf16'}`,
		mapping: (r) => r.kernel_source === 'trtllm_mla' ? 'exact' : 'approx:absorbed-prefill-bytes',
		time_s: (r) => ms(r.latency),
	},
	...[['sglang', 'sglang/0.5.16'], ['vllm', 'vllm/0.1.dev19262']].map(([fw, ver]) => ({
		name: `kda-${fw}`, kind: 'kda_chunk/kda_decode', dir: 'kda', prefer: [ver], file: 'kda_perf.parquet',
		what: 'Kimi K3 KDA (FP32 state): chunked prefill scan, fused decode (ShortConv + recurrence), '
			+ 'recurrence-only decode, chain verify',
		keep: (r) => ['chunk_kda', 'flashkda_fwd', 'kda_fused_decode', 'fused_kda_decode',
			'fused_recurrent_kda_packed_decode', 'fused_sigmoid_gating_delta_rule_update',
			'fused_recurrent_kda'].includes(r.kernel_source),
		op: (r) => {
			const dims = `h=${r.num_v_heads} k=${r.head_k_dim} v=${r.head_v_dim} state=fp32`
			if (r.phase === 'context')
				return `kda_chunk b=${r.batch_size} t=${r.seq_len} ${dims}`
			if (r.phase === 'verify')
				return `kda_decode b=${r.batch_size} ${dims} t=${r.seq_len} conv=0`
			const fused = r.kernel_source === 'kda_fused_decode' || r.kernel_source === 'fused_kda_decode'
			return `kda_decode b=${r.batch_size} ${dims} conv=${fused ? r.d_conv : 0}`
		},
		mapping: (r) => r.phase === 'verify' ? 'approx:chain-verify-writes-intermediate-states' : 'exact',
		time_s: (r) => ms(r.latency),
	})),
	...[['k3', isK3Moe, 'K3 LatentMoE (896 experts, top-16, hidden 3584, inter 3072)'],
		['dsv3', isDsv3Moe, 'DeepSeek-V3 MoE (256 experts, top-8, hidden 7168, inter 2048)']].map(
		([tag, shape, desc]) => ({
			name: `moe-${tag}`, kind: 'grouped_gemm', dir: 'moe', prefer: ['sglang/0.5.14'], file: 'moe_perf.parquet',
			what: `${desc}: whole fused MoE, balanced routing, EP 1, every TP`,
			keep: (r) => shape(r) && r.distribution === 'balanced' && r.moe_ep_size === 1 &&
				MOE_DTYPE[r.moe_dtype] !== undefined,
			op: (r) => moeOp(r, MOE_DTYPE[r.moe_dtype][0]),
			mapping: (r) => MOE_DTYPE[r.moe_dtype][1],
			time_s: (r) => ms(r.latency),
		})),
]

// What the converter leaves out, and why (also written into the README).
export const NOT_CONVERTED = [
	['attention/context_attention_perf, generation_attention_perf',
		'GQA/MHA attention of non-MLA models: k3sim has no op for it (K3 attends with MLA and KDA only)'],
	['encoder_attention', 'vision-encoder attention: no k3sim op'],
	['mla/mla_context_module_perf, mla_generation_module_perf, mla_bmm',
		'whole MLA modules (projections + attention) and the absorbed BMMs: k3sim splits MLA into gemm + mla_* ops, so a module time matches no single op'],
	['mla/wideep_*', 'the same MLA kernels under SGLang wide-EP: duplicates of the dense tables for k3sim'],
	['sparse_attention (DSA, DSV4, GLM5 modules)', 'module times with projections and indexer top-k; k3sim dsa_decode is the attention core only'],
	['linear_attention (GDN, Mamba2), mhc, msa', 'other models\' layers: no k3sim op'],
	['kda rows causal_conv1d_*', 'the ShortConv alone (prefill and decode): no k3sim op; kda_decode conv=4 covers it only fused'],
	['moe rows with power-law routing or EP > 1', 'grouped_gemm has no routing-skew key; EP > 1 rows time rank 0 of a skewed split'],
	['moe rows of other models and dtypes (int4, w4afp8, ...)', 'kept small: K3 and DeepSeek-V3 shapes only (the converter takes others by adding a SOURCES entry)'],
	['moe/wideep_*, dsv4_megamoe, mlp', 'wide-EP module times (dispatch + experts + combine) and dense MLP modules: no single k3sim op'],
	['comm custom_allreduce eager rows', 'time a tensor clone and the host launch per call, not the collective'],
	['comm nccl int8 rows', 'same byte grid as the half rows; k3sim collectives have no dtype'],
	['comm/trtllm_alltoall (GB200)', 'TRT-LLM MNNVL all-to-all for MoE: k3sim ep_* models DeepEP-style dispatch; left for a later pass'],
	['quantize (computescale, scale_matrix)', 'activation quantization kernels: no k3sim op'],
]

function parseArgs(argv) {
	const a = { rev: 'HEAD', gpus: DEFAULT_GPUS, out: 'bench/public/aic', fetched: null, k3sim: null, git: null }
	for (let i = 0; i < argv.length; i++) {
		const k = argv[i], v = () => {
			if (i + 1 >= argv.length)
				throw new Error(`missing value for '${k}'`)
			return argv[++i]
		}
		if (k === '--git') a.git = v()
		else if (k === '--rev') a.rev = v()
		else if (k === '--gpus') a.gpus = v().split(',')
		else if (k === '--out') a.out = v()
		else if (k === '--fetched') a.fetched = v()
		else if (k === '--k3sim') a.k3sim = v()
		else if (k === '-h' || k === '--help') {
			process.stdout.write(fs.readFileSync(new URL(import.meta.url)).toString().split('\n')
				.filter((l) => l.startsWith('//')).slice(0, 12).map((l) => l.slice(3)).join('\n') + '\n')
			process.exit(0)
		} else throw new Error(`unknown option '${k}'; see --help`)
	}
	if (!a.git)
		throw new Error('--git GITDIR is required (a clone of ai-dynamo/aiconfigurator)')
	return a
}

const git = (dir, ...args) => execFileSync('git', ['-C', dir, ...args], { maxBuffer: 1 << 30 })

// The cell as CSV: quoted when it holds a comma or a quote (quotes doubled are not used: none of
// the values written has one, which csvCell checks).
function csvCell(s) {
	s = String(s)
	if (s.includes('"') || s.includes('\n'))
		throw new Error(`value with a quote or newline: ${s}`)
	return s.includes(',') ? `"${s}"` : s
}

const fmt = (x) => Number(x.toPrecision(6)).toExponential()

async function readTable(gitdir, commit, p) {
	const buf = git(gitdir, 'show', `${commit}:${p}`)
	if (buf.subarray(0, 4).toString() !== 'PAR1')
		throw new Error(`${p}: not a parquet file (a Git LFS pointer?)`)
	const file = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength)
	const rows = await parquetReadObjects({ file, compressors })
	return rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === 'bigint' ? Number(v) : v])))
}

async function convertGpu(args, commit, files, gpu) {
	const outDir = path.join(args.out, gpu)
	fs.mkdirSync(outDir, { recursive: true })
	const written = []
	for (const src of SOURCES) {
		const ver = src.prefer.find((v) => files.has(`${DATA}/${gpu}/${src.dir}/${v}/${src.file}`))
		if (!ver) {
			written.push({ src, missing: true })
			continue
		}
		const table = `${gpu}/${src.dir}/${ver}/${src.file}`
		const rows = (await readTable(args.git, commit, `${DATA}/${table}`)).filter((r) => src.keep(r))
		if (!rows.length) {
			written.push({ src, table, empty: true })
			continue
		}
		// one point per op: duplicates (re-collections appended to a table) give the median
		const byOp = new Map()
		for (const r of rows) {
			const op = src.op(r, gpu)
			const t = src.time_s(r)
			if (!(t > 0) || !Number.isFinite(t))
				continue
			if (!byOp.has(op))
				byOp.set(op, { r, times: [] })
			byOp.get(op).times.push(t)
		}
		const lines = [
			`# ${REPO} ${DATA}/${table} @ ${commit} (${LICENSE}); converted by tools/aic/convert.mjs`,
			`# ${src.what}; reps = table rows merged (their median); p10/p90 not published (each row is a mean)`,
			HEADER,
		]
		for (const [op, { r, times }] of byOp) {
			times.sort((a, b) => a - b)
			const n = times.length
			const med = n % 2 ? times[(n - 1) / 2] : 0.5 * (times[n / 2 - 1] + times[n / 2])
			lines.push([op, n, fmt(med), '', '', r.device, r.framework, r.version, r.kernel_source, table, commit,
				LICENSE, src.mapping(r)].map(csvCell).join(','))
		}
		const out = path.join(outDir, `${src.name}.csv`)
		fs.writeFileSync(out + '.tmp', lines.join('\n') + '\n')
		fs.renameSync(out + '.tmp', out)
		written.push({ src, table, out, rows: rows.length, points: byOp.size,
			device: rows[0].device, framework: rows[0].framework, version: rows[0].version })
	}
	return written
}

function readme(args, commit, date, results) {
	const L = []
	L.push('# Public kernel measurements: AIConfigurator\'s collected perf database', '')
	L.push('Generated by `tools/aic/convert.mjs` (do not edit by hand; rerun it). Measured figures, with their source:', '')
	L.push(`- source: https://${REPO}, files under \`${DATA}/<gpu>/\``)
	L.push(`- commit: \`${commit}\` (commit date ${date}); fetched ${args.fetched || '(not given)'}`)
	L.push(`- license: ${LICENSE} (Copyright NVIDIA CORPORATION & AFFILIATES; the figures are redistributed with this attribution; no code of the tool is copied)`)
	L.push('- times: AIConfigurator stores one mean latency per row (CUDA-graph replay or nccl-tests average); ' +
		'`median_s` is that time (the median when a table holds a shape twice), `p10_s`/`p90_s` are empty.')
	L.push('', 'Columns: `op,reps,median_s,p10_s,p90_s` as `k3sim calibrate` and `k3sim trace validate` read them, then ' +
		'`device,framework,version,kernel_source,table,source_commit,license,mapping` (ignored by k3sim; ' +
		'`mapping` is `exact` or `approx:` with the tags below).', '')
	L.push('## Files', '', '| GPU | file | k3sim op | table | points | rows read |', '|---|---|---|---|---:|---:|')
	for (const [gpu, ws] of results)
		for (const w of ws) {
			if (w.missing)
				L.push(`| ${gpu} | — | ${w.src.kind} | no ${w.src.dir}/{${w.src.prefer.join(',')}}/${w.src.file} in this snapshot | 0 | 0 |`)
			else if (w.empty)
				L.push(`| ${gpu} | — | ${w.src.kind} | ${w.table}: no rows of this selection | 0 | 0 |`)
			else
				L.push(`| ${gpu} | [${w.src.name}.csv](${gpu}/${w.src.name}.csv) | ${w.src.kind} | \`${w.table}\` | ${w.points} | ${w.rows} |`)
		}
	L.push('', '## What each file holds', '')
	for (const s of SOURCES)
		L.push(`- \`${s.name}\` (${s.kind}): ${s.what}.`)
	L.push('', `Subsamples (the grid structure is kept): GEMM m in {${[...GEMM_M].join(', ')}}, n and k in ` +
		`{${[...GEMM_NK].join(', ')}} (of 74 m x 22 n x 22 k); MLA heads per GPU in {${[...MLA_HEADS].join(', ')}} ` +
		'(of 1..128), every batch and length. The other tables are whole.', '')
	L.push('## Mapping tags', '')
	L.push('- `fp8-block-scales-as-fp8`: DeepGEMM-style 1x128 / 128x128 block-scaled FP8; k3sim has one FP8 GEMM dtype.')
	L.push('- `nvfp4-as-mxfp4`: NVFP4 (16-element groups, E4M3 scales) counted as MXFP4 (32-element groups, E8M0).')
	L.push('- `fused-moe-as-grouped-gemm`: a whole fused MoE layer (gate/up, activation, down, token permute) as one ' +
		'grouped GEMM with equal FLOPs and weight bytes: m = tokens x top_k, n = 3 x inter / TP, k = hidden, ' +
		'touched = min(experts, m).')
	L.push('- `ranks-from-node-size`: DeepEP tables record node_num = 1; ranks = GPUs per node (8; GB200 4).')
	L.push('- `dispatch-dtype-fp8-or-bf16-by-build`: DeepEP normal dispatch is FP8 when DeepEP was built for SM90, BF16 otherwise; the table does not say.')
	L.push('- `fp8-cache-layout`: FP8 latent cache without FlashMLA\'s per-128 scales (k3sim kv=fp8 counts 656 B/token).')
	L.push('- `absorbed-prefill-bytes`: prefill run absorbed (576/512 dims over one latent); FLOPs match dqk=576 dv=512, k3sim\'s bytes count per-head K/V.')
	L.push('- `chain-verify-writes-intermediate-states`: speculative verify keeping every intermediate state; k3sim\'s t > 1 decode models verify + replay.')
	L.push('', '## Tables not converted', '')
	for (const [t, why] of NOT_CONVERTED)
		L.push(`- ${t}: ${why}.`)
	return L.join('\n') + '\n'
}

function check(k3sim, results) {
	// every op parses: k3sim trace validate reads each file with the same op parser as `k3sim op`
	for (const [, ws] of results)
		for (const w of ws)
			if (w.out)
				execFileSync(k3sim, ['trace', 'validate', w.out, '--hw', 'h200', '--json'], { stdio: ['ignore', 'ignore', 'inherit'] })
}

async function main() {
	const args = parseArgs(process.argv.slice(2))
	const commit = git(args.git, 'rev-parse', `${args.rev}^{commit}`).toString().trim()
	const date = git(args.git, 'show', '-s', '--format=%cs', commit).toString().trim()
	const files = new Set(git(args.git, 'ls-tree', '-r', '--name-only', commit, `${DATA}/`).toString().split('\n'))
	const results = []
	for (const gpu of args.gpus) {
		if (![...files].some((f) => f.startsWith(`${DATA}/${gpu}/`)))
			throw new Error(`no ${DATA}/${gpu}/ at ${commit}`)
		results.push([gpu, await convertGpu(args, commit, files, gpu)])
	}
	fs.writeFileSync(path.join(args.out, 'README.md'), readme(args, commit, date, results))
	if (args.k3sim)
		check(args.k3sim, results)
	for (const [gpu, ws] of results)
		for (const w of ws)
			if (w.out)
				console.log(`${w.out}: ${w.points} points from ${w.rows} rows of ${w.table}`)
}

main().catch((e) => {
	console.error(`convert.mjs: error: ${e.message}`)
	process.exit(1)
})
